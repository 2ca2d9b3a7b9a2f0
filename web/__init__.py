"""The web shell: a FastAPI app with one mounted ``gr.Blocks`` per audience (issue 25).

``create_app(ctx)`` is the one place that answers "which page does a person get, and who may call what" at the
HTTP level:

* ``/login``, ``/logout`` (web/signin.py), ``/invite`` (web/invitations.py), ``/study/...`` and
  ``/webhooks/prolific`` (web/study_pages.py): plain pages from one template (web/page.py);
* Sign in with Hugging Face on a Space: ``huggingface_hub.attach_huggingface_oauth`` (``/oauth/huggingface/...``);
* ``/<audience>/``: one ``gr.Blocks`` per audience (web/audiences.py), each mounted with
  ``gr.mount_gradio_app(..., auth_dependency=...)`` that admits only that audience, behind the gate
  (web/gate.py) that guards every Gradio route under it;
* ``/scripts/``: the named endpoints for scripts and ``gradio_client``; ``POST /api/<name>``: the lean
  annotation routes (web/scripts.py);
* ``/``: a signed-in person goes to their audience's page, anyone else to ``/login``;
* gzip and long-lived cache headers for Gradio's hashed frontend files (web/assets.py).

Who is calling is resolved once per request, by the gate: a ``Caller(name, identity, audience)`` kept in the
request's scope (web/gate.py, web/signin.py), which the mounts' ``auth_dependency`` and the access guard read.
Which events a person may call is declared with each event (components/events.py) and checked against that
caller before every handler (components/access.py), underneath the services' ``require_role``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import gradio as gr
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from backend.context import AppContext
from components.common import scope_caller
from web import look
from web.assets import FrontendAssets, FrontendCache, PageGzip
from web.audiences import Audience, all_audiences, build_audience
from web.cross_site import CrossSiteWrites
from web.gate import Gate, session_state
from web.gradio_gaps import is_running, set_session_capacity
from web.invitations import invitation_routes
from web.mounts import Page, Pages
from web.page import PageTheme
from web.scripts import MOUNT as SCRIPTS
from web.scripts import api_routes, build_scripts_blocks, old_address_routes
from web.signin import SignIn, build_signin
from web.study_pages import study_routes

#: the shell's routes that answer without a sign-in (everything under a mount needs that mount's audience,
#: web/gate.py): the sign-in and study pages (the signed study link and the one-time invitation token are the
#: credentials; Prolific's signature is the webhook's), ``/`` (a redirect), ``/session`` (says whether the caller
#: is signed in), Hugging Face's OAuth routes, and the old script addresses (a 307 to /scripts, which refuses)
OPEN_ROUTES = frozenset(
    {
        "/", "/session", "/login", "/login/", "/logout", "/logout/", "/invite", "/study/{study_id:int}", "/webhooks/prolific",
        "/oauth/huggingface/login", "/oauth/huggingface/callback", "/oauth/huggingface/logout",
        "/gradio_api/{rest:path}", "/config", "/config/", "/info",
    }
)  # fmt: skip


@dataclass
class Shell:
    """What create_app made, for tests and app.py: the FastAPI app, each mount's Blocks by path, the sign-in."""

    app: FastAPI
    blocks: Pages  # each mount's Blocks by path, built on first use (web/mounts.py)
    audiences: dict[str, Audience] = field(default_factory=dict)
    signin: SignIn | None = None

    @property
    def ready(self) -> bool:
        """Whether the server is serving, and the mounts built so far with it (their queues started)."""
        return self.blocks.serving and all(is_running(blocks) for blocks in self.blocks.built.values())


def mount_kwargs(ctx: AppContext) -> dict[str, Any]:
    """What ``launch`` used to get, for every mount."""
    return {
        "allowed_paths": [str(ctx.settings.media_dir.resolve())],
        "js": look.APP_JS,
        "css": look.CSS,
        "theme": look.app_theme(),
        "head": look.HEAD,
        "footer_links": ["api"],
        # every upload (images, CSV, JSONL, zip): larger files get 413 and the page says so; each gr.File
        # also names its file types, which Gradio checks on the server
        "max_file_size": int(ctx.settings.max_upload_mb * 1024 * 1024),
        "ssr_mode": False,
        "show_error": True,
    }


