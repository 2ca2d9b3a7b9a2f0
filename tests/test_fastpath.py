"""The lean ``POST /api/<name>`` routes for the annotation endpoints (web/scripts.py).

They must give what Gradio's own route for the same endpoint on the scripts mount
(``/scripts/gradio_api/api/<name>``) gives: same results, same error messages, same sign-in check, same role
checks; their replies are their own documented shape (``{"data": [result]}`` / ``{"error": message}``).
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from e2e_helpers import ApiClient

from backend.accounts import auth, sessions

LEAN, GRADIO = "/api", "/scripts/gradio_api/api"


@pytest.fixture(scope="module")
def running(served_app):
    from conftest import VILPACT_DATA

    from backend.vilpact.importer import import_vilpact

    app = served_app({"ann1": "annotator", "ann2": "annotator", "gone": "annotator"}, password="password1")
    import_vilpact(app.ctx.database, VILPACT_DATA)
    return app


def post(client: httpx.Client, path: str, *data, session_hash: str | None = None) -> httpx.Response:
    return client.post(path, json={"data": list(data), "session_hash": session_hash or uuid.uuid4().hex})


def test_same_replies_as_gradios_route(running):
    client = ApiClient(running.url, "ann1", "password1").http
    lean, gradio = post(client, f"{LEAN}/intent_next"), post(client, f"{GRADIO}/intent_next")
    assert lean.status_code == gradio.status_code == 200
    assert lean.json()["data"] == gradio.json()["data"]  # the same current task, the same progress
    task = lean.json()["data"][0]["task"]
    assert task["sequence_id"] and task["timeline"]
    # a rule broken: the same message, the same status
    args = (task["sequence_id"], "drink some water", "S/He is thirsty")
    lean, gradio = post(client, f"{LEAN}/intent_submit", *args), post(client, f"{GRADIO}/intent_submit", *args)
    assert (lean.status_code, gradio.status_code) == (400, 500)
    assert lean.json()["error"] == gradio.json()["error"] and "must start with" in lean.json()["error"]
    # a sequence that was never handed out
    args = ("no-such-sequence", "S/He wants to rest", "S/He is tired")
    lean, gradio = post(client, f"{LEAN}/intent_submit", *args), post(client, f"{GRADIO}/intent_submit", *args)
    assert lean.json()["error"] == gradio.json()["error"] and "no action sequence" in lean.json()["error"]
    # a valid submit through the lean route is stored once and hands over the next task
    reply = post(client, f"{LEAN}/intent_submit/", task["sequence_id"], "S/He wants to rest", "S/He is tired")
    body = reply.json()["data"][0]
    assert reply.status_code == 200 and body["stored"]["annotator"] == "ann1" and body["duplicate"] is False
    assert body["task"]["sequence_id"] != task["sequence_id"]
    db = running.ctx.database
    assert db.scalar("SELECT count(*) FROM annotations WHERE annotator = 'ann1' AND source = 'live'") == 1


def test_sign_in_and_roles_are_checked_the_same_way(running):
    anonymous = httpx.Client(base_url=running.url)
    lean, gradio = post(anonymous, f"{LEAN}/intent_next"), post(anonymous, f"{GRADIO}/intent_next")
    assert lean.status_code == gradio.status_code == 401
    assert lean.json()["error"] == gradio.json()["error"] == "You are signed out: sign in again."
    forged = httpx.Client(base_url=running.url, cookies={sessions.cookie_name(running.ctx.database): "x"})
    assert post(forged, f"{LEAN}/intent_next").status_code == 401
    # signed in, then disabled: the session ends at once, whatever the route
    client = ApiClient(running.url, "gone", "password1").http
    assert post(client, f"{LEAN}/intent_next").status_code == 200
    auth.set_disabled(running.ctx.database, "gone", True)
    lean, gradio = post(client, f"{LEAN}/intent_next"), post(client, f"{GRADIO}/intent_next")
    assert lean.status_code == gradio.status_code == 401
    assert "signed out" in lean.json()["error"] and "signed out" in gradio.json()["error"]


def test_bad_calls_get_a_clear_message(running):
    client = ApiClient(running.url, "ann2", "password1").http
    wrong = post(client, f"{LEAN}/intent_submit", "only-one-argument")
    assert wrong.status_code == 422
    assert (
        "intent_submit takes 3 argument(s) (sequence_id, concrete_intent, high_level_intent); got 1"
        in (wrong.json()["error"])
    )
    garbled = client.post(f"{LEAN}/intent_next", content=b"{not json", headers={"Content-Type": "application/json"})
    assert garbled.status_code == 422 and "JSON" in garbled.json()["error"]
    not_a_list = client.post(f"{LEAN}/intent_next", json={"data": "x"})
    assert not_a_list.status_code == 422
    # other endpoints are not served here: the scripts mount answers them (here: an admin one, refused)
    assert post(client, f"{LEAN}/admin_users").status_code == 404
    other = post(client, f"{GRADIO}/admin_users")
    assert other.status_code == 500 and "needs the admin role" in other.json()["error"]


def test_lean_route_sets_up_no_gradio_session(running):
    """Gradio builds a session state for every new session_hash it sees (~50 ms on this app); the lean
    route needs none, so a script that forgets to send one is not penalised."""
    client = ApiClient(running.url, "ann2", "password1").http
    lean_hash, gradio_hash = uuid.uuid4().hex, uuid.uuid4().hex
    assert post(client, f"{LEAN}/intent_next", session_hash=lean_hash).status_code == 200
    assert post(client, f"{GRADIO}/intent_next", session_hash=gradio_hash).status_code == 200
    holder = running.shell.blocks["/scripts"].state_holder
    assert gradio_hash in holder and lean_hash not in holder


def test_session_state_is_bounded_by_the_setting(served_app):
    """Every new Gradio session holds ~0.8 MB until evicted; ``session_capacity`` bounds how many are kept."""
    with served_app.started({"ann1": "annotator"}, password="password1", session_capacity=10) as app:
        client = ApiClient(app.url, "ann1", "password1").http
        hashes = [uuid.uuid4().hex for _ in range(25)]
        for session_hash in hashes:
            assert post(client, f"{GRADIO}/intent_next", session_hash=session_hash).status_code == 200
        holder = app.shell.blocks["/scripts"].state_holder
        kept = [h for h in hashes if h in holder]
        assert kept == hashes[-10:]  # the ten most recent stay, the oldest went first


def test_draft_flush_endpoint(running):
    """What the page sends as it closes: POST /api/intent_draft with the browser's clock."""
    client = ApiClient(running.url, "ann2", "password1").http
    sequence = post(client, f"{LEAN}/intent_next").json()["data"][0]["task"]["sequence_id"]
    newer = post(client, f"{LEAN}/intent_draft", sequence, "S/He wants to", "S/He is tired now", 2_000)
    older = post(client, f"{LEAN}/intent_draft", sequence, "S/He wants", "S/He is", 1_000)
    assert newer.json()["data"][0]["saved_at"] and older.json()["data"][0]["saved_at"] is None
    task = post(client, f"{LEAN}/intent_next").json()["data"][0]["task"]
    assert task["draft"] == {"concrete_intent": "S/He wants to", "high_level_intent": "S/He is tired now"}
    refused = post(client, f"{LEAN}/intent_draft", "no-such-sequence", "a", "b", None)
    assert refused.status_code == 400 and "not handed to you" in refused.json()["error"]
