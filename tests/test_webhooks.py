"""Outgoing webhooks (issue 26 §7): the outbox written with the change, the URL rules, the admin's registry, and the
sender against a real loopback receiver (signatures, each event, de-duplication, retries with backoff, resend)."""

from __future__ import annotations

import json

import pytest
from campaign_helpers import add_people, context_from_template, template_database
from webhook_receiver import Receiver

from backend import webhooks
from backend.errors import PermissionDenied, ValidationError
from backend.webhooks import registry, signing
from backend.webhooks.sender import WebhookSender, backoff_seconds
from backend.webhooks.urls import check_url
from tests.conftest import VILPACT_DATA

SECRET = "a-test-secret-of-some-length"
GOOD = ("S/He wants to have a drink", "S/He is thirsty")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("webhook-template"), VILPACT_DATA, annotators_per_sequence=2)


@pytest.fixture
def receiver():
    running = Receiver(SECRET).start()
    yield running
    running.stop()


def make(template, tmp_path, **settings):
    values = {"webhooks_allow_private": True, "webhook_retry_base_seconds": 0.05, "speed_floor_share": 0.0, **settings}
    ctx = context_from_template(template, tmp_path / "data", **values)
    add_people(ctx.database, ["w1", "w2"])
    return ctx


def test_the_outbox_is_written_with_the_change_and_only_for_subscribers(template, tmp_path):
    ctx = make(template, tmp_path)
    db = ctx.database
    with db.write() as w:
        assert webhooks.emit(w, "study.completed", {"x": 1}) is None  # nobody listens: nothing written
    registry.add_webhook(db, ctx.settings, "boss", name="a", url="http://127.0.0.1:9/a", events=["study.completed"])
    registry.add_webhook(db, ctx.settings, "boss", name="b", url="http://127.0.0.1:9/b", events="item.completed")
    with db.write() as w:
        event_id = webhooks.emit(w, "study.completed", {"x": 1})
    rows = db.query("SELECT webhook_id, event_id, event, body, status FROM webhook_deliveries")
    assert [(r["event_id"], r["status"]) for r in rows] == [(event_id, "pending")]  # only "a" subscribed
    assert json.loads(rows[0]["body"]) == {"id": event_id, "event": "study.completed", "created_at": json.loads(rows[0]["body"])["created_at"], "data": {"x": 1}}  # fmt: skip
    with pytest.raises(RuntimeError), db.write() as w:  # the change rolls back: so does its event
        webhooks.emit(w, "study.completed", {"x": 2})
        raise RuntimeError("the submit failed")
    assert db.scalar("SELECT count(*) FROM webhook_deliveries") == 1
    with pytest.raises(ValueError, match="unknown webhook event"), db.write() as w:
        webhooks.emit(w, "no.such.event", {})


def test_only_http_urls_and_no_private_addresses_unless_allowed():
    for bad in (
        "ftp://example.org/x",
        "javascript:alert(1)",
        "http://",
        "file:///etc/passwd",
        "http://u:p@example.org/",
    ):
        with pytest.raises(ValidationError):
            check_url(bad, allow_private=True)
    for private in ("http://127.0.0.1:8000/x", "http://localhost/x", "http://10.0.0.8/", "http://169.254.169.254/",
                    "http://[::1]/", "http://192.168.1.1/", "http://100.64.0.1/"):  # fmt: skip
        with pytest.raises(ValidationError, match="webhooks_allow_private"):
            check_url(private, allow_private=False)
        assert check_url(private, allow_private=True) == private
    assert check_url("https://93.184.216.34/hook", allow_private=False) == "https://93.184.216.34/hook"


