"""The gate in front of every mounted Blocks: each Gradio route under ``/<audience>/`` needs that audience's sign-in.

Gradio's own ``auth_dependency`` guards the routes it marks with ``Depends(login_check)`` (config, info, queue
join and data, upload, file, the call routes), but not the routes keyed by a session hash or an event id
(heartbeat, stream, cancel, reset), and its file route serves any file in its cache to whoever knows the hashed
path. This middleware answers every request under a mount first:

* Gradio's frontend files (``assets/``, ``static/``, ``svelte/``, the theme, icons) pass: they hold no data;
* ``<mount>/login`` and ``<mount>/logout`` pass: the shell routes them to its own (web/signin.py), before the
  mount's Gradio routes of the same name;
* a caller who is not of the mount's audience gets, for the page itself, a redirect (``/`` when signed in as
  someone else, who is sent on to their page; ``/login`` otherwise), and for anything else a 401 whose JSON says
  in one sentence what happened: ``{"error": "You are signed out: sign in again.", "session": "signed_out",
  "link": "/login"}`` or ``"Your role changed: reload the page."`` (``"role_changed"``, ``"link": "/"``);
* ``gradio_api/file=`` serves only files of the media folder and the files this mount's Blocks wrote
  (web/gradio_gaps.written_by); others get 403;
* the page itself is sent with ``Cache-Control: no-store`` (Back after Log out asks the server again, and gets
  the login page).

The caller is resolved here once per request, on a worker thread: ``Caller(name, identity, audience)``
(components/common.py; web/signin.Identity.caller keeps it in the request's scope). Everything after the gate
reads that answer and reads no identity from the database: the mount's ``auth_dependency`` (Gradio's
``request.username``), the access guard in front of every event handler (components/access.py: the caller's
identity against the event's least identity), and the handlers' ``caller(ctx, request)``. A queued event runs
with the HTTP request that joined the queue (Gradio keeps it as the event's request), and so with its caller.
Nothing is kept across requests: a role change or a disabled account takes effect on the next request. The
services keep their own role checks (the command line and scripts call them directly).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import anyio
from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from components.common import Caller
from web.gradio_gaps import written_by
from web.mounts import Page, Pages

FRONTEND = re.compile(
    r"^/(assets|static|svelte)/|^/(favicon\.ico|theme\.css|gradio_api/theme\.css|manifest\.json|robots\.txt)$"
    r"|^/pwa_icon|^/gradio_api/custom_component/"
)
SIGNED_OUT = {"error": "You are signed out: sign in again.", "session": "signed_out", "link": "/login"}
ROLE_CHANGED = {"error": "Your role changed: reload the page.", "session": "role_changed", "link": "/"}


def session_state(username: str | None, admitted: bool) -> dict[str, str] | None:
    """None when the caller may go on; else what to tell them (signed out, or their role changed)."""
    if admitted:
        return None
    return SIGNED_OUT if username is None else ROLE_CHANGED


class Gate:
    """ASGI middleware: see the module's docstring."""

    def __init__(
        self,
        app: ASGIApp,
        pages: Pages,
        caller: Callable[[HTTPConnection], Caller],
        media_dir: Path,
    ):
        self.app = app
        self.pages = pages
        self.caller = caller
        self.media_dir = str(media_dir.resolve())

    def _mount(self, path: str) -> tuple[Page, str] | None:
        first = "/" + path.split("/", 2)[1] if path.count("/") >= 1 else path
        mount = self.pages.routes.get(first)
        if mount is None:
            return None
        return mount, path[len(first) :]

    def _file_allowed(self, mount: Page, rest: str) -> bool:
        wanted = unquote(rest[len("/gradio_api/file=") :])
        try:
            resolved = str(Path(wanted).resolve())
        except (OSError, ValueError):
            return False
        if resolved == self.media_dir or resolved.startswith(self.media_dir + "/"):
            return True
        return mount.blocks is not None and written_by(mount.blocks, wanted)

    def _guarded(self, scope: Scope) -> tuple[Page, str] | None:
        """The mount a request is for and the path under it, when the gate must answer it first (None: it passes:
        not under a mount, Gradio's frontend files, the shell's own sign-in routes)."""
        found = self._mount(scope["path"]) if scope["type"] in {"http", "websocket"} else None
        if found is None or FRONTEND.search(found[1]):
            return None
        if found[1].rstrip("/") in {"/login", "/logout"}:  # the shell's own, routed before the mount (web/signin.py)
            return None
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self._guarded(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        mount, rest = found
        caller = await anyio.to_thread.run_sync(self.caller, HTTPConnection(scope))  # kept in the scope
        admitted = caller.name is not None and caller.audience is not None and mount.admits(caller.audience)
        page = rest in {"", "/"} and scope.get("method") in {"GET", "HEAD"}
        ended = session_state(caller.name, admitted)
        if ended is not None:
            await self._ended(ended, page, scope, receive, send)
            return
        if rest.startswith("/gradio_api/file=") and not self._file_allowed(mount, rest):
            reply = JSONResponse({"error": "This file belongs to another page; it is not yours to fetch."}, 403)
            await reply(scope, receive, send)
            return
        if not page:
            await self.app(scope, receive, send)
            return

        async def no_store(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, no_store)

    @staticmethod
    async def _ended(ended: dict[str, str], page: bool, scope: Scope, receive: Receive, send: Send) -> None:
        """Tell a caller who may not go on why: a websocket is closed, the page redirects, anything else gets 401."""
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4401})
        elif page:
            await RedirectResponse(ended["link"], status_code=303)(scope, receive, send)
        else:
            await JSONResponse(ended, status_code=401, headers={"Cache-Control": "no-store"})(scope, receive, send)
