"""A lean HTTP route for the hot scripting endpoints (``POST /gradio_api/run/<name>``).

The annotation endpoints (``intent_next``, ``intent_submit``, ``intent_skip``, ``intent_viewed``) are
registered with ``gr.api`` as usual: they are listed on ``/?view=api`` and ``gradio_client`` calls them
through Gradio's queue. For raw HTTP, Gradio's own ``/run/<name>`` route costs ~4 ms of server CPU per
call before the handler even starts (routing across ~100 routes, request models, session state, run
history), which caps one process near 165 submissions a second. This route serves the *same contract*
(same path, same body ``{"data": [...], "session_hash": ...}``, same reply ``{"data": [result], ...}``,
same error payload and status codes, same sign-in check) in ~1 ms, and runs the very same handler
functions, so the role checks and rules are the ones the UI and the queue use.

It is installed through ``launch(app_kwargs={"routes": ...})``: routes given to the FastAPI constructor
come before the ones Gradio adds, and every Gradio middleware (CORS, sessions for OAuth, body limit)
still wraps it. Other endpoint names are not matched here and reach Gradio unchanged.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import gradio as gr
import orjson
from gradio.utils import error_payload
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_PREFIX = "/gradio_api"
_log = logging.getLogger(__name__)


async def _username(request: Request) -> tuple[bool, str | None]:
    """(signed in or no sign-in needed, user) exactly as Gradio's ``login_check``/``get_current_user``."""
    app = request.app
    if getattr(app, "auth_dependency", None) is not None:
        user = app.auth_dependency(request)
        if inspect.isawaitable(user):
            user = await user
    else:
        token = request.cookies.get(f"access-token-{app.cookie_id}") or request.cookies.get(
            f"access-token-unsecure-{app.cookie_id}"
        )
        user = app.tokens.get(token)
    needs_login = app.auth is not None or getattr(app, "auth_dependency", None) is not None
    return (user is not None or not needs_login), user


class LazyLimiter:
    """An ``anyio.CapacityLimiter`` made on first use (it must be made inside the server's event loop)."""

    def __init__(self, tokens: int):
        self.tokens = tokens
        self._limiter: anyio.CapacityLimiter | None = None

    def get(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.tokens)
        return self._limiter


def _arity(fn: Callable[..., Any]) -> list[str]:
    """The data arguments of an endpoint (all but ``request``), in order."""
    return [name for name in inspect.signature(fn).parameters if name != "request"]


def fast_routes(endpoints: Mapping[str, Callable[..., Any]], concurrency: int = 2) -> list[Route]:
    """One Starlette route per endpoint name, at ``/gradio_api/run/<name>`` (and with a trailing slash).

    Each ``fn(*data, request=gr.Request)`` is a synchronous handler (it does SQLite work), run on a worker
    thread as Gradio would run it, but at most ``concurrency`` at a time: every one of them writes, and
    writes queue on one lock anyway. Measured at 30 annotators: with Gradio's 40 threads the lock was
    held 2.6 ms per submit (its holder kept losing the GIL to threads doing the parts outside the lock);
    with 2 it is held ~1.1 ms and waiting moves to the event loop's fair queue. Two rather than one so
    that one slow call (a video linked into the media folder on first use) does not stall the rest.
    """
    arguments = {name: _arity(fn) for name, fn in endpoints.items()}
    limiter = LazyLimiter(concurrency)

    async def run(name: str, request: Request) -> Response:
        allowed, username = await _username(request)
        if not allowed:
            detail = {"error": "Not authenticated", "auth_message": request.app.get_blocks().auth_message}
            return JSONResponse({"detail": detail}, status_code=401)
        try:
            body = orjson.loads(await request.body())
            data = body.get("data", [])
            if not isinstance(data, list):
                raise ValueError("data must be a list")
        except (orjson.JSONDecodeError, ValueError, AttributeError) as exc:
            return JSONResponse({"detail": f"the body must be JSON {{'data': [...]}}: {exc}"}, status_code=422)
        expected = arguments[name]
        started = time.perf_counter()
        try:
            if len(data) != len(expected):
                raise gr.Error(
                    f"{name} takes {len(expected)} argument(s) ({', '.join(expected) or 'none'}); got {len(data)}",
                    print_exception=False,
                )
            gr_request = gr.Request(request=request, username=username, session_hash=body.get("session_hash"))
            result = await anyio.to_thread.run_sync(
                lambda: endpoints[name](*data, request=gr_request), limiter=limiter.get()
            )
        except Exception as error:  # the same payload and status Gradio's /run route gives
            if not isinstance(error, gr.Error) or error.print_exception:
                _log.exception("%s failed", name)
            return JSONResponse(error_payload(error, request.app.get_blocks().show_error), status_code=500)
        duration = time.perf_counter() - started
        reply = {
            "data": [result],
            "is_generating": False,
            "duration": duration,
            "average_duration": None,
            "render_config": None,
            "changed_state_ids": [],
        }
        return Response(orjson.dumps(reply), media_type="application/json")

    def endpoint(name: str) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            return await run(name, request)

        return handle

    return [
        Route(f"{_PREFIX}/run/{name}{slash}", endpoint(name), methods=["POST"])
        for name in sorted(endpoints)
        for slash in ("", "/")
    ]