def test_the_registry_is_for_admins_and_checks_what_it_is_given(template, tmp_path):
    ctx = make(template, tmp_path, webhooks_allow_private=False)
    db, settings = ctx.database, ctx.settings
    with pytest.raises(PermissionDenied):
        registry.add_webhook(db, settings, "w1", name="x", url="https://93.184.216.34/")
    with pytest.raises(ValidationError, match="webhooks_allow_private"):
        registry.add_webhook(db, settings, "boss", name="x", url="http://127.0.0.1/")
    with pytest.raises(ValidationError, match="unknown webhook event"):
        registry.add_webhook(db, settings, "boss", name="x", url="https://93.184.216.34/", events=["nope"])
    with pytest.raises(ValidationError, match="16 characters"):
        registry.add_webhook(db, settings, "boss", name="x", url="https://93.184.216.34/", secret="short")
    made = registry.add_webhook(db, settings, "boss", name="lab", url="https://93.184.216.34/")
    assert made["events"] == list(webhooks.EVENTS) and len(made["secret"]) >= 32  # all events, a random secret
    with pytest.raises(ValidationError, match="already a webhook"):
        registry.add_webhook(db, settings, "boss", name="lab", url="https://93.184.216.34/")
    listed = registry.list_webhooks(db, "boss")
    assert [h["name"] for h in listed] == ["lab"] and "secret" not in listed[0]
    for call in (lambda: registry.list_webhooks(db, "w1"), lambda: registry.deliveries(db, "w1")):
        with pytest.raises(PermissionDenied):
            call()
    assert registry.remove_webhook(db, "boss", "lab")["removed"] == "lab"
    assert registry.list_webhooks(db, "boss") == []


def test_backoff_doubles_up_to_the_cap():
    assert [backoff_seconds(n, 5, 30) for n in range(1, 6)] == [5, 10, 20, 30, 30]


def test_deliveries_are_signed_retried_after_500_and_resent(template, tmp_path, receiver):
    ctx = make(template, tmp_path, webhook_max_attempts=3)
    db = ctx.database
    registry.add_webhook(db, ctx.settings, "boss", name="lab", url=receiver.url, secret=SECRET)
    sender = WebhookSender(ctx.settings, db, poll_s=0.02)
    receiver.fail_first = 2  # answers 500 twice, then 200
    with db.write() as w:
        event_id = webhooks.emit(w, "study.completed", {"study_id": 7})
    sender.start()
    try:
        receiver.wait_for(lambda r: event_id in r.events())
    finally:
        sender.stop()
    tries = [r for r in receiver.requests if r.event_id == event_id]
    assert len(tries) == 3 and all(r.signature_ok for r in tries)  # the same event id on every try
    assert [r.attempt for r in tries] == [-1, -1, 3]
    assert tries[2].at - tries[1].at >= 0.1 - 0.02 >= 0  # the second wait is twice the first (0.05 s, 0.1 s)
    row = registry.deliveries(db, "boss")[0]
    assert (row["status"], row["attempts"], row["last_status"]) == ("delivered", 3, 200)
    # an endpoint that keeps failing is given up after webhook_max_attempts, and an admin can resend
    receiver.fail_first = len(receiver.requests) + 3
    with db.write() as w:
        failing = webhooks.emit(w, "study.completed", {"study_id": 8})
    for _ in range(3):
        db.conn.execute("UPDATE webhook_deliveries SET next_attempt_at = '2000' WHERE status = 'pending'")
        sender.send_due()
    row = registry.deliveries(db, "boss")[0]
    assert (row["event_id"], row["status"], row["attempts"], row["last_status"]) == (failing, "failed", 3, 500)
    assert "HTTP 500" in row["last_error"]
    registry.resend(db, "boss", row["id"])
    assert [o.status for o in sender.send_due()] == ["delivered"]
    assert failing in receiver.events()


def test_a_tampered_or_unsigned_body_fails_the_receivers_check(receiver):
    body = b'{"id":"evt_1"}'
    good = signing.headers(SECRET, "study.completed", "evt_1", body, 1)
    assert receiver.signature_ok(good[signing.TIMESTAMP_HEADER], body, good[signing.SIGNATURE_HEADER])
    assert not receiver.signature_ok(good[signing.TIMESTAMP_HEADER], b'{"id":"evt_2"}', good[signing.SIGNATURE_HEADER])
    old = signing.headers(SECRET, "study.completed", "evt_1", body, 1, now=1_700_000_000)  # a replay, years late
    assert not receiver.signature_ok(old[signing.TIMESTAMP_HEADER], body, old[signing.SIGNATURE_HEADER])
    assert signing.verify(SECRET, good[signing.TIMESTAMP_HEADER], body, good[signing.SIGNATURE_HEADER])