def create_shell(ctx: AppContext, *, prebuild: bool = False) -> Shell:
    """The web app of ``ctx`` (see the module's docstring), with what it is made of. Each mount's Blocks is
    built on its first request (web/mounts.py), or, with ``prebuild``, in the background once the server serves."""
    from components import intents

    frontend = FrontendCache()  # the frontend files pages asked for: kept in memory, fetched ahead at sign-in
    signin = build_signin(ctx, ahead=frontend.ahead)
    identity = signin.identity
    pages = Pages()
    pages.prebuild = prebuild
    app = FastAPI(title="CompStudio", docs_url=None, redoc_url=None, openapi_url=None, lifespan=pages.lifespan)
    shell = Shell(app=app, blocks=pages, signin=signin, audiences=all_audiences())

    async def root(request: Request) -> Response:
        caller = await anyio.to_thread.run_sync(identity.caller, request)
        if caller.name is None:
            return RedirectResponse("/login", status_code=303, headers={"Cache-Control": "no-store"})
        target = f"/{caller.audience}/" if caller.audience in shell.audiences else "/login"
        return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})

    async def session(request: Request) -> Response:
        """``GET /session?page=<audience>``: whether the caller may still use that page (the page's script asks)."""
        caller = await anyio.to_thread.run_sync(identity.caller, request)
        wanted = request.query_params.get("page") or caller.audience
        ended = session_state(caller.name, caller.audience == wanted)
        return JSONResponse(
            ended or {"session": "ok", "audience": caller.audience}, headers={"Cache-Control": "no-store"}
        )

    app.add_api_route("/", root, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_api_route("/session", session, methods=["GET"], include_in_schema=False)
    mount_paths = (*(audience.path for audience in shell.audiences.values()), SCRIPTS)
    for route in [
        *signin.routes(mount_paths),
        *api_routes(identity, intents.api.endpoints(ctx)),
        *old_address_routes(),
        *((*invitation_routes(signin), *study_routes(ctx)) if not identity.oauth else ()),
    ]:
        app.router.routes.append(route)

    kwargs = mount_kwargs(ctx)

    def page(path: str, build: Callable[[], gr.Blocks], admits: Callable[[str], bool]) -> None:
        def dependency(request: Request) -> str | None:
            """Gradio's sign-in check: the caller the gate resolved for this request (no database read)."""
            caller = scope_caller(request)
            return caller.name if caller is not None and caller.audience and admits(caller.audience) else None

        def mount(on: FastAPI, blocks: gr.Blocks) -> None:
            set_session_capacity(blocks, ctx.settings.session_capacity)
            # root_path: the mount's own path, so that every URL Gradio builds for a file (a gallery's images, a
            # video) is under the mount. Without it, an event that skips the queue (queue=False) strips its whole
            # request path, mount included, and its files pointed at /gradio_api/file=... at the root (issue 44 §1)
            gr.mount_gradio_app(on, blocks, path=path, root_path=path, auth_dependency=dependency, **kwargs)

        app.router.routes.append(shell.blocks.add(Page(path, build, mount, admits, shell.blocks)))

    # the scripts mount first: the background build goes in this order, and scripts call as soon as the server serves
    page(SCRIPTS, functools.partial(build_scripts_blocks, ctx), lambda audience: True)  # any signed-in account
    for audience in shell.audiences.values():
        page(audience.path, functools.partial(build_audience, ctx, audience), _admits(audience.name))
    app.add_middleware(Gate, pages=shell.blocks, caller=identity.caller, media_dir=ctx.settings.media_dir)
    if identity.oauth:  # its session middleware must be outside the gate, which reads the session
        from huggingface_hub import attach_huggingface_oauth

        attach_huggingface_oauth(app)
    app.add_middleware(FrontendAssets, cache=frontend, fallback_mount=SCRIPTS)
    app.add_middleware(PageGzip, mounts=lambda: shell.blocks.routes.keys())  # the page's inline config (web/assets.py)
    app.add_middleware(PageTheme)  # ?__theme= on the shell's own pages (web/page.py)
    app.add_middleware(CrossSiteWrites)  # outermost: a forged write is refused before anything else reads it
    return shell


def _admits(name: str) -> Callable[[str], bool]:
    """A page's admission: the callers whose audience (web/audiences.caller_of) is ``name``."""
    return lambda audience: audience == name


def create_app(ctx: AppContext, *, prebuild: bool = False) -> FastAPI:
    """The web app of ``ctx``: serve it with uvicorn (app.py)."""
    return create_shell(ctx, prebuild=prebuild).app
