"""Crowd studies that pay the right people (issue 26 §1-6) on a real ViLPAct pool in SQLite: gold scored when
submitted (first, middle and last task, and after the study closed), a fair qualification, studies that cannot
pay nobody, the report's states, links that cannot be farmed, and Prolific's submission events."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest
from campaign_helpers import (
    add_people,
    archived_mturk_study,
    context_from_template,
    last_sequences,
    release_as_reference,
    template_database,
)

from backend.accounts import sessions
from backend.campaigns import gold, links, prolific, quality, report, studies, workers
from backend.campaigns.instructions import INSTRUCTIONS
from backend.campaigns.qualification import draw_quiz, pool_for
from backend.errors import StudyFull, StudyLinkRefused, TooManyArrivals, ValidationError, WebhookRefused
from backend.intents import service
from tests.conftest import VILPACT_DATA

GOOD = ("S/He wants to have a drink", "S/He is thirsty")
SECRET = "prolific-workspace-secret"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("integrity-template"), VILPACT_DATA, annotators_per_sequence=2)


def make(template, tmp_path, **settings):
    values = {"speed_floor_share": 0.0, "prolific_webhook_secret": SECRET, **settings}
    ctx = context_from_template(template, tmp_path / "data", **values)
    add_people(ctx.database, ["w1", "w2"])
    return ctx


def new_study(ctx, **overrides):
    fields = {"name": "Pilot", "kind": "intents", "tasks_per_worker": 3, "completion_code": "DONE42",
              "screenout_code": "OUT7", "qualification_size": 0, "gold_rate": ctx.settings.gold_rate,
              **overrides}  # fmt: skip
    return studies.create_study(ctx.database, "boss", **fields)


def visit(ctx, study, pid, **params):
    sig = links.study_signature(ctx.database.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    return links.verify_visit(ctx.database, study, {study.worker_param: pid, "sig": sig, **params})


def arrive(ctx, study, pid, address="198.51.100.7", **params):
    return workers.arrive(ctx.database, ctx.settings, study, visit(ctx, study, pid, **params), address)


def pid_of(n: int) -> str:
    return f"{n:024x}"


def do_task(ctx, username, answer=GOOD) -> dict:
    task = service.next_intent_task(ctx.database, ctx.settings, username)["task"]
    assert task is not None, f"{username} got no task"
    return service.submit_intents(ctx.database, ctx.settings, username, task["sequence_id"], *answer)


# -- 1. gold is scored when it is submitted --------------------------------------------------------------------
def _pids_with_gold_at(study_id: int, rate: float, tasks: int) -> dict[int, str]:
    """A Prolific id per gold position 1..tasks (the position depends on the worker's name: gold.phase_of)."""
    found: dict[int, str] = {}
    for n in range(1, 500):
        name = workers.worker_username(study_id, pid_of(n))
        positions = [p for p in range(1, tasks + 1) if gold.gold_due(p, rate, gold.phase_of(name))]
        if len(positions) == 1 and positions[0] not in found:
            found[positions[0]] = pid_of(n)
        if len(found) == tasks:
            return found
    raise AssertionError("no worker ids for every gold position")


def test_gold_as_the_first_a_middle_and_the_last_task_is_scored_at_submit(template, tmp_path):
    ctx = make(template, tmp_path, gold_rate=1 / 3, gold_agreement_threshold=0.0)
    release_as_reference(ctx.database, gold_ids := last_sequences(ctx.database, 3))
    gold.add_gold(ctx.database, "rev", "intent", gold_ids)
    study = new_study(ctx, places=10)
    for position, pid in _pids_with_gold_at(study.id, 1 / 3, 3).items():
        worker = arrive(ctx, study, pid).worker
        for done in range(1, 4):
            reply = do_task(ctx, worker.username)
            scored = ctx.database.query(
                "SELECT outcome, judged_by FROM gold_answers WHERE annotator = ? AND outcome IS NOT NULL",
                (worker.username,),
            )
            # right after the submit, before any other hand-out: scored once gold was submitted
            assert len(scored) == (1 if done >= position else 0), (position, done)
        assert reply["task"] is None and reply["study"]["status"] == "finished"  # the last task: no hand-out after it
        assert scored == [{"outcome": "correct", "judged_by": "key"}]
        row = next(
            r for r in report.worker_report(ctx.database, "boss", str(study.id)) if r["username"] == worker.username
        )
        assert (row["gold_judged"], row["gold_correct"], row["gold_accuracy"], row["tasks_done"], row["submitted"]) == (
            1, 1, 1.0, 3, 2,
        ), position  # fmt: skip


def test_gold_submitted_after_the_study_closed_is_scored_and_seen_by_worker_quality(template, tmp_path):
    ctx = make(template, tmp_path, gold_rate=1 / 3, gold_agreement_threshold=1.0)  # below: a reviewer judges it
    release_as_reference(ctx.database, gold_ids := last_sequences(ctx.database, 3))
    gold.add_gold(ctx.database, "rev", "intent", gold_ids)
    study = new_study(ctx, places=10)
    worker = arrive(ctx, study, _pids_with_gold_at(study.id, 1 / 3, 3)[1]).worker
    task = service.next_intent_task(ctx.database, ctx.settings, worker.username)["task"]
    assert task["sequence_id"] in gold_ids
    studies.close_study(ctx.database, "boss", study.id)  # the worker still holds the gold task
    service.submit_intents(ctx.database, ctx.settings, worker.username, task["sequence_id"], *GOOD)
    assert [p["annotator"] for p in gold.pending_judgments(ctx.database, "rev")] == [worker.username]
    row = report.worker_report(ctx.database, "boss", str(study.id))[0]
    assert (row["state"], row["gold_pending"]) == ("finished", 1)


def test_the_pause_rule_sees_a_wrong_gold_answer_at_once(tmp_path):
    from backend.planning.validation import next_question, submit_check
    from tests.planning_helpers import planning_context

    ctx = planning_context(tmp_path, VILPACT_DATA, gold_rate=0.5, speed_floor_seconds=0.0, gold_min_judged=1,
                           gold_accuracy_threshold=1.0, quality_pause_after=1)  # fmt: skip
    add_people(ctx.database, ["p1"])
    gold.add_gold(ctx.database, "rev", "planning", gold.candidates(ctx.database, "rev", "planning", limit=3))
    while True:
        task = next_question(ctx.database, "p1", 20, ctx.settings)
        wrong = (task.question.answer_index + 1) % len(task.question.choices)
        submit_check(ctx.database, "p1", task.question.id, wrong, settings=ctx.settings)
        if ctx.database.scalar("SELECT count(*) FROM gold_answers WHERE annotator = 'p1'"):
            break
    # the gold answer was the worker's last so far: scored, flagged and paused in its own submit
    assert ctx.database.scalar("SELECT outcome FROM gold_answers WHERE annotator = 'p1'") == "wrong"
    assert ctx.database.scalar("SELECT state FROM worker_quality WHERE username = 'p1'") == "paused"
    assert [f["reason"] for f in quality.flags(ctx.database, "rev")] == ["gold_accuracy"]


# -- 2. a fair qualification -------------------------------------------------------------------------------
def test_every_rule_the_quiz_tests_is_in_the_instructions_the_tab_shows():
    from components.intents import INSTRUCTIONS as TAB_TEXT
    from components.planning.views import CHECK_HELP
    from components.vqa import ANSWER_HELP

    assert (TAB_TEXT, CHECK_HELP, ANSWER_HELP) == tuple(
        INSTRUCTIONS[k].markdown() for k in ("intents", "planning", "vqa")
    )
    for kind in studies.KINDS:
        guide = INSTRUCTIONS[kind]
        for item in pool_for(kind):
            assert item.rules, item.id
            for rule in item.rules:
                assert guide.rule(rule).text in guide.markdown()
    intents = INSTRUCTIONS["intents"].html()
    assert "Do not repeat an action name" in intents and "something real" in intents and "<script" not in intents


def test_a_failed_try_is_explained_and_only_the_last_fail_screens_out(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, qualification_size=5, pass_mark=0.8, places=10)
    worker = arrive(ctx, study, pid_of(1)).worker
    first_items = workers.quiz_for(study, worker)
    wrong = {item.id: str((item.answer + 1) % len(item.options)) for item in first_items}
    one = workers.take_qualification(ctx.database, worker.username, study.id, wrong)
    assert (one.worker.status, one.tries_left, one.result.right) == ("started", 1, 0)
    assert len(one.mistakes) == 5 and all(m["rules"] and m["right"] != m["chosen"] for m in one.mistakes)
    view = workers.my_study(ctx.database, worker.username)
    assert view["tries_left"] == 1 and view["mistakes"] == one.mistakes
    second_items = workers.quiz_for(study, one.worker)
    assert [i.id for i in second_items] == [i.id for i in draw_quiz("intents", 5, study.id, pid_of(1), 2)]
    assert [i.id for i in second_items] != [i.id for i in first_items]  # a new draw for the new try
    right = {item.id: str(item.answer) for item in second_items}
    two = workers.take_qualification(ctx.database, worker.username, study.id, right)
    assert (two.worker.status, two.result.passed) == ("qualified", True)
    # one try only: the first fail is the final one, and the page says why
    strict = new_study(ctx, name="Strict", qualification_size=3, qualification_attempts=1, places=10)
    other = arrive(ctx, strict, pid_of(2)).worker
    final = workers.take_qualification(ctx.database, other.username, strict.id, {})
    assert (final.worker.status, final.tries_left, final.worker.quiz_attempts) == ("screened_out", 0, 1)
    assert final.worker.quiz_feedback and len(final.worker.quiz_feedback) == 3
    with pytest.raises(ValidationError, match="not taken again"):
        workers.take_qualification(ctx.database, other.username, strict.id, {})


# -- 3. studies that cannot pay nobody -------------------------------------------------------------------------
def test_codes_are_required_and_open_names_unique(template, tmp_path):
    ctx = make(template, tmp_path)
    with pytest.raises(ValidationError, match="completion code"):
        new_study(ctx, completion_code="")
    with pytest.raises(ValidationError, match="screen-out code"):
        new_study(ctx, screenout_code="", qualification_size=3)
    with pytest.raises(ValidationError, match="must differ"):
        new_study(ctx, screenout_code="DONE42")
    with pytest.raises(ValidationError, match="tried 1 to 5 times"):
        new_study(ctx, qualification_attempts=0)
    first = new_study(ctx, screenout_code="")  # no qualification: no screen-out code needed
    with pytest.raises(ValidationError, match="already named"):
        new_study(ctx, name="  pilot ")  # the same name, another case and spaces
    studies.close_study(ctx.database, "boss", first.id)
    again = new_study(ctx)  # the name is free again once the first is closed
    assert (again.name, again.places, again.qualification_attempts) == ("Pilot", None, 2)
    listed = {s["id"]: s for s in studies.list_studies(ctx.database, "boss")}
    assert (listed[again.id]["completion_code"], listed[again.id]["status"]) == ("DONE42", "open")


def test_closing_says_what_happens_to_workers_mid_study(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=10)
    arrive(ctx, study, pid_of(1))
    preview = studies.closing_preview(ctx.database, "boss", study.id)
    assert preview["mid_study"] == 1 and preview["working"] == 1
    assert "cannot be undone" in preview["effect"] and "completion code" in preview["effect"]
    assert studies.get_study(ctx.database, study.id).status == "open"  # a preview closes nothing


# -- 4. the report: states, completion time, CSV ---------------------------------------------------------------
def test_report_states_for_each_kind_of_worker(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, name="=HYPERLINK(\"x\")", qualification_size=3, qualification_attempts=1, places=10,
                      tasks_per_worker=1)  # fmt: skip
    qualifying = arrive(ctx, study, pid_of(1)).worker
    working, finished, screened, gone, blocked = (arrive(ctx, study, pid_of(n)).worker for n in (2, 3, 4, 5, 6))
    for w in (working, finished, gone, blocked):
        items = workers.quiz_for(study, w)
        workers.take_qualification(ctx.database, w.username, study.id, {i.id: str(i.answer) for i in items})
    workers.take_qualification(ctx.database, screened.username, study.id, {})
    do_task(ctx, finished.username)
    workers.leave_study(ctx.database, gone.username, study.id)
    quality.block(ctx.database, "boss", blocked.username, "copies")
    rows = {r["username"]: r for r in report.worker_report(ctx.database, "boss", str(study.id))}
    assert [rows[w.username]["state"] for w in (qualifying, working, finished, screened, gone, blocked)] == [
        "qualifying", "working", "finished", "screened out", "returned", "blocked"]  # fmt: skip
    done = rows[finished.username]
    assert done["completion_minutes"] is not None and done["finished_at"] and done["study_id"] == study.id
    assert rows[qualifying.username]["completion_minutes"] is None
    parsed = list(csv.DictReader(io.StringIO(report.report_csv(list(rows.values())))))
    assert {p["study"] for p in parsed} == {'\'=HYPERLINK("x")'}  # a formula cell is neutralised
    assert {p["platform_worker_id"] for p in parsed} == {pid_of(n) for n in range(1, 7)}


# -- 5. links that cannot be farmed ----------------------------------------------------------------------------
def test_worker_ids_must_have_the_platforms_shape(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=10)
    assert visit(ctx, study, "5F00AA11BB22CC33DD44EE55").worker_id == "5f00aa11bb22cc33dd44ee55"  # one id, any case
    for bad in ("PID1", "5f00aa11bb22cc33dd44ee5", "5f00aa11bb22cc33dd44ee555", "5f00aa11bb22cc33dd44ee5g"):
        with pytest.raises(StudyLinkRefused, match="24 letters and digits"):
            visit(ctx, study, bad)
    hit = archived_mturk_study(ctx.database)
    assert visit(ctx, hit, "A1B2C3D4E5F6G7").worker_id == "A1B2C3D4E5F6G7"
    for bad in ("a1b2c3d4", "B1B2C3D4", "A", "A" + "1" * 64, "A12 34"):
        with pytest.raises(StudyLinkRefused, match="Worker ID"):
            visit(ctx, hit, bad)


def test_new_ids_are_limited_per_address_and_returning_workers_are_not(template, tmp_path):
    ctx = make(template, tmp_path, study_arrivals_per_address=3, study_arrival_window_minutes=30)
    study = new_study(ctx, places=100)
    for n in range(3):
        arrive(ctx, study, pid_of(n), address="203.0.113.5")
    with pytest.raises(TooManyArrivals, match="come back after") as refused:
        arrive(ctx, study, pid_of(99), address="203.0.113.5")
    assert 0 < refused.value.retry_after <= 30 * 60
    assert ctx.database.scalar("SELECT count(*) FROM study_workers") == 3  # the refused id was not let in
    with pytest.raises(TooManyArrivals):  # and a refused arrival counts too: trying again does not help
        arrive(ctx, study, pid_of(98), address="203.0.113.5")
    assert ctx.database.scalar("SELECT count(*) FROM study_arrivals WHERE outcome = 'limited'") == 2
    assert arrive(ctx, study, pid_of(0), address="203.0.113.5").token  # a worker coming back is let in
    assert arrive(ctx, study, pid_of(99), address="203.0.113.6").first_visit  # another address has its own limit
    other = new_study(ctx, name="Other", places=100)
    assert arrive(ctx, other, pid_of(50), address="203.0.113.5").first_visit  # and so has another study


def test_places_hold_the_study_and_free_up_as_workers_end(template, tmp_path):
    """Only workers who started work hold places (issue 40 §1): arriving and the quiz take none."""
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=2, qualification_size=3)
    waiting = [arrive(ctx, study, pid_of(n)).worker for n in (1, 2, 3)]  # three in the quiz: no place held yet
    first, second = (qualify(ctx, study, worker) for worker in waiting[:2])
    assert first.placed_at and second.placed_at
    with pytest.raises(StudyFull, match="every place") as full:  # a newcomer now: the full page at the door
        arrive(ctx, study, pid_of(4))
    assert full.value.return_link == study.return_link("OUT7")
    late = qualify(ctx, study, waiting[2])  # passed when the last place had gone: turned away, screen-out code
    assert (late.status, late.placed_at, bool(late.turned_away_at)) == ("screened_out", None, True)
    assert studies.study_stats(ctx.database, "boss", study.id)["full"] == 1
    workers.leave_study(ctx.database, first.username, study.id)
    assert arrive(ctx, study, pid_of(4)).first_visit  # a place is free again


