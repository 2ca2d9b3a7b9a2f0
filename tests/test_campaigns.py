"""Crowd studies (issue 16 §1-2): signed study links, the qualification, quota and completion, roles."""

from __future__ import annotations

import pytest
from campaign_helpers import archived_mturk_study
from review_helpers import handed_ago

from backend.accounts import auth, sessions
from backend.campaigns import links, studies, workers
from backend.campaigns.qualification import GOLD, RULE_ITEMS, draw_quiz, pool_for, score_quiz
from backend.errors import PermissionDenied, StudyLinkRefused, ValidationError
from backend.intents import service
from backend.settings import Settings
from backend.storage import utcnow

GOOD = ("S/He wants to get ready for the day", "S/He is in a hurry")
PID, OTHER_PID = "5f00aa11bb22cc33dd44ee55", "60aa00bb11cc22dd33ee44ff"  # Prolific ids: 24 hex characters


def make_study(database, **overrides):
    auth.add_user(database, "boss", "admin", "password1") if auth.get_user(database, "boss") is None else None
    fields = {
        "name": "Pilot",
        "kind": "intents",
        "tasks_per_worker": 2,
        "completion_code": "DONE42",
        "screenout_code": "OUT7",
        "qualification_size": 5,
        "pass_mark": 0.8,
        "places": 50,  # most tests here run on an empty pool, which needs no workers (places_free)
        **overrides,
    }
    return studies.create_study(database, "boss", **fields)


