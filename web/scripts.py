"""What scripts call: the named Gradio endpoints on their own mount, and lean JSON routes for the hot ones.

* ``/scripts/``: one ``gr.Blocks`` holding every named endpoint the tabs register with ``gr.api`` (components.API
  lists the registrars), mounted like the people's pages but open to any signed-in account; each call is still
  checked against the least identity its endpoint declares (components/events.py). The people's pages hold none of them, so their
  configuration stays small. ``gradio_client.Client("http://host:7860/scripts/", auth=(name, password))``.
  The old addresses keep working: ``/gradio_api/...``, ``/config`` and ``/info`` answer with a 307 to the same
  address under ``/scripts`` (a 307 keeps a POST a POST, with its body).
* ``POST /api/<name>`` for the annotation endpoints (intent_next, intent_submit, intent_skip, intent_draft,
  intent_viewed, intent_played: components/intents/api.py): body ``{"data": [arguments...]}``, reply ``{"data": [result]}``; on failure ``{"error":
  message}`` with 401 (not signed in), 403 (refused), 422 (a malformed body) or 400 (the call failed: the message
  says why). They run the very same handler functions as ``gr.api`` registers, and check the same declared
  rows (the same :class:`~components.events.Event` objects), in ~1 ms instead of Gradio's ~4 ms of per-call machinery (routing across ~100 routes, request models,
  session state, run history), which capped one process near 165 submissions a second.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import anyio
import gradio as gr
import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from backend.context import AppContext
from backend.errors import PermissionDenied
from components.access import admit
from components.common import ui_errors
from components.events import Event
from web.access_table import check_events
from web.gate import SIGNED_OUT
from web.signin import Identity, LazyLimiter

_log = logging.getLogger(__name__)
PREFIX = "/api"
MOUNT = "/scripts"


class WrongArguments(ValueError):
    """A call with the wrong number of arguments (422)."""


def _arity(fn: Callable[..., Any]) -> list[str]:
    """The data arguments of an endpoint (all but ``request``), in order."""
    return [name for name in inspect.signature(fn).parameters if name != "request"]


def build_scripts_blocks(ctx: AppContext) -> gr.Blocks:
    """The Blocks of every named endpoint (components.API: each tab module's registrar of its ``gr.api`` calls)."""
    from components import API

    with gr.Blocks(title="CompStudio scripts") as blocks:
        gr.Markdown("# CompStudio · endpoints for scripts\n\nSee **Use via API** below, and docs/api.md.")
        for module_name, registrar in API:
            getattr(importlib.import_module(module_name), registrar)(ctx)
    check_events(blocks)  # every event wired through the access table's guard (components/access.py)
    blocks.queue(default_concurrency_limit=4)
    return blocks


def _error(message: str, status: int) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def _failure(name: str, exc: Exception) -> Response:
    """A failed call's answer: 403 refused, 422 wrong arguments, 400 a named error (the message says why), 500 a
    bug (logged)."""
    if isinstance(exc, PermissionDenied):
        return _error(str(exc), 403)
    if isinstance(exc, WrongArguments):
        return _error(str(exc), 422)
    if isinstance(exc, gr.Error):  # the handlers' named errors (components.common.ui_errors, in _lean)
        return _error(str(exc.message), 400)
    _log.error("%s failed", name, exc_info=exc)
    return _error(f"{name} failed on the server; the log says why.", 500)


def _data(body: bytes) -> list[Any]:
    """The arguments of a call, from its body ``{"data": [...]}`` (ValueError: a malformed body)."""
    parsed = orjson.loads(body)  # orjson.JSONDecodeError is a ValueError
    data = parsed.get("data", []) if isinstance(parsed, dict) else None
    if not isinstance(data, list):
        raise ValueError("data must be a list")
    return data


class _Lean(NamedTuple):
    """One lean route's endpoint: its handler (named errors turned into ``gr.Error``, answered with 400), the least
    identity it declares, and its data arguments."""

    handler: Callable[..., Any]
    least: str
    arguments: list[str]


def _lean(event: Event) -> _Lean:
    if not event.endpoint or event.handler is None:
        raise ValueError(f"{event.name!r} is not a named endpoint with a handler (trigger=None)")
    handler = ui_errors(event.handler)
    return _Lean(handler, event.least, _arity(handler))


def _call(name: str, lean: _Lean, data: list[Any], request: gr.Request) -> Any:
    expected = lean.arguments
    if len(data) != len(expected):
        raise WrongArguments(
            f"{name} takes {len(expected)} argument(s) ({', '.join(expected) or 'none'}); got {len(data)}"
        )
    return lean.handler(*data, request=request)


def api_routes(identity: Identity, endpoints: Sequence[Event], concurrency: int = 2) -> list[Route]:
    """``POST /api/<name>`` (and with a trailing slash) for each of ``endpoints``: named endpoints (``trigger=None``)
    declared as :class:`components.events.Event`, each checked against its own least identity, the very row
    ``gr.api`` registers it with on the scripts mount.

    Each handler, ``fn(*data, request=gr.Request)``, is a synchronous function (it does SQLite work), run on a worker
    thread, but at most ``concurrency`` at a time: every one of them writes, and writes queue on one lock
    anyway. Measured at 30 annotators: with 40 threads the lock was held 2.6 ms per submit (its holder kept
    losing the GIL to threads doing the parts outside the lock); with 2 it is held ~1.1 ms and waiting moves to
    the event loop's fair queue. Two rather than one so that one slow call (a video linked into the media folder
    on first use) does not stall the rest.
    """
    ctx = identity.ctx
    declared = {event.name: _lean(event) for event in endpoints}
    limiter = LazyLimiter(concurrency)

    async def run(name: str, request: Request) -> Response:
        caller = await anyio.to_thread.run_sync(identity.caller, request)  # once, kept in the request's scope
        if caller.name is None:
            return JSONResponse(SIGNED_OUT, status_code=401)  # the gate's sentence (web/gate.py)
        try:
            data = _data(await request.body())
        except ValueError as exc:
            return _error(f"the body must be JSON {{'data': [...]}}: {exc}", 422)

        def call() -> Any:
            admit(ctx, caller, declared[name].least, name)  # the guard's answer (components/access.py)
            return _call(name, declared[name], data, gr.Request(request=request, username=caller.name))

        try:
            result = await anyio.to_thread.run_sync(call, limiter=limiter.get())
        except Exception as exc:  # noqa: BLE001 - every failure is answered (_failure)
            return _failure(name, exc)
        return Response(orjson.dumps({"data": [result]}), media_type="application/json")

    def endpoint(name: str) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            return await run(name, request)

        return handle

    return [
        Route(f"{PREFIX}/{name}{slash}", endpoint(name), methods=["POST"])
        for name in sorted(declared)
        for slash in ("", "/")
    ]


def old_address_routes() -> list[Route]:
    """The addresses scripts used before the scripts mount: a 307 to the same address under ``/scripts``."""

    async def moved(request: Request) -> Response:
        target = MOUNT + request.url.path
        if request.url.query:
            target += "?" + request.url.query
        return RedirectResponse(target, status_code=307)

    methods = ["GET", "POST", "HEAD"]
    return [
        Route("/gradio_api/{rest:path}", moved, methods=methods),
        Route("/config", moved, methods=methods),
        Route("/config/", moved, methods=methods),
        Route("/info", moved, methods=methods),
    ]