def qualify(ctx, study, worker):
    keys = {item.id: str(item.answer) for item in workers.quiz_for(study, worker)}
    return workers.take_qualification(ctx.database, worker.username, study.id, keys).worker


def test_without_a_number_places_are_what_the_pool_needs(template, tmp_path):
    """By hand: 3 open sequences with N = 2 are 6 slots; 2 tasks per worker: 3 placed workers owe all 6, a 4th
    waits. Without a qualification a worker takes their place with their first task."""
    ctx = make(template, tmp_path)
    with ctx.database.write() as db:
        keep = [r[0] for r in db.conn.execute("SELECT item_id FROM tasks WHERE kind = 'intent' ORDER BY rowid LIMIT 3")]
        db.conn.execute(f"DELETE FROM tasks WHERE kind = 'intent' AND item_id NOT IN ({','.join('?' * 3)})", keep)
    study = new_study(ctx, tasks_per_worker=2)
    names = [arrive(ctx, study, pid_of(n)).worker.username for n in range(3)]
    for name in names:
        assert service.next_intent_task(ctx.database, ctx.settings, name)["task"] is not None
    with pytest.raises(StudyFull):
        arrive(ctx, study, pid_of(3))
    do_task(ctx, names[0])  # one slot filled: the three now owe 5 of the 5 left; still full
    with pytest.raises(StudyFull):
        arrive(ctx, study, pid_of(3))
    workers.leave_study(ctx.database, names[1], study.id)  # returned: owes nothing, 2 slots for a newcomer
    assert arrive(ctx, study, pid_of(3)).first_visit


