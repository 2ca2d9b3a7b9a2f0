"""Who is calling, and the sign-in routes: ``/login``, ``/logout`` (password sign-in or Sign in with Hugging Face).

Password sign-in (docs/decisions.md, "Sign-in"): our login page posts to ``/login``; a good sign-in gets a
session cookie whose token is kept in SQLite (backend/accounts/sessions.py), so a restart signs nobody out and a
disabled account or an expired session is refused at once. A form post (``Accept: text/html``) gets a page back;
any other client (gradio_client, scripts, tests/e2e_helpers.ApiClient) gets Gradio's JSON contract: 200
``{"success": true}`` plus the cookie.

Sign in with Hugging Face (on a Space): ``huggingface_hub.attach_huggingface_oauth`` adds
``/oauth/huggingface/login|callback|logout`` and the session middleware; :meth:`Identity.user` reads the session
with ``parse_huggingface_oauth`` and gives the account ``backend.accounts.oauth.oauth_sign_in`` makes of it.

:class:`Identity` answers "who is calling" once per HTTP request, in both modes: :meth:`Identity.user` the name,
:meth:`Identity.caller` the whole ``Caller(name, identity, audience)`` (components/common.py), each kept in the
request's scope. The gate (web/gate.py) asks for the caller of every request under a mount; every mount's
``auth_dependency`` (and so Gradio's ``request.username``), the access guard (components/access.py) and the lean
``/api`` routes (web/scripts.py) read that answer. Nothing is kept across requests: a role change or a disabled
account (whose sessions no longer sign in) takes effect on the next request.
"""

from __future__ import annotations

import datetime
import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from backend.accounts import oauth, sessions, signin
from backend.campaigns import workers
from backend.context import AppContext
from backend.errors import PermissionDenied, StorageFull
from components.common import CALLER_KEY, Caller
from web import page, study_views
from web.audiences import caller_of
from web.client_address import client_address

ABOUT = (
    "CompStudio is where crowd annotators build, and researchers evaluate vision-language models on, three "
    "compositional-generalization benchmarks: ViLPAct (intents and activity planning from videos), "
    "MMComposition (compositional visual question answering) and CoFe (in-context examples)."
)
FORM = """<form method="post">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false"
  required value="{username}"{focus_user}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required{focus_password}>
<button type="submit">Sign in</button>
</form>"""
OAUTH_LOGIN = "/oauth/huggingface/login"
#: where the resolved user name is kept in a request's scope (one resolution per request; the whole Caller is
#: kept under components.common.CALLER_KEY)
SCOPE_KEY = "compstudio.user"
_UNSET = object()


class LazyLimiter:
    """An ``anyio.CapacityLimiter`` made on first use (it must be made inside the server's event loop)."""

    def __init__(self, tokens: int):
        self.tokens = tokens
        self._limiter: anyio.CapacityLimiter | None = None

    def get(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.tokens)
        return self._limiter


def wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def set_session_cookie(response: Response, request: Request, name: str, token: str, hours: float) -> Response:
    """The session cookie every sign-in path sets (password, study link, invitation): HttpOnly, SameSite=Lax,
    Secure over HTTPS, for the session's lifetime."""
    response.set_cookie(
        name,
        token,
        max_age=int(hours * 3600),
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


def public_base(request: Request) -> str:
    """The app's address as the browser reached it (a proxy's X-Forwarded-Host/-Proto first)."""
    host = (request.headers.get("x-forwarded-host") or request.headers.get("host") or "").split(",")[0].strip()
    scheme = (request.headers.get("x-forwarded-proto") or request.url.scheme).split(",")[0].strip()
    return f"{scheme}://{host}" if host else str(request.base_url).rstrip("/")


def study_worker_signed_out(ctx: AppContext, username: str | None, request: Request) -> HTMLResponse | None:
    """What /logout shows a crowd-study worker instead of the password form: their study and the link to continue,
    as a study page (None for everyone else). Here, not in web/study_pages.py, which builds on this module."""
    found = workers.continue_link(ctx.database, username, public_base(request))
    if found is None:
        return None
    study, worker, link = found
    body = study_views.signed_out_body(study, worker, link)
    return page.render("Logged out", body, main_id="study-page", state="signed_out", wide=True, referrer="no-referrer")


@dataclass(frozen=True)
class Identity:
    """Who is calling: the one place the shell asks (password session cookie, or the Hugging Face session)."""

    ctx: AppContext
    cookie: str

    @property
    def oauth(self) -> bool:
        return self.ctx.settings.effective_auth_mode == "oauth"

    def user(self, connection: HTTPConnection) -> str | None:
        """The signed-in, enabled user of this request, or None; resolved once per request."""
        state = connection.scope.setdefault("state", {})
        found = state.get(SCOPE_KEY, _UNSET)
        if found is _UNSET:
            found = self._resolve(connection)
            state[SCOPE_KEY] = found
        return found

    def caller(self, connection: HTTPConnection) -> Caller:
        """Who is calling in this request, in full (:class:`~components.common.Caller`: the name, the identity,
        the audience whose page they get), resolved once per request and kept in its scope, where the mounts'
        ``auth_dependency``, the access guard and the lean ``/api`` routes read it. Never kept across requests:
        a role change or a disabled account takes effect on the next one. Reads the database: call it on a
        worker thread."""
        state = connection.scope.setdefault("state", {})
        found = state.get(CALLER_KEY)
        if not isinstance(found, Caller):
            found = caller_of(self.ctx, self.user(connection))
            state[CALLER_KEY] = found
        return found

    def _resolve(self, connection: HTTPConnection) -> str | None:
        if not self.oauth:
            return sessions.user_for(self.ctx.database, connection.cookies.get(self.cookie))
        userinfo = hf_userinfo(connection)
        if userinfo is None:
            return None
        try:
            user = oauth.oauth_sign_in(self.ctx.database, self.ctx.settings, userinfo)
        except PermissionDenied:
            return None
        return None if user.disabled else user.username


def hf_userinfo(connection: HTTPConnection) -> dict[str, Any] | None:
    """The Hugging Face user of the request's OAuth session (``parse_huggingface_oauth``), as the userinfo
    mapping ``oauth_sign_in`` takes; None when not signed in or the sign-in has expired."""
    if "session" not in connection.scope:  # no session middleware (password sign-in)
        return None
    from huggingface_hub import parse_huggingface_oauth

    info = parse_huggingface_oauth(connection)  # type: ignore[arg-type]
    if info is None or not info.user_info.preferred_username:
        return None
    expires = info.access_token_expires_at
    if expires.timestamp() > 0 and expires < datetime.datetime.now():
        return None
    orgs = [{"preferred_username": o.preferred_username, "name": o.name} for o in info.user_info.orgs or ()]
    return {"preferred_username": info.user_info.preferred_username, "orgs": orgs}


@dataclass(frozen=True)
class SignIn:
    """The sign-in routes of one app (build it with :func:`build_signin`)."""

    identity: Identity
    limiter: LazyLimiter  # at most two sign-ins hash at once (scrypt: ~50 ms and 16 MiB each)
    ahead: Callable[[], list[str]] = list  # the frontend files to fetch while the person types (web/assets.py)

    @property
    def ctx(self) -> AppContext:
        return self.identity.ctx

    @property
    def cookie(self) -> str:
        return self.identity.cookie

    def user(self, connection: HTTPConnection) -> str | None:
        return self.identity.user(connection)

    # -- the page ---------------------------------------------------------------------------------
    def demo_note(self) -> str:
        settings = self.ctx.settings
        if not settings.demo_content or self.identity.oauth:
            return ""
        path = html.escape(str(settings.data_dir / "demo-accounts.json"))
        return (
            '<p class="note"><strong>Demo content is on.</strong> The demo accounts (<code>demo-annotator'
            "</code>, <code>demo-reviewer</code>, <code>demo-admin</code>) and their passwords are in the "
            f"file <code>{path}</code> on the server, readable by whoever started it.</p>"
        )

    def page(self, *, username: str = "", error: str = "", info: str = "", status: int = 200) -> HTMLResponse:
        message = ""
        if error:
            message = f'<p class="message error" role="alert" id="signin-message">{html.escape(error)}</p>'
        elif info:
            message = f'<p class="message info" role="status" id="signin-message">{html.escape(info)}</p>'
        if self.identity.oauth:
            form = (
                f'<p><a class="signin-button" id="hf-signin" href="{OAUTH_LOGIN}">Sign in with Hugging Face</a></p>'
                '<p class="note">This CompStudio runs on a Hugging Face Space: sign in with your Hugging Face '
                "account. An admin gives you your role.</p>"
            )
        else:
            form = FORM.format(
                username=html.escape(username, quote=True),
                focus_user="" if username else " autofocus",
                focus_password=" autofocus" if username else "",
            ) + (
                '<p class="note">No account yet? Ask an admin: admins create accounts in the Admin tab '
                "(or with <code>python -m backend users add</code>).</p>"
            )
        body = f"<p>{html.escape(ABOUT)}</p>\n{message}\n{form}\n{self.demo_note()}"
        return page.render("Sign in", body, heading="CompStudio", status=status, fetch_ahead=self.ahead())

    # -- routes -----------------------------------------------------------------------------------
    async def login_page(self, request: Request) -> Response:
        if request.url.path.endswith("/"):
            return RedirectResponse("/login", status_code=303)
        if await anyio.to_thread.run_sync(self.user, request):
            return RedirectResponse("/", status_code=303)
        info = "You are signed out." if request.query_params.get("signed_out") else ""
        return self.page(info=info)

    async def login(self, request: Request) -> Response:
        if self.identity.oauth:
            return JSONResponse({"detail": "sign in with Hugging Face: GET /oauth/huggingface/login"}, status_code=405)
        form = await request.form()
        username, password = str(form.get("username") or ""), str(form.get("password") or "")
        address = client_address(request, self.ctx.settings.trusted_proxies)
        html_reply = wants_html(request)
        try:
            result = await anyio.to_thread.run_sync(
                signin.sign_in,
                self.ctx.database,
                self.ctx.settings,
                username,
                password[:1024],
                address,
                limiter=self.limiter.get(),
            )
        except StorageFull as exc:  # a sign-in writes (session, audit): say so, not a bare 500
            if html_reply:
                return self.page(username=username.strip()[:200], error=str(exc), status=503)
            return JSONResponse({"detail": str(exc)}, status_code=503)
        if not result.ok:
            if html_reply:
                reply: Response = self.page(username=username.strip()[:200], error=result.message, status=result.status)
            else:
                reply = JSONResponse({"detail": result.message}, status_code=result.status)
            if result.retry_after:
                reply.headers["Retry-After"] = str(math.ceil(result.retry_after))
            return reply
        response: Response = RedirectResponse("/", status_code=303) if html_reply else JSONResponse({"success": True})
        return set_session_cookie(response, request, self.cookie, result.token or "", self.ctx.settings.session_hours)

    async def logout(self, request: Request) -> Response:
        html_reply = wants_html(request) or request.method == "GET"
        if self.identity.oauth:  # frees the person's leases at once (issue 13 §2), then drops the HF session
            username = (hf_userinfo(request) or {}).get("preferred_username")
            await anyio.to_thread.run_sync(signin.sign_out_user, self.ctx.database, username)
            request.session.pop("oauth_info", None)
            if not html_reply:
                return JSONResponse({"success": True})
            return RedirectResponse("/login?signed_out=1", status_code=303)
        username = await anyio.to_thread.run_sync(signin.sign_out, self.ctx.database, request.cookies.get(self.cookie))
        # a crowd-study worker has no password: they get their study and the link to continue (issue 26 §4)
        study_page = (
            await anyio.to_thread.run_sync(study_worker_signed_out, self.ctx, username, request)
            if html_reply and username
            else None
        )
        response: Response = study_page or (
            RedirectResponse("/login?signed_out=1", status_code=303) if html_reply else JSONResponse({"success": True})
        )
        response.delete_cookie(self.cookie, path="/", httponly=True, samesite="lax")
        return response

    def routes(self, mounts: tuple[str, ...] = ()) -> list[Route]:
        """``/login`` and ``/logout``, and the same under each mount (gradio_client signs in at ``<its URL>/login``;
        they come before the mounts, whose Gradio has routes of the same name)."""
        routes = []
        for prefix in ("", *mounts):
            routes += [
                Route(f"{prefix}/login", self.login_page, methods=["GET"]),
                Route(f"{prefix}/login/", self.login_page, methods=["GET"]),
                Route(f"{prefix}/login", self.login, methods=["POST"]),
                Route(f"{prefix}/login/", self.login, methods=["POST"]),
                Route(f"{prefix}/logout", self.logout, methods=["GET", "POST"]),
                Route(f"{prefix}/logout/", self.logout, methods=["GET", "POST"]),
            ]
        return routes


def build_signin(ctx: AppContext, ahead: Callable[[], list[str]] = list) -> SignIn:
    """The sign-in routes; ``ahead()``: the frontend files (``/assets/...``) the page has the browser fetch while
    the person types (web/assets.FrontendCache.ahead)."""
    return SignIn(identity=Identity(ctx, sessions.cookie_name(ctx.database)), limiter=LazyLimiter(2), ahead=ahead)
