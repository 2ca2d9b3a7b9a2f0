"""Issue 43 §3: the caller is resolved once per request, in the gate (web/gate.py), and carried in the request's
scope as a ``Caller(name, identity, audience)`` (components/common.py); the mount's ``auth_dependency`` and the
access guard (components/access.py) read it, with no database read of their own.

Measured the same way before the change (main @ 324b8fe), one Submit click on the annotator's page (three HTTP
requests) read identity 25 times: sessions.user_for 3, audience_of 6 (the gate's and the mount dependency's),
auth.get_user 10 (6 of them in audience_of, 2 in the guard, 2 in the services), is_author 6. After: 14 (user_for 3,
the gate's caller_of 3, get_user 5 of which 2 in the services, is_author 3); the guard and the dependency read none.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import gradio as gr
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient, ApiError
from starlette.requests import Request

import web.audiences
import web.signin
from backend.accounts import auth, sessions
from backend.context import build_context
from backend.settings import Settings
from backend.vqa import permissions
from components import common
from components.access import guarded

CONCRETE, HIGH_LEVEL = "S/He wants to have a drink", "S/He is thirsty"
#: the functions that read who is calling from the database (the measure of issue 43 §3)
IDENTITY_READS = (
    (sessions, "user_for"),
    (auth, "get_user"),
    (permissions, "is_author"),
    (web.audiences, "audience_of"),
    (web.audiences, "caller_of"),
    (web.signin, "caller_of"),
)


@pytest.fixture(scope="module")
def running(served_app):
    return served_app(demo=True, identities=True, require_full_view=False)


@pytest.fixture
def guard_ctx(tmp_path):
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False))
    for name, role in (("ann", "annotator"), ("boss", "admin")):
        auth.add_user(ctx.database, name, role, "caller-password-1")
    return ctx


def count_identity_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count every call of the functions that read identity from the database, from now on (every thread)."""
    counts: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return counted

    for module, name in IDENTITY_READS:
        real = getattr(module, name, None)
        if real is not None:
            key = "audience_of" if name in {"audience_of", "caller_of"} else name
            monkeypatch.setattr(module, name, counting(key, real))
    return counts


def _fn_index(config: dict, api_name: str) -> int:
    (index,) = [d.get("id", i) for i, d in enumerate(config["dependencies"]) if d.get("api_name") == api_name]
    return index


def submit_click(client: ApiClient, config: dict, sequence_id: str) -> dict:
    """What the browser sends on one Submit click of the intents tab: the text check (``queue=False``: one POST)
    and the submit itself (through the queue: join, then the event stream); returns the completed message."""
    http, session = client.http, uuid.uuid4().hex
    check = {"data": [sequence_id, CONCRETE, HIGH_LEVEL], "fn_index": _fn_index(config, "intents_ui_check")}
    reply = http.post("/annotator/gradio_api/run/predict", json={**check, "session_hash": session})
    assert reply.status_code == 200, reply.text
    join = {
        "data": [sequence_id, CONCRETE, HIGH_LEVEL, 1.0],
        "fn_index": _fn_index(config, "intents_ui_submit"),
        "session_hash": session,
        "event_data": None,
        "trigger_id": None,
    }
    reply = http.post("/annotator/gradio_api/queue/join", json=join)
    assert reply.status_code == 200, reply.text
    with http.stream("GET", f"/annotator/gradio_api/queue/data?session_hash={session}") as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    return message
    raise AssertionError("the submit never completed")