def test_one_live_session_per_worker_id(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=10)
    first = arrive(ctx, study, pid_of(1)).token
    second = arrive(ctx, study, pid_of(1), address="198.51.100.8").token
    assert sessions.user_for(ctx.database, first) is None
    assert sessions.user_for(ctx.database, second) == workers.worker_username(study.id, pid_of(1))


# -- 6. Prolific's submission events ---------------------------------------------------------------------------
def signed(body: dict, *, secret: str = SECRET, at: float | None = None, event_id: str = "evt-1") -> tuple[dict, bytes]:
    raw = json.dumps(body).encode()
    stamp = str(int(time.time() if at is None else at))
    return {prolific.SIGNATURE_HEADER: prolific.signature(secret, stamp, raw), prolific.TIMESTAMP_HEADER: stamp,
            prolific.EVENT_ID_HEADER: event_id}, raw  # fmt: skip


def event(pid: str, status: str, submission: str = "SUB1") -> dict:
    return {
        "event_type": "submission.status.change",
        "resource_id": submission,
        "participant_id": pid,
        "status": status,
    }


def test_a_returned_submission_frees_the_lease_at_once_and_twice_changes_nothing(template, tmp_path):
    ctx = make(template, tmp_path)
    db = ctx.database
    study = new_study(ctx, places=10)
    worker = arrive(ctx, study, pid_of(1), SESSION_ID="SUB1").worker
    held = service.next_intent_task(db, ctx.settings, worker.username)["task"]["sequence_id"]
    assert service.next_intent_task(db, ctx.settings, "w1")["task"]["sequence_id"] == held  # N = 2: one slot left
    headers, raw = signed(event(pid_of(1), "RETURNED"))
    done = prolific.handle(db, ctx.settings, headers, raw, "192.0.2.1")
    assert done["outcome"] == "returned (RETURNED)" and done["worker"] == worker.username
    assert service.next_intent_task(db, ctx.settings, "w2")["task"]["sequence_id"] == held  # the freed slot, now
    row = report.worker_report(db, "boss", str(study.id))[0]
    assert (row["state"], row["platform_status"]) == ("returned", "RETURNED")
    before = db.scalar("SELECT count(*) FROM audit_log")
    again = prolific.handle(db, ctx.settings, headers, raw, "192.0.2.1")  # Prolific's retry: the same X-Event-ID
    assert again["duplicate"] and db.scalar("SELECT count(*) FROM audit_log") == before