def query(database, study, worker=PID, **extra):
    sig = links.study_signature(database.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    return {study.worker_param: worker, "STUDY_ID": "P-STUDY", "SESSION_ID": "S1", "sig": sig, **extra}


def right_answers(study, worker_id):
    return {item.id: str(item.answer) for item in draw_quiz(study.kind, study.qualification_size, study.id, worker_id)}


# -- links -----------------------------------------------------------------------------------------------
def test_a_signed_visit_is_accepted_and_keeps_the_platform_parameters(database):
    study = make_study(database)
    visit = links.verify_visit(database, study, {**query(database, study), "other": "x"})
    assert visit.worker_id == PID
    assert visit.params == {"PROLIFIC_PID": PID, "STUDY_ID": "P-STUDY", "SESSION_ID": "S1"}


def test_forged_altered_and_cross_study_links_are_refused(database):
    first, second = make_study(database), make_study(database, name="Second")
    good = query(database, first)
    with pytest.raises(StudyLinkRefused, match="not valid"):
        links.verify_visit(database, first, {**good, "sig": ""})  # no signature
    with pytest.raises(StudyLinkRefused, match="not valid"):
        links.verify_visit(database, first, {**good, "sig": "A" * 32})  # a guessed one
    altered = good["sig"][:-1] + ("A" if good["sig"][-1] != "A" else "B")
    with pytest.raises(StudyLinkRefused, match="not valid"):
        links.verify_visit(database, first, {**good, "sig": altered})
    with pytest.raises(StudyLinkRefused, match="not valid"):  # the first study's link used for the second
        links.verify_visit(database, second, good)
    assert links.verify_visit(database, second, query(database, second)).worker_id == PID


def test_a_visit_without_a_valid_worker_id_is_refused(database):
    study = make_study(database)
    for bad in ("", "two words", "x" * 129, "<script>"):
        with pytest.raises(StudyLinkRefused, match="PROLIFIC_PID"):
            links.verify_visit(database, study, query(database, study, worker=bad))


def test_the_link_carries_the_platform_placeholders_and_the_signature(database):
    study = make_study(database)
    made = links.link_for(database, "boss", study.id, "https://studio.example.org/")
    assert made["link"].startswith(f"https://studio.example.org/study/{study.id}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    assert "STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}&sig=" in made["link"]
    mturk = archived_mturk_study(database)  # Mechanical Turk appended its own parameters
    assert links.link_for(database, "boss", mturk.id, "http://h")["link"] == (
        f"http://h/study/{mturk.id}?sig={links.study_signature(database.scalar('SELECT secret FROM studies WHERE id = ?', (mturk.id,)), mturk.id)}"
    )
    with pytest.raises(ValidationError, match="public address"):
        links.link_for(database, "boss", study.id, "studio.example.org")


def test_mturk_preview_starts_nothing(database):
    study = archived_mturk_study(database)
    visit = links.verify_visit(database, study, query(database, study, worker="", assignmentId=links.MTURK_PREVIEW))
    assert visit.preview


# -- qualification ---------------------------------------------------------------------------------------
def test_rule_items_are_keyed_by_the_intent_rules():
    """By hand against ViLPAct's rules: a permitted form with content that does not copy an action, and two
    different intents, is acceptable; "Drinking from a cup" has no permitted form; "S/He is opening a door"
    copies the action "Opening a door"; two equal intents; "something" is no content."""
    keys = {item.id: item.options[item.answer] for item in RULE_ITEMS}
    assert keys == {
        "rule-good-drink": "Acceptable",
        "rule-form": "Not acceptable",
        "rule-copy": "Not acceptable",
        "rule-differ": "Not acceptable",
        "rule-content": "Not acceptable",
        "rule-good-leave": "Acceptable",
    }


def test_each_kind_has_gold_items_and_the_draw_is_fixed_per_worker():
    assert all(len(GOLD[kind]) >= 2 for kind in studies.KINDS)
    assert len(pool_for("intents")) == len(RULE_ITEMS) + len(GOLD["intents"])
    first = draw_quiz("intents", 5, 1, PID)
    assert [i.id for i in first] == [i.id for i in draw_quiz("intents", 5, 1, PID)]
    assert len({i.id for i in first}) == 5


def test_scoring_counts_unanswered_as_wrong_and_compares_the_mark_exactly():
    items = list(RULE_ITEMS[:5])
    right = {item.id: str(item.answer) for item in items}
    assert score_quiz(items, right, 1.0).passed
    four = {**right, items[0].id: "9"}
    assert score_quiz(items, four, 0.8).passed  # 4/5 == 0.8
    three = dict(list(right.items())[:3])
    result = score_quiz(items, three, 0.8)
    assert (result.right, result.asked, result.passed) == (3, 5, False)


def test_study_settings_are_checked(database):
    with pytest.raises(ValidationError, match="questions"):
        make_study(database, qualification_size=99)
    with pytest.raises(ValidationError, match="pass mark"):
        make_study(database, pass_mark=1.5)
    with pytest.raises(ValidationError, match="give a completion code"):
        make_study(database, platform="generic", completion_code="")
    with pytest.raises(ValidationError, match="completion code"):
        make_study(database, completion_code="a b")
    with pytest.raises(ValidationError, match="return URL"):
        make_study(database, return_url="javascript:alert(1)")


def test_study_management_needs_the_admin_role(database):
    study = make_study(database)
    auth.add_user(database, "ann", "annotator", "password1")
    for call in (
        lambda: studies.create_study(database, "ann", name="x", kind="intents", tasks_per_worker=1),
        lambda: studies.list_studies(database, "ann"),
        lambda: studies.close_study(database, "ann", study.id),
        lambda: studies.study_stats(database, None, study.id),
        lambda: links.link_for(database, "ann", study.id, "http://h"),
    ):
        with pytest.raises(PermissionDenied):
            call()


# -- workers: arrival, qualification, quota, completion ---------------------------------------------------
def arrive(database, study, worker=PID, address="127.0.0.1", settings=None):
    visit = links.verify_visit(database, study, query(database, study, worker=worker))
    return workers.arrive(database, settings or Settings(session_hours=1.0), study, visit, address)


def do_task(demo_ctx, username):
    reply = service.next_intent_task(demo_ctx.database, demo_ctx.settings, username)
    sequence = reply["task"]["sequence_id"]
    handed_ago(demo_ctx.database, sequence, 60)  # as if watched for a minute
    service.mark_viewed(demo_ctx.database, demo_ctx.settings, username, sequence, 1.0)
    return service.submit_intents(demo_ctx.database, demo_ctx.settings, username, sequence, *GOOD)


def test_first_visit_creates_a_passwordless_annotator_bound_to_the_study(database):
    study = make_study(database)
    first = arrive(database, study)
    assert first.first_visit and first.worker.status == "started"
    user = auth.get_user(database, first.worker.username)
    assert (user.role, user.source) == ("annotator", "study")
    assert not auth.authenticate(database, user.username, "")  # no password sign-in
    assert sessions.user_for(database, first.token) == user.username
    again = arrive(database, study)
    assert not again.first_visit and again.worker.id == first.worker.id
    assert database.scalar("SELECT count(*) FROM study_workers") == 1
    assert studies.study_stats(database, "boss", study.id)["started"] == 1


def test_an_unqualified_worker_gets_no_task(demo_ctx):
    study = make_study(demo_ctx.database)
    worker = arrive(demo_ctx.database, study).worker
    with pytest.raises(PermissionDenied, match="qualification first"):
        service.next_intent_task(demo_ctx.database, demo_ctx.settings, worker.username)


def test_failing_the_qualification_screens_out_for_good(demo_ctx):
    database = demo_ctx.database
    study = make_study(database)
    worker = arrive(database, study).worker
    first = workers.take_qualification(database, worker.username, study.id, {})  # one try of two
    assert (first.worker.status, first.result.right, first.tries_left, len(first.mistakes)) == ("started", 0, 1, 5)
    assert not auth.get_user(database, worker.username).disabled
    last = workers.take_qualification(database, worker.username, study.id, {})  # the last try fails too
    updated, result = last.worker, last.result
    assert (updated.status, result.right, result.passed, last.tries_left) == ("screened_out", 0, False, 0)
    assert auth.get_user(database, worker.username).disabled  # never enters the pool
    with pytest.raises(PermissionDenied):
        service.next_intent_task(database, demo_ctx.settings, worker.username)
    later = arrive(database, study)  # the same worker id comes back: nothing starts
    assert later.token is None and later.worker.status == "screened_out"


def test_quota_done_shows_the_completion_code_and_hands_out_nothing_more(demo_ctx):
    database = demo_ctx.database
    study = make_study(database, tasks_per_worker=2)
    worker = arrive(database, study).worker
    outcome = workers.take_qualification(
        database, worker.username, study.id, right_answers(study, worker.platform_worker_id)
    )
    assert outcome.worker.status == "qualified" and outcome.result.passed
    with pytest.raises(ValidationError, match="not taken again"):
        workers.take_qualification(database, worker.username, study.id, {})
    first = do_task(demo_ctx, worker.username)
    assert first["task"] is not None and first["study"]["done"] == 1
    assert first["study"]["completion_code"] is None
    second = do_task(demo_ctx, worker.username)
    assert second["task"] is None  # two of five demo sequences left untouched for others
    assert second["study"]["status"] == "finished" and second["study"]["completion_code"] == "DONE42"
    assert second["study"]["return_url"] == "https://app.prolific.com/submissions/complete?cc=DONE42"
    assert service.next_intent_task(database, demo_ctx.settings, worker.username)["task"] is None
    assert database.scalar("SELECT count(*) FROM assignments WHERE annotator = ?", (worker.username,)) == 2
    again = arrive(database, study)  # a finished worker id cannot start again
    assert again.token is None and again.worker.status == "finished"
    stats = studies.study_stats(database, "boss", study.id)
    assert (stats["started"], stats["qualified"], stats["finished"]) == (1, 1, 1)
    assert stats["median_minutes"] is not None


def test_closing_the_study_finishes_active_workers_and_refuses_new_ones(demo_ctx):
    database = demo_ctx.database
    study = make_study(database, qualification_size=0, tasks_per_worker=3)
    worker = arrive(database, study).worker
    assert worker.status == "qualified"  # no qualification: straight into the pool
    do_task(demo_ctx, worker.username)
    studies.close_study(database, "boss", study.id)
    reply = service.next_intent_task(database, demo_ctx.settings, worker.username)
    assert reply["task"] is None and reply["study"]["completion_code"] == "DONE42"
    with pytest.raises(PermissionDenied, match="closed"):
        arrive(database, study, worker=OTHER_PID)


def test_leaving_returns_the_worker_and_frees_their_lease(demo_ctx):
    database = demo_ctx.database
    study = make_study(database, qualification_size=0)
    worker = arrive(database, study).worker
    service.next_intent_task(database, demo_ctx.settings, worker.username)
    left = workers.leave_study(database, worker.username, study.id)
    assert left.status == "returned"
    live = "SELECT count(*) FROM assignments WHERE annotator = ? AND status = 'leased' AND expires_at > ?"
    assert database.scalar(live, (worker.username, "2000")) == 1  # it was handed a sequence ...
    assert database.scalar(live, (worker.username, utcnow())) == 0  # ... which is free again
    assert arrive(database, study).token is None
    assert studies.study_stats(database, "boss", study.id)["returned"] == 1


def test_the_time_limit_ends_a_worker(demo_ctx):
    database = demo_ctx.database
    study = make_study(database, qualification_size=0, time_limit_minutes=1)
    worker = arrive(database, study).worker
    database.conn.execute(
        "UPDATE study_workers SET started_at = '2020-01-01T00:00:00+00:00' WHERE id = ?", (worker.id,)
    )
    assert service.next_intent_task(database, demo_ctx.settings, worker.username)["task"] is None
    assert arrive(database, study).worker.status == "returned"


def test_a_worker_of_another_kind_gets_no_intent_task(demo_ctx):
    study = make_study(demo_ctx.database, kind="vqa", qualification_size=0)
    worker = arrive(demo_ctx.database, study).worker
    reply = service.next_intent_task(demo_ctx.database, demo_ctx.settings, worker.username)
    assert reply["task"] is None and reply["study"]["work_tab"] == "vqa"


def test_a_planning_study_worker_checks_their_quota_and_no_more(tmp_path):
    from backend.planning.validation import next_question, submit_check
    from tests.conftest import VILPACT_DATA
    from tests.planning_helpers import planning_context

    ctx = planning_context(tmp_path, VILPACT_DATA)
    study = make_study(ctx.database, kind="planning", qualification_size=0, tasks_per_worker=1)
    worker = arrive(ctx.database, study).worker
    task = next_question(ctx.database, worker.username, 20)
    submit_check(ctx.database, worker.username, task.question.id, task.question.answer_index)
    assert next_question(ctx.database, worker.username, 20) is None
    view = workers.study_view(ctx.database, worker.username)
    assert (view["status"], view["completion_code"], view["work_tab"]) == ("finished", "DONE42", "planning")
    from backend.planning.validation import study_of
    from components.study_status import study_end

    assert study_of(ctx.database, worker.username) == view  # what the Check panel shows instead of "Nothing left"
    assert '<span id="study-completion-code">DONE42</span>' in study_end(view, "planning")


def test_the_mturk_completion_page_submits_only_to_mechanical_turk(database):
    from web.study_pages import final_page

    study = archived_mturk_study(database, name="HIT <x>", completion_code="C1")
    worker = workers.StudyWorker(1, study.id, "A1", "s1-A1", "finished", "t", "t", "t", 1.0, {})
    for target, shown in (("https://workersandbox.mturk.com", True), ("https://evil.example", False)):
        params = {"assignmentId": 'ASG"1', "turkSubmitTo": target}
        body = final_page(study, workers.StudyWorker(**{**worker.__dict__, "params": params})).body.decode()
        assert ("externalSubmit" in body) is shown
        if shown:
            assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in body
            assert 'value="ASG&quot;1"' in body  # escaped


# -- VQA and planning studies: the code where the worker works, and on the study page --------------------------
def study_page(ctx, study, token) -> tuple[str, str]:
    """``GET /study/<id>/here`` as the worker's browser asks it (their session cookie): (data-state, body)."""
    import re

    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from web.study_pages import study_routes

    client = TestClient(Starlette(routes=study_routes(ctx)))
    client.cookies.set(sessions.cookie_name(ctx.database), token)
    body = client.get(f"/study/{study.id}/here").text
    return re.search(r'data-state="([^"]+)"', body).group(1), body  # type: ignore[union-attr]


def answer_vqa(ctx, username) -> dict:
    from backend.vqa import service as vqa
    from backend.vqa.items import get_item

    task = vqa.next_answer_task(ctx.database, ctx.settings, username)["task"]
    key = get_item(ctx.database, task["id"]).answer
    return vqa.submit_answer(ctx.database, ctx.settings, username, task["id"], list(key))


def test_a_vqa_study_worker_gets_the_code_where_they_answer_and_on_the_study_page(demo_ctx):
    from backend.vqa import service as vqa
    from backend.vqa.demo import ensure_vqa_demo
    from components.study_status import study_end

    ensure_vqa_demo(demo_ctx)
    database = demo_ctx.database
    study = make_study(database, kind="vqa", qualification_size=0, tasks_per_worker=2)
    first = arrive(database, study)
    worker = first.worker
    answer_vqa(demo_ctx, worker.username)
    reply = vqa.next_answer_task(database, demo_ctx.settings, worker.username)
    assert reply["task"] is not None and reply["study"]["done"] == 1 and reply["study"]["completion_code"] is None
    assert study_page(demo_ctx, study, first.token)[0] == "qualified"
    answer_vqa(demo_ctx, worker.username)
    reply = vqa.next_answer_task(database, demo_ctx.settings, worker.username)
    assert reply["task"] is None  # their share is done: nothing more, and the code where they answer
    view = reply["study"]
    assert (view["status"], view["done"], view["completion_code"]) == ("finished", 2, "DONE42")
    assert view["page"] == f"/study/{study.id}/here"  # the header's link, from the root (the tab is at /worker-vqa/)
    shown = study_end(view, "vqa")
    assert '<span id="study-completion-code">DONE42</span>' in shown
    assert 'href="https://app.prolific.com/submissions/complete?cc=DONE42"' in shown
    assert vqa.left_counts(database, worker.username)["study"]["completion_code"] == "DONE42"  # the tab on load
    state, body = study_page(demo_ctx, study, first.token)
    assert state == "finished" and '<span class="code" id="study-code">DONE42</span>' in body
    assert "study" not in vqa.next_answer_task(database, demo_ctx.settings, "boss")  # nobody else gets one


def test_a_vqa_study_worker_with_nothing_left_after_one_task_waits_then_is_paid(demo_ctx):
    from backend.campaigns import waiting
    from backend.vqa import service as vqa
    from backend.vqa.demo import ensure_vqa_demo
    from components.study_status import study_end

    ensure_vqa_demo(demo_ctx)
    database = demo_ctx.database
    study = make_study(database, kind="vqa", qualification_size=0, tasks_per_worker=3)
    first = arrive(database, study)
    answer_vqa(demo_ctx, first.worker.username)
    with database.write() as db:  # the pool runs dry: no other item needs an answer
        db.conn.execute("UPDATE tasks SET status = 'done' WHERE kind = 'vqa_answer' AND status = 'open'")
    reply = vqa.next_answer_task(database, demo_ctx.settings, first.worker.username)
    assert reply["task"] is None and reply["study"]["status"] == "qualified"
    shown = study_end(reply["study"], "vqa")
    assert f'href="/study/{study.id}/here?wait=1"' in shown and "Nothing left" not in shown  # where to wait
    assert waiting.wait(database, demo_ctx.settings, first.worker.username, study.id).state == "wait"
    database.conn.execute("UPDATE study_workers SET waiting_since = '2020-01-01T00:00:00+00:00'")
    assert waiting.wait(database, demo_ctx.settings, first.worker.username, study.id).state == "paid"
    view = vqa.next_answer_task(database, demo_ctx.settings, first.worker.username)["study"]
    assert (view["status"], view["done"], view["completion_code"]) == ("finished", 1, "DONE42")
    assert "You are paid for the 1 task(s) you did" in study_end(view, "vqa")
    state, body = study_page(demo_ctx, study, first.token)
    assert state == "finished" and 'id="study-code">DONE42<' in body


def test_a_vqa_study_worker_who_did_nothing_gets_the_screen_out_code_when_it_closes(demo_ctx):
    from backend.vqa import service as vqa
    from backend.vqa.demo import ensure_vqa_demo
    from components.study_status import study_end

    ensure_vqa_demo(demo_ctx)
    database = demo_ctx.database
    study = make_study(database, kind="vqa", qualification_size=0)
    first = arrive(database, study)
    studies.close_study(database, "boss", study.id)
    reply = vqa.next_answer_task(database, demo_ctx.settings, first.worker.username)  # the tab asks: screened out
    view = reply["study"]
    assert reply["task"] is None and (view["status"], view["closed_early"]) == ("screened_out", True)
    assert (view["completion_code"], view["screenout_code"]) == (None, "OUT7")
    assert '<span id="study-completion-code">OUT7</span>' in study_end(view, "vqa")
    arrival = arrive(database, study)  # their link again: the closed study's page with the screen-out code
    assert arrival.token is None and arrival.worker.end_reason == workers.CLOSED_BEFORE_WORK