def test_one_submit_click_reads_identity_once_per_request(running, monkeypatch):
    """Three HTTP requests (check, join, the event stream): the gate resolves the caller once each (a session,
    the account, the author right, the study); the mount's dependency and the guard read that; only the service's
    own role check (``require_role``: the command line calls services directly) reads again."""
    client = ApiClient(running.url, IDENTITY_ACCOUNTS["annotator"], IDENTITY_PASSWORD)
    config = client.http.get("/annotator/config", timeout=120).json()
    task = client.run("intent_next")["task"]
    counts = count_identity_reads(monkeypatch)
    completed = submit_click(client, config, task["sequence_id"])
    assert completed["success"], completed
    stored = running.ctx.database.query_one(
        "SELECT concrete_intent FROM annotations WHERE sequence_id = ?", (task["sequence_id"],)
    )
    assert stored == {"concrete_intent": CONCRETE}
    print("identity reads per Submit click:", dict(counts), sum(counts.values()))
    # one resolution per request, in the gate; the guard and the dependency read none
    assert counts["user_for"] == counts["audience_of"] == counts["is_author"] == 3, counts
    assert counts["get_user"] <= 3 + 2, counts  # one per resolution, and the services' own require_role
    assert sum(counts.values()) <= 14 < 25, counts  # 25 before (the module's docstring)


def _request_with(caller: common.Caller | None) -> gr.Request:
    """A ``gr.Request`` wrapping an HTTP request whose scope holds ``caller``, as the gate leaves it."""
    state = {} if caller is None else {common.CALLER_KEY: caller}
    scope = {"type": "http", "method": "POST", "path": "/admin/gradio_api/queue/join", "headers": [], "state": state}
    return gr.Request(request=Request(scope), username=None if caller is None else caller.name)


def test_the_guard_reads_the_gates_caller_and_no_database(guard_ctx, monkeypatch):
    def whoami(text: str, request: gr.Request) -> str:
        return f"{text}:{common.caller(guard_ctx, request)}"

    fn = guarded(guard_ctx, "caller_test_admin", whoami, "admin")
    counts = count_identity_reads(monkeypatch)
    assert fn("x", _request_with(common.Caller("boss", "admin", "admin"))) == "x:boss"
    assert common.resolve_caller(guard_ctx, _request_with(common.Caller("boss", "admin", "admin"))) == "boss"
    assert sum(counts.values()) == 0
    # a refusal reads the account once, to say why in the services' words
    with pytest.raises(gr.Error, match="needs the admin role; 'ann' is annotator"):
        fn("x", _request_with(common.Caller("ann", "annotator", "annotator")))
    with pytest.raises(gr.Error, match="not signed in"):
        fn("x", _request_with(common.Caller(None, "anyone", "anyone")))
    # no caller in the scope (a handler called from a test or a script): resolved here, once
    counts.clear()
    assert fn("x", gr.Request(username="boss")) == "x:boss"
    assert counts == {"get_user": 1}


def test_a_caller_resolved_before_a_role_change_is_told_to_reload(guard_ctx):
    auth.add_user(guard_ctx.database, "riser", "annotator", "riser-password-1")
    auth.set_role(guard_ctx.database, "riser", "admin")
    fn = guarded(guard_ctx, "caller_test_admin", lambda text: text, "admin")
    with pytest.raises(gr.Error, match="Your role changed: reload the page"):
        fn(_request_with(common.Caller("riser", "annotator", "annotator")), "x")
    assert fn(gr.Request(username="riser"), "x") == "x"  # the next request resolves the caller afresh


def test_a_role_change_or_a_disabled_account_takes_effect_on_the_next_request(running):
    """Nothing is kept across requests: the next request after a role change gets the new page's answer, and a
    disabled account is refused at once, by the gate and by the lean /api routes."""
    auth.add_user(running.ctx.database, "mover", "annotator", IDENTITY_PASSWORD)
    client = ApiClient(running.url, "mover", IDENTITY_PASSWORD)
    assert client.http.get("/session").json() == {"session": "ok", "audience": "annotator"}
    assert client.run("intent_next")["task"] is not None
    auth.set_role(running.ctx.database, "mover", "reviewer")
    assert client.http.get("/session?page=annotator").json()["session"] == "role_changed"
    assert client.http.get("/annotator/config").json()["session"] == "role_changed"
    assert client.http.get("/session").json() == {"session": "ok", "audience": "reviewer"}
    auth.set_disabled(running.ctx.database, "mover")
    assert client.http.get("/reviewer/config").json()["session"] == "signed_out"
    with pytest.raises(ApiError, match="signed out"):
        client.run("intent_next")
