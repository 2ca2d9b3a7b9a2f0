"""Issue 15 §1: every endpoint of the running app against the access table: what each event declares
(components/events.py), collected from the built pages (web/access_table.py).

The app's full API is read from the running server: each mounted Blocks' ``/config`` lists its events with their
``fn_index``, named or not, and the FastAPI app lists every plain route, ours and each mount's Gradio routes.
Each event is called by ``fn_index`` through its mount's ``/gradio_api/run`` route, and the lean ``/api`` routes
of web/scripts.py by name, as anonymous, annotator, author (an annotator with the VQA author permission),
reviewer and admin. On a mount, only that mount's audience gets past the gate (web/gate.py); there each event
follows its row.
The test fails for an event declared without an identity and for any outcome that differs from the table, and the
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
from web.access_cli import PAGE, update_page
from web.access_table import access_table, markdown

PASSWORD = IDENTITY_PASSWORD
ACCOUNTS = IDENTITY_ACCOUNTS
REFUSAL = re.compile(
    r"You are not signed in|This needs the \w+ role|There is no account named|is disabled|"
    r"needs the author permission|not in the access table"
)
HOW_TO_ADD = (
    "declare it as an Event (components/events.py) beside its panel, with the least identity that may call it: "
    "one of " + ", ".join(access.IDENTITIES)
)


@pytest.fixture(scope="module")
def running(identities_app):
    return identities_app


@pytest.fixture(scope="module")
def table(running) -> dict[str, str]:
    """The access table of every page of the running app, as declared (every mount built)."""
    return access_table(running.shell.blocks[mount] for mount in running.shell.blocks)


def dump(app) -> list[str]:
    """The whole database as SQL text (a fresh connection: the app's own are per thread)."""
    with sqlite3.connect(app.ctx.settings.db_path) as conn:
        return list(conn.iterdump())


def _events(app, mount: str) -> list[tuple[int, str, Any]]:
    """(fn_index, table key: the api_name, BlockFunction) of every event of one mount that runs on the server."""
    return [(index, fn.api_name, fn) for index, fn in app.shell.blocks[mount].fns.items() if fn.fn is not None]


def _mount_of(identity: str) -> str:
    """The page an account of ``identity`` uses (web/audiences.py; the test accounts are in no study)."""
    return f"/{identity}"


def _audience_mounts(app) -> list[str]:
    return [mount for mount in app.shell.blocks if mount != "/scripts"]


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


def test_every_event_is_in_the_access_table(running, table):
    cookies = ApiClient(running.url, ACCOUNTS["admin"], PASSWORD).cookies
    keys: set[str] = set()
    missing = []
    for mount in running.shell.blocks:
        if mount == "/admin" or mount == "/scripts":
            # the first request to a page builds it (web/mounts.py): seconds on a loaded machine
            config = httpx.get(f"{running.url}{mount}/config", cookies=cookies, timeout=120).json()
            served = {index for index, _key, _fn in _events(running, mount)}
            listed = {index for index, dependency in enumerate(config["dependencies"]) if dependency.get("backend_fn")}
            assert served == listed  # /config names exactly the events the server runs
        for index, key, fn in _events(running, mount):
            keys.add(key)
            if key not in table:
                missing.append(f"{mount}: event fn_index={index} api_name={fn.api_name!r}: {key!r}")
    assert not missing, "no access rule for:\n  " + "\n  ".join(missing) + "\n" + HOW_TO_ADD
    assert keys == set(table)
    assert not hasattr(access, "EVENTS")  # no hand-written table: the declarations are the only place


def _all_routes(app) -> list[tuple[str, set[str]]]:
    """Every route of the shell, each page's Gradio routes included (each page built: web/mounts.py)."""
    from web.mounts import Page

    def walk(routes, prefix=""):
        for route in routes:
            if isinstance(route, Page):  # its own FastAPI app, with the Blocks mounted at the page's path
                app.shell.blocks[route.path]  # noqa: B018 - reading a page builds it
                yield from walk(route.app.routes, prefix)
            elif hasattr(route, "original_router"):  # FastAPI's included router (Gradio's /gradio_api routes)
                yield from walk(route.original_router.routes, prefix + route.include_context.prefix)
            elif hasattr(route, "app") and hasattr(route.app, "routes"):  # a mounted Blocks
                yield from walk(route.app.routes, prefix + route.path)
            elif hasattr(route, "path"):
                yield prefix + route.path, set(getattr(route, "methods", None) or {"WEBSOCKET"})

    return list(walk(app.shell.app.routes))


def _refused(reply: httpx.Response) -> bool:
    return reply.status_code in (401, 403) or (
        reply.status_code in (302, 303, 307) and "login" in reply.headers.get("location", "")
    )


def test_every_route_needs_its_audiences_sign_in(running):
    """Anonymous callers get only the shell's open pages and Gradio's frontend files; on a mount, every other
    route (config, info, queue, upload, file, heartbeat, stream, cancel, reset, ...) refuses anyone who is not of
    that mount's audience (web/gate.py)."""
    from web import OPEN_ROUTES
    from web.gate import FRONTEND

    routes = _all_routes(running)
    mounts = list(running.shell.blocks)
    assert {"/gradio_api/heartbeat/{session_hash}", "/gradio_api/reset", "/gradio_api/cancel"} <= {
        path[len("/admin") :] for path, _m in routes if path.startswith("/admin/")
    }
    anonymous = httpx.Client(base_url=running.url)
    others = {identity: ApiClient(running.url, name, PASSWORD).http for identity, name in ACCOUNTS.items()}
    checked = 0
    for path, methods in routes:
        if "WEBSOCKET" in methods:
            continue
        mount = next((m for m in mounts if path.startswith(m + "/") or path == m), None)
        rest = path[len(mount) :] if mount else path
        if (mount and FRONTEND.search(rest)) or (not mount and path in OPEN_ROUTES):
            continue
        if rest.rstrip("/") in {"/login", "/logout"}:  # the shell's own under every mount (web/signin.py)
            continue
        url = re.sub(r"\{[^}:]+(:\w+)?\}", lambda m: "1" if m.group(1) == ":int" else "x", path)
        method = "GET" if "GET" in methods else sorted(methods)[0]
        body = {"data": [], "fn_index": 0, "session_hash": "x"}
        reply = anonymous.request(method, url, json=body, timeout=30)
        assert _refused(reply), (
            f"{method} {path} answered {reply.status_code} to an anonymous caller: {reply.text[:200]}"
        )
        if mount and mount != "/scripts":
            for identity, client in others.items():
                if _mount_of(identity) == mount:
                    continue
                reply = client.request(method, url, json=body, timeout=30, follow_redirects=False)
                assert reply.status_code in (401, 303), f"{method} {path} answered {reply.status_code} to {identity}"
                if reply.status_code == 401 and method != "HEAD":
                    assert reply.json()["session"] == "role_changed", reply.text
        checked += 1
    assert checked > 100


def _call(mount: str, client: httpx.Client, index: int, data: list[Any]) -> httpx.Response:
    body = {"data": data, "fn_index": index, "session_hash": uuid.uuid4().hex}
    return client.post(f"{mount}/gradio_api/run/predict", json=body, timeout=300)


def _outcome(reply: httpx.Response) -> str:
    if reply.status_code in (401, 403):
        return "refused"
    return "refused" if reply.status_code == 500 and REFUSAL.search(reply.text) else "allowed"


def _clients(app) -> dict[str, httpx.Client]:
    clients = {"anyone": httpx.Client(base_url=app.url)}
    for identity, name in ACCOUNTS.items():
        clients[identity] = ApiClient(app.url, name, PASSWORD).http
    return clients


def test_each_identity_gets_exactly_what_the_table_says_and_refusals_change_nothing(running, table):
    """On its own page and on the scripts mount, each identity's calls follow the table; refused calls change
    nothing."""
    clients = _clients(running)  # signing in writes sessions and the audit log: before the first dump
    plans = []
    for identity in access.IDENTITIES[1:]:
        for mount in (_mount_of(identity), "/scripts"):
            config = running.shell.blocks[mount].config
            for index, key, _fn in _events(running, mount):
                plans.append((identity, mount, index, key, _probe_data(config, config["dependencies"][index], key)))
    wrong: list[str] = []
    before = dump(running)
    for identity, mount, index, key, data in plans:  # every refused call first, then the database must be unchanged
        if not access.allows(table[key], identity):
            outcome = _outcome(_call(mount, clients[identity], index, data))
            if outcome != "refused":
                wrong.append(f"{mount} {key} (fn_index {index}) as {identity}: expected refused, got {outcome}")
    after = dump(running)
    assert not wrong, "\n".join(wrong)
    assert before == after, "a refused call changed the database: " + str(set(after) ^ set(before))[:2000]
    for identity, mount, index, key, data in plans:
        if access.allows(table[key], identity):
            reply = _call(mount, clients[identity], index, data)
            if _outcome(reply) != "allowed":
                wrong.append(
                    f"{mount} {key} (fn_index {index}) as {identity}: expected allowed, got {reply.text[:200]}"
                )
    assert not wrong, "\n".join(wrong)


def test_the_lean_routes_follow_the_table(running, table):
    """web/scripts.py serves some names itself, without Gradio's handler: same rows, same outcomes."""
    clients = _clients(running)
    lean = sorted({path.rsplit("/", 1)[-1] for path, _m in _all_routes(running) if path.startswith("/api/")})
    lean = [name for name in lean if name and "{" not in name]
    assert lean, "web/scripts.py serves no /api route"
    before = dump(running)
    for name in lean:
        reply = clients["anyone"].post(f"/api/{name}", json={"data": []})
        assert reply.status_code == 401, f"{name} answered {reply.status_code} to an anonymous caller"
    assert dump(running) == before
    for name in lean:
        least = table[name]
        for identity in access.IDENTITIES[1:]:
            reply = clients[identity].post(f"/api/{name}", json={"data": []})
            expected = "allowed" if access.allows(least, identity) else "refused"
            # a call with no arguments is refused as malformed (422) only once the table allowed it
            outcome = "allowed" if reply.status_code in (200, 422) else _outcome(reply)
            assert outcome == expected, f"lean {name} as {identity}: {reply.status_code} {reply.text[:200]}"


def test_the_access_page_in_docs_is_the_table_the_app_serves(running):
    """docs/access.md is generated from the built pages (``compstudio access --update-docs``): it must be current."""
    pages = {mount: running.shell.blocks[mount] for mount in running.shell.blocks}
    served = update_page(PAGE.read_text(encoding="utf-8"), markdown(pages))
    assert PAGE.read_text(encoding="utf-8") == served, "docs/access.md is stale: run compstudio access --update-docs"
