"""Outgoing webhooks and Prolific's events against ``python app.py`` (issue 26 §6-8), loopback only.

A receiver started by the test checks every delivery's signature itself, answers 500 to the first few (the
sender retries with backoff), and de-duplicates by event id. Two annotators complete an item over HTTP
(``annotation.created`` twice, ``item.completed``); a study worker arrives by the Prolific link and holds the
item's last free slot; a signed Prolific ``RETURNED`` event frees it at once and another annotator is handed
the item; a forged one is refused. Then, with the receiver refusing, an event is queued and the server is
killed (kill -9): after the restart, with the receiver answering again, every queued event arrives (at least
once, and once per event id at the receiver), and every delivery row ends delivered.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from campaign_helpers import add_people
from conftest import VILPACT_DATA
from e2e_helpers import ApiClient, free_port, kill_hard, start_app_process, wait_http_ok
from webhook_receiver import Receiver

from backend.accounts import auth
from backend.campaigns import links, prolific, studies
from backend.context import build_context
from backend.settings import Settings
from backend.storage import utcnow
from backend.vilpact.importer import import_vilpact
from backend.webhooks import registry

pytestmark = [pytest.mark.crash, pytest.mark.slow]
PASSWORD, SECRET, PROLIFIC_SECRET = "password-123", "receiver-secret-0123456789", "prolific-secret-0123"
GOOD = ("S/He wants to have a drink", "S/He is thirsty")
PID = "5f00aa11bb22cc33dd44ee55"
ENV = {
    "COMPSTUDIO_DEMO_CONTENT": "false",
    "COMPSTUDIO_REQUIRE_FULL_VIEW": "false",
    "COMPSTUDIO_SPEED_FLOOR_SHARE": "0",
    "COMPSTUDIO_WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on loopback
    "COMPSTUDIO_WEBHOOK_RETRY_BASE_SECONDS": "0.2",
    "COMPSTUDIO_WEBHOOK_RETRY_MAX_SECONDS": "1",
    "COMPSTUDIO_PROLIFIC_WEBHOOK_SECRET": PROLIFIC_SECRET,
}


@pytest.fixture
def receiver():
    running = Receiver(SECRET, fail_first=3).start()
    yield running
    running.stop()


def _prepare(data_dir, receiver_url: str):
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False, webhooks_allow_private=True))
    import_vilpact(ctx.database, VILPACT_DATA, annotators_per_sequence=2)
    add_people(ctx.database, [])
    for name in ("w1", "w2", "w3", "w4"):
        auth.add_user(ctx.database, name, "annotator", PASSWORD)
    registry.add_webhook(ctx.database, ctx.settings, "boss", name="lab", url=receiver_url, secret=SECRET)
    study = studies.create_study(ctx.database, "boss", name="Hooks", kind="intents", tasks_per_worker=5,
                                 completion_code="C1", qualification_size=0, places=5)  # fmt: skip
    ctx.database.close()
    return study


def _prolific(url: str, status: str, secret: str = PROLIFIC_SECRET, event_id: str = "evt-1") -> httpx.Response:
    body = json.dumps({"event_type": "submission.status.change", "resource_id": "SUB1", "participant_id": PID,
                       "status": status}).encode()  # fmt: skip
    stamp = str(int(time.time()))
    headers = {prolific.SIGNATURE_HEADER: prolific.signature(secret, stamp, body), prolific.TIMESTAMP_HEADER: stamp,
               prolific.EVENT_ID_HEADER: event_id, "Content-Type": "application/json"}  # fmt: skip
    return httpx.post(f"{url}/webhooks/prolific", content=body, headers=headers, timeout=30)


def test_deliveries_are_signed_retried_deduplicated_and_survive_kill_9(tmp_path, receiver):
    data_dir = tmp_path / "data"
    study = _prepare(data_dir, receiver.url)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_app_process(data_dir, port, env=ENV, log=tmp_path / "app.log")
    try:
        wait_http_ok(f"{url}/login", timeout=120)
        w1, w2, w3, w4 = (ApiClient(url, name, PASSWORD) for name in ("w1", "w2", "w3", "w4"))
        first = w1.run("intent_next")["task"]["sequence_id"]
        w1.run("intent_submit", first, *GOOD)
        assert w2.run("intent_next")["task"]["sequence_id"] == first
        w2.run("intent_submit", first, *GOOD)  # N = 2: item.completed
        w2.run("intent_submit", first, *GOOD)  # a client's retry: no second annotation, no second event
        receiver.wait_for(lambda r: sorted(e.event for e in r.events().values())
                          == ["annotation.created", "annotation.created", "item.completed"])  # fmt: skip
        assert [r.attempt for r in receiver.requests[:3]] == [-1, -1, -1]  # answered 500: retried
        assert all(r.signature_ok for r in receiver.requests)
        # a study worker and w3 hold the item's two slots; Prolific says RETURNED: the worker's is free at once
        worker = ApiClient.by_link(links.worker_link(_db(data_dir), study, url, PID, SESSION_ID="SUB1"))
        held = worker.run("intent_next")["task"]["sequence_id"]
        assert w3.run("intent_next")["task"]["sequence_id"] == held  # the closest to completion
        live = "SELECT count(*) FROM assignments WHERE item_id = ? AND status = 'leased' AND expires_at > ?"
        assert _db(data_dir).scalar(live, (held, utcnow())) == 2  # N = 2: full
        other = w4.run("intent_next")["task"]["sequence_id"]
        assert other != held
        forged = _prolific(url, "RETURNED", secret="someone-else")
        assert forged.status_code == 401 and "forged" in forged.json()["detail"]
        returned = _prolific(url, "RETURNED")
        assert returned.status_code == 200 and returned.json()["outcome"] == "returned (RETURNED)"
        assert _prolific(url, "RETURNED").json()["duplicate"] is True  # Prolific's retry changes nothing
        assert _db(data_dir).scalar(live, (held, utcnow())) == 1  # freed now, not when the lease runs out
        w4.run("intent_skip", other, "testing the freed slot")
        assert w4.run("intent_next")["task"]["sequence_id"] == held  # the freed slot went to another worker
        # the receiver refuses for a while; an event is queued; the server dies before it is delivered
        receiver.fail_first = len(receiver.requests) + 1000
        w3.run("intent_submit", held, *GOOD)
        w4.run("intent_submit", held, *GOOD)  # annotation.created twice and item.completed, queued in the submits
        receiver.wait_for(lambda r: r.requests and r.requests[-1].attempt == -1)
    finally:
        kill_hard(process)
    pending = _db(data_dir).query("SELECT event_id, event FROM webhook_deliveries WHERE status = 'pending'")
    assert {p["event"] for p in pending} >= {"annotation.created", "item.completed"}
    receiver.fail_first = 0  # the receiver is back
    process = start_app_process(data_dir, port, env=ENV, log=tmp_path / "app-2.log")
    try:
        receiver.wait_for(lambda r: {p["event_id"] for p in pending} <= set(r.events()), timeout=120)
        # a delivery is marked once its post has returned (at-least-once): wait for the marks, then stop it
        deadline, db = time.monotonic() + 120, _db(data_dir)
        while db.scalar("SELECT count(*) FROM webhook_deliveries WHERE status != 'delivered'"):
            assert time.monotonic() < deadline, "deliveries still not marked delivered after 120 s"
            time.sleep(0.2)
    finally:
        kill_hard(process)
    rows = _db(data_dir).query("SELECT event_id, status FROM webhook_deliveries")
    assert {r["status"] for r in rows} == {"delivered"}
    delivered = receiver.events()
    assert set(delivered) == {r["event_id"] for r in rows}  # every event arrived, each once after de-duplication
    assert all(r.signature_ok for r in receiver.requests)
    assert sum(1 for r in receiver.requests if r.attempt > 0) >= len(delivered)  # at least once


def _db(data_dir):
    return build_context(Settings(data_dir=data_dir, demo_content=False)).database