def test_forged_and_replayed_events_are_refused_and_logged(template, tmp_path):
    ctx = make(template, tmp_path)
    db = ctx.database
    study = new_study(ctx, places=10)
    arrive(ctx, study, pid_of(1), SESSION_ID="SUB1")
    forged_headers, raw = signed(event(pid_of(1), "RETURNED"), secret="not-the-secret")
    stale_headers, stale_raw = signed(event(pid_of(1), "RETURNED"), at=time.time() - 3600, event_id="evt-old")
    for headers, body, words in ((forged_headers, raw, "forged"), (stale_headers, stale_raw, "replayed"),
                                 ({}, raw, "unsigned")):  # fmt: skip
        with pytest.raises(WebhookRefused, match=words) as refused:
            prolific.handle(db, ctx.settings, headers, body, "192.0.2.66")
        assert refused.value.status == 401
    logged = db.query("SELECT detail FROM audit_log WHERE action = 'prolific.refused'")
    assert len(logged) == 3 and all("192.0.2.66" in r["detail"] for r in logged)
    assert db.scalar("SELECT status FROM study_workers") == "qualified"  # nothing changed
    unset = ctx.settings.replace(prolific_webhook_secret="")
    with pytest.raises(WebhookRefused) as off:
        prolific.handle(db, unset, *signed(event(pid_of(1), "RETURNED")), "192.0.2.1")
    assert off.value.status == 503
    # Prolific's own example signs json.dumps of the parsed body: accepted as well
    compact = json.dumps(event(pid_of(1), "AWAITING REVIEW"), separators=(",", ":")).encode()
    stamp = str(int(time.time()))
    headers = {prolific.SIGNATURE_HEADER: prolific.signature(SECRET, stamp, json.dumps(json.loads(compact)).encode()),
               prolific.TIMESTAMP_HEADER: stamp, prolific.EVENT_ID_HEADER: "evt-compact"}  # fmt: skip
    assert prolific.handle(db, ctx.settings, headers, compact, "192.0.2.1")["outcome"] == "recorded AWAITING REVIEW"