def test_every_event_is_sent_by_the_flow_that_causes_it(template, tmp_path, receiver):
    """annotation.created and item.completed (intents, N = 2), review.finished (a reviewer accepts), study.worker_finished
    and study.completed (a study worker does the quota, the admin closes the study), run.finished (a batch run ends),
    and the Test event; each signed, each event id once."""
    from backend.campaigns import links, studies, workers
    from backend.inference.store import finish_run, start_run
    from backend.intents import service
    from backend.review import service as review

    ctx = make(template, tmp_path)
    db, settings = ctx.database, ctx.settings
    registry.add_webhook(db, settings, "boss", name="lab", url=receiver.url, secret=SECRET)
    first = service.next_intent_task(db, settings, "w1")["task"]["sequence_id"]
    service.submit_intents(db, settings, "w1", first, *GOOD)
    assert service.next_intent_task(db, settings, "w2")["task"]["sequence_id"] == first
    service.submit_intents(db, settings, "w2", first, *GOOD)  # N = 2 reached
    service.submit_intents(db, settings, "w2", first, *GOOD)  # a client's retry: stored once, no second event
    item = review.next_review(db, settings, "rev")["item"]
    judged = [review.Judgment(a["annotation_id"], True, "") for a in item["annotations"]]
    chosen = item["annotations"][0]["annotation_id"]
    final = review.FinalChoice(chosen, chosen, GOOD[0], GOOD[1])
    review.submit_review(db, settings, "rev", item["sequence_id"], item["round"], judged, final)
    study = studies.create_study(db, "boss", name="Hooks", kind="intents", tasks_per_worker=1, completion_code="C1",
                                 qualification_size=0)  # fmt: skip
    sig = links.study_signature(db.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    visit = links.verify_visit(db, study, {"PROLIFIC_PID": "5f00aa11bb22cc33dd44ee55", "SESSION_ID": "S9", "sig": sig})
    worker = workers.arrive(db, settings, study, visit, "127.0.0.9").worker
    task = service.next_intent_task(db, settings, worker.username)["task"]
    service.submit_intents(db, settings, worker.username, task["sequence_id"], *GOOD)
    assert service.next_intent_task(db, settings, worker.username)["study"]["status"] == "finished"
    studies.close_study(db, "boss", study.id)
    run_id = start_run(db, "planning", "random", "h", "rev", {})
    finish_run(db, run_id, {"score": 0.5})
    registry.queue_test(db, "boss", "lab")
    WebhookSender(settings, db).send_due()
    events = receiver.events()
    by_name: dict[str, list[dict]] = {}
    for received in events.values():
        by_name.setdefault(received.event, []).append(received.body)
    assert sorted(by_name) == sorted([*webhooks.EVENTS, webhooks.TEST_EVENT])
    assert all(r.signature_ok for r in receiver.requests) and len(events) == len(receiver.requests)
    created = [b["data"] for b in by_name["annotation.created"]]
    assert [(c["annotator"], c["item_id"]) for c in created[:2]] == [("w1", first), ("w2", first)] and len(created) == 3
    assert created[0]["answer"] == {"concrete_intent": GOOD[0], "high_level_intent": GOOD[1]}
    assert created[2]["study_id"] == study.id and created[2]["annotator"] == worker.username
    completed = [b["data"] for b in by_name["item.completed"]]
    assert completed[0] == {"kind": "intent", "item_id": first, "round": 1, "needed": 2, "annotators": ["w1", "w2"]}
    finished = by_name["review.finished"][0]["data"]
    assert (finished["sequence_id"], finished["outcome"], finished["reviewer"]) == (first, "accepted", "rev")
    assert finished["final_intents"]
    worker_done = by_name["study.worker_finished"][0]["data"]
    assert (worker_done["platform_worker_id"], worker_done["tasks_done"], worker_done["reason"]) == (
        "5f00aa11bb22cc33dd44ee55",
        1,
        "quota done",
    )
    assert worker_done["platform_params"]["SESSION_ID"] == "S9"
    assert by_name["study.completed"][0]["data"]["workers"]["finished"] == 1
    run = by_name["run.finished"][0]["data"]
    assert (run["run_id"], run["status"], run["summary"]) == (run_id, "finished", {"score": 0.5})


def test_item_completed_is_emitted_by_the_service_that_owns_the_submit_not_by_the_pool(tmp_path):
    """The lease pool only reports that a round closed (``assignment.finish`` returns a Completion and writes no
    event); the planning-check service, which owns the submit, emits ``item.completed`` with the same payload."""
    from backend import assignment
    from backend.accounts import auth
    from backend.planning.validation import next_question, submit_check
    from tests.planning_helpers import planning_context

    ctx = planning_context(tmp_path, VILPACT_DATA, planning_annotators_per_question=2, webhooks_allow_private=True)
    db = ctx.database
    auth.add_user(db, "boss", "admin", "password-123")
    for name in ("ann1", "ann2"):
        auth.add_user(db, name, "annotator", "password-123")
    registry.add_webhook(db, ctx.settings, "boss", name="lab", url="http://127.0.0.1:9/x", events="item.completed")
    with db.write() as w:  # the pool alone: a closed round is returned, nothing is queued
        assignment.add_tasks(w, "demo", ["d1"], needed=1)
        lease = assignment.next_task(w, "demo", "ann1", 20)
        row, _ = assignment.claim_for_submit(w, "demo", lease.item_id, "ann1")
        assert assignment.finish(w, row["id"], "submitted") == assignment.Completion("demo", "d1", 1, 1)
    assert db.scalar("SELECT count(*) FROM webhook_deliveries") == 0
    qid = next_question(db, "ann1", 20).question.id
    assert next_question(db, "ann2", 20).question.id == qid
    submit_check(db, "ann1", qid, 0)
    assert db.scalar("SELECT count(*) FROM webhook_deliveries") == 0  # one of N = 2: not complete yet
    submit_check(db, "ann2", qid, 1)
    bodies = [json.loads(r["body"]) for r in db.query("SELECT body FROM webhook_deliveries ORDER BY id")]
    assert [(b["event"], b["data"]) for b in bodies] == [
        (
            "item.completed",
            {"kind": "planning", "item_id": qid, "round": 1, "needed": 2, "annotators": ["ann1", "ann2"]},
        )
    ]


def test_the_webhooks_and_study_commands(template, tmp_path, receiver, capsys, monkeypatch):
    from backend.cli import main

    ctx = make(template, tmp_path)
    monkeypatch.setenv("COMPSTUDIO_WEBHOOKS_ALLOW_PRIVATE", "true")
    data = ["--data-dir", str(ctx.settings.data_dir)]
    assert (
        main(
            ["webhooks", "add", "lab", "--url", receiver.url, "--secret", SECRET, "--events", "study.completed", *data]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["events"] == ["study.completed"]
    assert main(["webhooks", "test", "lab", *data]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "delivered"
    assert [r.event for r in receiver.requests] == [webhooks.TEST_EVENT]
    assert main(["webhooks", "list", *data]) == 0
    assert json.loads(capsys.readouterr().out)[0]["delivered"] == 1
    create = ["study", "create", "--name", "CLI", "--kind", "intents", "--tasks", "2", "--qualification-size", "0"]
    with pytest.raises(SystemExit):  # no completion code: refused before anything is made
        main([*create, *data])
    capsys.readouterr()
    assert main([*create, "--completion-code", "C1", "--places", "3", *data]) == 0
    study = json.loads(capsys.readouterr().out)
    assert (study["places"], study["qualification_attempts"]) == (3, 2)
    assert main(["study", "close", str(study["id"]), *data]) == 2  # says what closing does, closes nothing
    assert "cannot be undone" in capsys.readouterr().err
    assert main(["study", "close", str(study["id"]), "--yes", *data]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "closed"
    assert main(["webhooks", "deliveries", *data]) == 0
    assert {d["event"] for d in json.loads(capsys.readouterr().out)} == {"study.completed", webhooks.TEST_EVENT}
    assert main(["webhooks", "remove", "lab", *data]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == "lab"
