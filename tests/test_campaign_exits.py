"""No worker stranded and exit paths that pay the right people (issue 40 §2, §4, §5), on a real ViLPAct pool.

Reserved tasks keep lab annotators off a study's last tasks; a worker who finds nothing free waits, then is paid
the partial-pay code for the work done; closing pays the completion code only for work done; the second try at
the qualification asks other questions; the gold rate is the study's; Mechanical Turk is archive-only; Connect
and a generic platform with its own id parameter link as their documentation says.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from campaign_helpers import add_people, archived_mturk_study, context_from_template, template_database

from backend.campaigns import gold, links, report, studies, waiting, workers
from backend.campaigns.qualification import draw_quiz, pool_for
from backend.errors import PermissionDenied, StudyLinkRefused, ValidationError
from backend.intents import service
from tests.conftest import VILPACT_DATA

GOOD = ("S/He wants to have a drink", "S/He is thirsty")
PIDS = [f"{0x5F00AA11BB22CC33DD440000 + i:024x}" for i in range(10)]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("exits-template"), VILPACT_DATA, annotators_per_sequence=2)


def make(template, tmp_path, **settings):
    ctx = context_from_template(template, tmp_path / "data", speed_floor_share=0.0, **settings)
    add_people(ctx.database, ["lab1", "lab2", "lab3"])
    return ctx


def keep_sequences(ctx, count: int) -> None:
    with ctx.database.write() as db:
        keep = [
            r[0]
            for r in db.conn.execute("SELECT item_id FROM tasks WHERE kind = 'intent' ORDER BY rowid LIMIT ?", (count,))
        ]
        db.conn.execute(f"DELETE FROM tasks WHERE kind = 'intent' AND item_id NOT IN ({','.join('?' * count)})", keep)


def new_study(ctx, **overrides):
    fields = {"name": "Pilot", "kind": "intents", "tasks_per_worker": 2, "completion_code": "DONE42",
              "screenout_code": "OUT7", "qualification_size": 0, **overrides}  # fmt: skip
    return studies.create_study(ctx.database, "boss", **fields)


def arrive(ctx, study, pid, **params):
    sig = links.study_signature(ctx.database.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    visit = links.verify_visit(ctx.database, study, {study.worker_param: pid, "sig": sig, **params})
    return workers.arrive(ctx.database, ctx.settings, study, visit, "198.51.100.7")


def take(ctx, username):
    return service.next_intent_task(ctx.database, ctx.settings, username)["task"]


def submit(ctx, username):
    task = take(ctx, username)
    assert task is not None, username
    return service.submit_intents(ctx.database, ctx.settings, username, task["sequence_id"], *GOOD)


# -- §4 reserved tasks ---------------------------------------------------------------------------------------
def test_lab_annotators_cannot_take_the_tasks_a_studys_places_need(template, tmp_path):
    """By hand: 2 sequences with N = 2 are 4 slots; a study with 2 places of 1 task reserves 2: lab annotators
    may take 2, the third lab request gets nothing, and both of the study's workers still get theirs."""
    ctx = make(template, tmp_path)
    keep_sequences(ctx, 2)
    study = new_study(ctx, places=2, tasks_per_worker=1)
    assert waiting.reservations(ctx.database)[0] == {
        "kind": "intents", "open": 4, "unclaimed": 4, "reserved": 2, "free": 2
    }  # fmt: skip
    assert take(ctx, "lab1") is not None and take(ctx, "lab2") is not None  # 2 of the 4 slots
    assert take(ctx, "lab3") is None  # the last two are the study's
    assert take(ctx, "lab1") is not None  # a lease already held is always shown again
    for pid in PIDS[:2]:
        worker = arrive(ctx, study, pid).worker
        submit(ctx, worker.username)
        assert workers.study_view(ctx.database, worker.username)["completion_code"] == "DONE42"


# -- §4 waiting, then paid for the work done -----------------------------------------------------------------
def test_a_worker_with_nothing_free_waits_then_gets_the_partial_pay_code(template, tmp_path):
    ctx = make(template, tmp_path, study_wait_minutes=5)
    keep_sequences(ctx, 1)  # one sequence, N = 2: two workers, three tasks each wanted
    study = new_study(ctx, tasks_per_worker=3, partial_code="PART9", places=2)
    first, second = (arrive(ctx, study, pid).worker for pid in PIDS[:2])
    submit(ctx, first.username)
    assert take(ctx, first.username) is None  # the only sequence is theirs already: nothing free
    state = waiting.wait(ctx.database, ctx.settings, first.username, study.id)
    assert state.state == "wait" and state.done == 1
    assert timedelta(minutes=4.9) < state.until - datetime.now(UTC) <= timedelta(minutes=5)
    assert waiting.wait(ctx.database, ctx.settings, first.username, study.id).until == state.until  # one clock
    with ctx.database.write() as db:  # the five minutes pass
        db.conn.execute(
            "UPDATE study_workers SET waiting_since = ? WHERE username = ?",
            ((datetime.now(UTC) - timedelta(minutes=6)).isoformat(), first.username),
        )
    paid = waiting.wait(ctx.database, ctx.settings, first.username, study.id)
    assert (paid.state, paid.code, paid.worker.status) == ("paid", "PART9", "finished")
    view = workers.study_view(ctx.database, first.username)
    assert view["completion_code"] == "PART9" and view["end_reason"] == "no task free after waiting 5 minutes"
    rows = {r["username"]: r for r in report.worker_report(ctx.database, "boss", str(study.id))}
    assert rows[first.username]["end_reason"] == "no task free after waiting 5 minutes"
    assert waiting.wait(ctx.database, ctx.settings, second.username, study.id).state == "go"  # theirs is free


