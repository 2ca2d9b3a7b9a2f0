"""Issue 15 §1: every endpoint of the running app against the access table (backend/accounts/access.py).

The app's full API is read from the running server (``/config`` lists every event with its ``fn_index``,
named or not; the Starlette app lists every plain route, ours and Gradio's). Each event is called by
``fn_index`` through Gradio's ``/gradio_api/run`` route, and the lean routes of components/fastpath.py by
name, as anonymous, annotator, author (an annotator with the VQA author permission), reviewer and admin.
The test fails for an endpoint missing from the table and for any outcome that differs from it, and the
database dump is the same before and after all the refused calls.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from typing import Any

import httpx
import pytest
from e2e_helpers import IDENTITY_ACCOUNTS, IDENTITY_PASSWORD, ApiClient

from backend.accounts import access

PASSWORD = IDENTITY_PASSWORD
ACCOUNTS = IDENTITY_ACCOUNTS
REFUSAL = re.compile(
    r"You are not signed in|This needs the \w+ role|There is no account named|is disabled|"
    r"needs the author permission|not in the access table"
)
HOW_TO_ADD = (
    "add a row to EVENTS in backend/accounts/access.py (in the block of its tab) with the least identity that "
    "may call it: one of " + ", ".join(access.IDENTITIES)
)


@pytest.fixture(scope="module")
def running(identities_app):
    return identities_app


def dump(app) -> list[str]:
    """The whole database as SQL text (a fresh connection: the app's own are per thread)."""
    with sqlite3.connect(app.ctx.settings.db_path) as conn:
        return list(conn.iterdump())


def _events(app) -> list[tuple[int, str, Any]]:
    """(fn_index, table key: the api_name, BlockFunction) of every event that runs on the server."""
    return [(index, fn.api_name, fn) for index, fn in app.demo.fns.items() if fn.fn is not None]


# inputs replaced for the calls that are allowed, to keep them short: the planning batch run with the
# random baseline (the page's default model simulates every question)
PROBE_INPUTS: dict[str, dict[int, Any]] = {"planning_ui_run": {0: "random", 1: "text"}}


def _probe_data(config: dict, dependency: dict, key: str) -> list[Any]:
    """Each input's value as the page starts with it; an empty number gets 2 (keeps model runs short)."""
    components = {c["id"]: c for c in config["components"]}
    data = []
    for component_id in dependency["inputs"]:
        component = components[component_id]
        value = component.get("props", {}).get("value")
        data.append(2 if value is None and component.get("type") == "number" else value)
    for position, value in PROBE_INPUTS.get(key, {}).items():
        data[position] = value
    return data


def test_every_event_is_in_the_access_table(running):
    config = httpx.get(f"{running.url}/config", cookies=ApiClient(running.url, "ann", PASSWORD).cookies).json()
    served = {index for index, _key, _fn in _events(running)}
    listed = {index for index, dependency in enumerate(config["dependencies"]) if dependency.get("backend_fn")}
    assert served == listed  # /config names exactly the events the server runs
    missing = [
        f"event fn_index={index} api_name={fn.api_name!r}: {key!r}"
        for index, key, fn in _events(running)
        if key not in access.EVENTS
    ]
    assert not missing, "no access rule for:\n  " + "\n  ".join(missing) + "\n" + HOW_TO_ADD
    stale = set(access.EVENTS) - {key for _index, key, _fn in _events(running)}
    assert not stale, f"rows in backend/accounts/access.py EVENTS for events the app no longer has: {sorted(stale)}"


def _all_routes(app) -> list[tuple[str, set[str]]]:
    def walk(routes, prefix=""):
        for route in routes:
            if hasattr(route, "original_router"):  # FastAPI's included router (Gradio's /gradio_api routes)
                yield from walk(route.original_router.routes, prefix + route.include_context.prefix)
            elif hasattr(route, "path"):
                yield prefix + route.path, set(getattr(route, "methods", None) or {"WEBSOCKET"})

    return list(walk(app.demo.server_app.routes))


def test_every_route_is_in_the_access_table_and_anonymous_callers_are_refused(running):
    routes = _all_routes(running)
    missing = sorted({path for path, _methods in routes if path not in access.ROUTES})
    assert not missing, (
        "no access rule for these HTTP routes: "
        + ", ".join(missing)
        + "\nadd each to ROUTES in backend/accounts/access.py ('anyone' or 'annotator')"
    )
    stale = set(access.ROUTES) - {path for path, _methods in routes}
    assert not stale, f"rows in backend/accounts/access.py ROUTES for routes the app no longer has: {sorted(stale)}"
    anonymous = httpx.Client(base_url=running.url, timeout=30)
    for path, methods in routes:
        if access.ROUTES[path] == "anyone" or "WEBSOCKET" in methods:
            continue
        url = re.sub(r"\{[^}:]+(:\w+)?\}", lambda m: "1" if m.group(1) == ":int" else "x", path)
        method = "GET" if "GET" in methods else sorted(methods)[0]
        reply = anonymous.request(method, url, json={"data": [], "fn_index": 0, "session_hash": "x"})
        refused = reply.status_code in (401, 403) or (
            reply.status_code in (302, 303, 307) and "login" in reply.headers.get("location", "")
        )
        assert refused, f"{method} {path} answered {reply.status_code} to an anonymous caller: {reply.text[:200]}"


def _call(app, client: httpx.Client, index: int, data: list[Any]) -> httpx.Response:
    body = {"data": data, "fn_index": index, "session_hash": uuid.uuid4().hex}
    return client.post("/gradio_api/run/predict", json=body, timeout=300)


def _outcome(reply: httpx.Response) -> str:
    if reply.status_code in (401, 403):
        return "refused"
    return "refused" if reply.status_code == 500 and REFUSAL.search(reply.text) else "allowed"


def _clients(app) -> dict[str, httpx.Client]:
    clients = {"anyone": httpx.Client(base_url=app.url)}
    for identity, name in ACCOUNTS.items():
        clients[identity] = ApiClient(app.url, name, PASSWORD).http
    return clients


def test_each_identity_gets_exactly_what_the_table_says_and_refusals_change_nothing(running):
    clients = _clients(running)  # signing in writes sessions and the audit log: before the first dump
    config = running.demo.config
    events = [
        (index, key, _probe_data(config, config["dependencies"][index], key)) for index, key, _fn in _events(running)
    ]
    wrong: list[str] = []
    before = dump(running)
    for identity in access.IDENTITIES:  # every refused call first, then the database must be unchanged
        for index, key, data in events:
            if not access.allows(access.EVENTS[key], identity):
                outcome = _outcome(_call(running, clients[identity], index, data))
                if outcome != "refused":
                    wrong.append(f"{key} (fn_index {index}) as {identity}: expected refused, got {outcome}")
    after = dump(running)
    assert not wrong, "\n".join(wrong)
    assert before == after, "a refused call changed the database: " + str(set(after) ^ set(before))[:2000]
    for identity in access.IDENTITIES:
        for index, key, data in events:
            if access.allows(access.EVENTS[key], identity):
                reply = _call(running, clients[identity], index, data)
                if identity == "anyone" and "Not authenticated" in reply.text:
                    continue  # password sign-in: Gradio itself lets no anonymous caller reach any event
                if _outcome(reply) != "allowed":
                    wrong.append(f"{key} (fn_index {index}) as {identity}: expected allowed, got {reply.text[:200]}")
    assert not wrong, "\n".join(wrong)


def test_the_lean_routes_follow_the_table(running):
    """components/fastpath.py serves some names itself, without Gradio's handler: same rows, same outcomes."""
    clients = _clients(running)
    lean = sorted({path.rsplit("/", 1)[-1] for path, _m in _all_routes(running) if path.startswith("/gradio_api/run/")})
    lean = [name for name in lean if name and "{" not in name]
    assert lean, "components/fastpath.py serves no route"
    before = dump(running)
    for name in lean:
        reply = clients["anyone"].post(f"/gradio_api/run/{name}", json={"data": []})
        assert reply.status_code == 401, f"{name} answered {reply.status_code} to an anonymous caller"
    assert dump(running) == before
    for name in lean:
        least = access.EVENTS[name]
        for identity in access.IDENTITIES[1:]:
            reply = clients[identity].post(f"/gradio_api/run/{name}", json={"data": [], "session_hash": "s"})
            expected = "allowed" if access.allows(least, identity) else "refused"
            assert _outcome(reply) == expected, f"lean {name} as {identity}: {reply.status_code} {reply.text[:200]}"