def test_a_rejected_submission_moves_unreviewed_answers_aside(template, tmp_path):
    ctx = make(template, tmp_path)
    db = ctx.database
    study = new_study(ctx, places=10, tasks_per_worker=2)
    worker = arrive(ctx, study, pid_of(1), SESSION_ID="SUB9").worker
    first = do_task(ctx, worker.username)["stored"]["sequence_id"]
    assert service.next_intent_task(db, ctx.settings, "w1")["task"]["sequence_id"] == first
    service.submit_intents(db, ctx.settings, "w1", first, *GOOD)  # N = 2: complete
    do_task(ctx, worker.username)  # the quota: finished
    done = prolific.handle(db, ctx.settings, *signed(event(pid_of(1), "REJECTED", "SUB9"), event_id="e9"), "192.0.2.1")
    assert done["outcome"] == "recorded REJECTED; 2 answer(s) moved aside"
    assert db.scalar("SELECT status FROM tasks WHERE kind = 'intent' AND item_id = ?", (first,)) == "open"  # N kept
    assert db.scalar("SELECT count(*) FROM returned_submissions WHERE annotator = ?", (worker.username,)) == 2
    row = report.worker_report(db, "boss", str(study.id))[0]
    assert (row["state"], row["platform_status"], row["submitted"]) == ("finished", "REJECTED", 0)
    unknown = prolific.handle(db, ctx.settings, *signed(event(pid_of(7), "RETURNED", "NOPE"), event_id="e10"), "x")
    assert unknown["outcome"] == "ignored: no study worker with this submission"


def test_a_gold_item_freed_by_signing_out_comes_back_first(template, tmp_path):
    """Found by the browser journey: a worker logged out holding their gold item; when they came back the gold
    place had passed and they were never asked it. A gold item holds no slot of N, so it always waits for them."""
    from backend import assignment

    ctx = make(template, tmp_path, gold_rate=1 / 3)
    release_as_reference(ctx.database, gold_ids := last_sequences(ctx.database, 3))
    gold.add_gold(ctx.database, "rev", "intent", gold_ids)
    study = new_study(ctx, places=10)
    worker = arrive(ctx, study, _pids_with_gold_at(study.id, 1 / 3, 3)[1]).worker
    held = service.next_intent_task(ctx.database, ctx.settings, worker.username)["task"]["sequence_id"]
    assert held in gold_ids
    with ctx.database.write() as db:
        assert assignment.release_leases(db, worker.username) == 1  # what signing out does
    assert service.next_intent_task(ctx.database, ctx.settings, worker.username)["task"]["sequence_id"] == held