# -- §5 closing pays the right people ------------------------------------------------------------------------
def test_closing_gives_the_completion_code_only_for_work_done(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, qualification_size=3, places=10)
    worked, idle, quizzing = (arrive(ctx, study, pid).worker for pid in PIDS[:3])
    for worker in (worked, idle):
        keys = {item.id: str(item.answer) for item in workers.quiz_for(study, worker)}
        workers.take_qualification(ctx.database, worker.username, study.id, keys)
    submit(ctx, worked.username)
    preview = studies.closing_preview(ctx.database, "boss", study.id)
    assert (preview["completion_on_close"], preview["screenout_on_close"]) == (1, 2)
    assert "1 worker(s) who did at least one task" in preview["effect"] and "screen-out code OUT7" in preview["effect"]
    studies.close_study(ctx.database, "boss", study.id)
    for worker in (worked, idle, quizzing):  # their next page or task brings them up to date
        workers.worker_in_study(ctx.database, worker.username, study.id)
    ended = {r["username"]: r for r in ctx.database.query("SELECT * FROM study_workers")}
    assert ended[worked.username]["status"] == "finished"
    assert workers.study_view(ctx.database, worked.username)["completion_code"] == "DONE42"
    for worker in (idle, quizzing):
        assert ended[worker.username]["status"] == "screened_out"
        assert ended[worker.username]["end_reason"] == workers.CLOSED_BEFORE_WORK
        view = workers.study_view(ctx.database, worker.username)
        assert (view["completion_code"], view["screenout_code"], view["closed_early"]) == (None, "OUT7", True)


# -- §4 the second try, the gold rate, the video floor -------------------------------------------------------
def test_the_second_try_asks_other_questions_where_the_pool_allows():
    size = len(pool_for("intents")) // 2
    first, second = (draw_quiz("intents", size, 3, "w", n) for n in (1, 2))
    assert not {i.id for i in first} & {i.id for i in second}
    third = draw_quiz("intents", size, 3, "w", 3)  # the pool is used up: some come back, all drawn again
    assert len(third) == size
    full = draw_quiz("intents", 5, 3, "w", 2)  # 8 questions, 5 a try: the 3 unasked and only 2 again
    assert len({i.id for i in full} - {i.id for i in draw_quiz("intents", 5, 3, "w", 1)}) == 3


def test_the_gold_rate_is_the_studys_and_lab_annotators_get_none(template, tmp_path):
    ctx = make(template, tmp_path)  # the server's gold_rate is 0
    study = new_study(ctx, gold_rate=0.5, places=5)
    worker = arrive(ctx, study, PIDS[0]).worker
    with ctx.database.write() as db:
        assert gold.gold_rate_for(db, ctx.settings, worker.username) == 0.5
        assert gold.gold_rate_for(db, ctx.settings, "lab1") == 0.0
    with pytest.raises(ValidationError, match="gold rate"):
        new_study(ctx, name="Other", gold_rate=1.0)


# -- §2 platforms -------------------------------------------------------------------------------------------
def test_mturk_is_archive_only_and_its_studies_keep_their_records(template, tmp_path):
    ctx = make(template, tmp_path)
    with pytest.raises(ValidationError, match="closed permanently on 2026-09-30"):
        new_study(ctx, platform="mturk")
    hit = archived_mturk_study(ctx.database)
    assert hit.archived and studies.study_stats(ctx.database, "boss", hit.id)["started"] == 0
    with pytest.raises(PermissionDenied, match="Mechanical Turk, which closed"):
        arrive(ctx, hit, "A1B2C3D4E5F6G7", assignmentId="ASG1", hitId="H1")
    assert "mturk" not in studies.open_platforms() and "connect" in studies.open_platforms()


def test_connect_links_and_ids_as_its_documentation_gives_them(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, platform="connect", places=5)
    assert (study.worker_param, study.study_param, study.session_param) == (
        "participantId",
        "projectId",
        "assignmentId",
    )
    assert (
        study.return_link("AB12CD34EF") == "https://connect.cloudresearch.com/participant/project/AB12CD34EF/complete"
    )
    link = links.link_for(ctx.database, "boss", study.id, "https://studio.example.org")["link"]
    assert (
        link == f"https://studio.example.org/study/{study.id}?sig=" + link.split("sig=")[1]
    )  # Connect appends its own
    arrival = arrive(ctx, study, "CR_worker-7", assignmentId="A9", projectId="P4")
    assert arrival.worker.params == {"participantId": "CR_worker-7", "assignmentId": "A9", "projectId": "P4"}
    with pytest.raises(StudyLinkRefused, match="Connect participant ID"):
        arrive(ctx, study, "two words")


def test_a_generic_platform_names_its_own_id_parameter_for_sona(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, platform="generic", worker_param="survey_code", return_url="https://dept.sona-systems.com/webstudy_credit.aspx?experiment_id=123&credit_token=tok&survey_code={code}")  # fmt: skip
    link = links.link_for(ctx.database, "boss", study.id, "https://studio.example.org")["link"]
    assert f"/study/{study.id}?survey_code=WORKER_ID&sig=" in link
    assert arrive(ctx, study, "48213").worker.platform_worker_id == "48213"
    for bad in ("sig", "1abc", "a b"):
        with pytest.raises(ValidationError, match="URL parameter name"):
            new_study(ctx, name=f"Bad {bad}", platform="generic", worker_param=bad)
    with pytest.raises(ValidationError, match="fixed by prolific"):
        new_study(ctx, name="P", worker_param="pid")
