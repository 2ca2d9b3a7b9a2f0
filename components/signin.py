"""Password sign-in on the web: our login page, ``/login`` and ``/logout``, and the session check Gradio uses.

Gradio's own password login (``launch(auth=...)``) keeps its tokens in a dict in memory (``app.tokens``,
under a cookie whose name is random per process), so every restart signs everyone out, and its login form
clears the user name and cannot say why a sign-in failed. Instead (docs/decisions.md, "Sign-in"):

* ``launch(auth_dependency=...)``, Gradio's public hook for external sign-in, gets :meth:`SignIn.user`:
  it reads our session cookie and asks the database (backend/accounts/sessions.py). Gradio calls it on every
  request (page, config, queue, files, API), so a disabled account or an expired session is refused at once.
* ``/login`` (GET: the page; POST: a sign-in) and ``/logout`` are routes given to the FastAPI constructor
  (``launch(app_kwargs={"routes": ...})``), so they come before the ``/login`` and ``/logout`` Gradio adds.
  A form post (``Accept: text/html``) gets a page back; any other client (gradio_client, scripts,
  tests/e2e_helpers.ApiClient) gets Gradio's JSON contract: 200 ``{"success": true}`` plus the cookie.
* With an ``auth_dependency`` Gradio answers an anonymous page request with a 401; a small middleware
  sends anonymous visitors of ``/`` to ``/login`` instead.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.accounts import sessions, signin
from backend.context import AppContext
from backend.errors import StorageFull
from components.fastpath import LazyLimiter

ABOUT = (
    "CompStudio is where crowd annotators build, and researchers evaluate vision-language models on, three "
    "compositional-generalization benchmarks: ViLPAct (intents and activity planning from videos), "
    "MMComposition (compositional visual question answering) and CoFe (in-context examples)."
)
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · CompStudio</title>
<style>
body {{font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f6f7fb; color: #1f2937;
  margin: 0; display: flex; justify-content: center; padding: 3rem 1rem}}
main {{background: #fff; border: 1px solid #e5e7eb; border-radius: 12px; padding: 2rem; max-width: 30rem;
  width: 100%; box-shadow: 0 1px 3px rgba(0, 0, 0, .06)}}
h1 {{margin: 0 0 .5rem; font-size: 1.6rem}} p {{line-height: 1.5}}
label {{display: block; font-weight: 600; margin: 1rem 0 .3rem}}
input {{width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #9ca3af;
  border-radius: 6px}}
button {{margin-top: 1.3rem; width: 100%; padding: .7rem; font-size: 1rem; font-weight: 600; color: #fff;
  background: #4338ca; border: 0; border-radius: 6px; cursor: pointer}}
.message {{padding: .7rem; border-radius: 6px; margin: 1rem 0 0}}
.error {{background: #fef2f2; color: #991b1b; border: 1px solid #fecaca}}
.info {{background: #eff6ff; color: #1e3a8a; border: 1px solid #bfdbfe}}
.note {{font-size: .9rem; color: #4b5563}} code {{background: #f3f4f6; padding: 0 .25rem; border-radius: 4px}}
</style></head>
<body><main>
<h1>CompStudio</h1>
<p>{about}</p>
{message}
<form method="post">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false"
  required value="{username}"{focus_user}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required{focus_password}>
<button type="submit">Sign in</button>
</form>
{demo}
<p class="note">No account yet? Ask an admin: admins create accounts in the Admin tab
(or with <code>python -m backend users add</code>).</p>
</main></body></html>
"""
# no scripts at all on this page; styles only inline
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
}


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _same_origin(request: Request) -> bool:
    """A browser's cross-site form post carries another site's Origin: refuse it (login CSRF). Behind a
    reverse proxy the public host is in Host (when the proxy passes it on) or X-Forwarded-Host."""
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return True
    hosts = {request.headers.get("host", ""), *request.headers.get("x-forwarded-host", "").split(",")}
    return urlsplit(origin).netloc in {host.strip() for host in hosts if host.strip()}


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


@dataclass(frozen=True)
class SignIn:
    """The sign-in web layer of one app (build it with :func:`build_signin`)."""

    ctx: AppContext
    cookie: str
    limiter: LazyLimiter  # at most two sign-ins hash at once (scrypt: ~50 ms and 16 MiB each)

    # -- what Gradio asks on every request ---------------------------------------------------------
    def user(self, request: HTTPConnection) -> str | None:
        """``auth_dependency``: the signed-in user of this request, or None."""
        return sessions.user_for(self.ctx.database, request.cookies.get(self.cookie))

    # -- the page ---------------------------------------------------------------------------------
    def demo_note(self) -> str:
        settings = self.ctx.settings
        if not settings.demo_content:
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
        body = PAGE.format(
            about=html.escape(ABOUT),
            message=message,
            username=html.escape(username, quote=True),
            focus_user="" if username else " autofocus",
            focus_password=" autofocus" if username else "",
            demo=self.demo_note(),
        )
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    # -- routes -----------------------------------------------------------------------------------
    async def login_page(self, request: Request) -> Response:
        if request.url.path.endswith("/"):
            return RedirectResponse("../login", status_code=303)
        if self.user(request):
            return RedirectResponse("./", status_code=303)
        info = "You are signed out." if request.query_params.get("signed_out") else ""
        return self.page(info=info)

    async def login(self, request: Request) -> Response:
        if not _same_origin(request):
            return JSONResponse({"detail": "sign-in from another site refused"}, status_code=403)
        form = await request.form()
        username, password = str(form.get("username") or ""), str(form.get("password") or "")
        address = request.client.host if request.client else "unknown"
        html_reply = _wants_html(request)
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
        response: Response = RedirectResponse("./", status_code=303) if html_reply else JSONResponse({"success": True})
        return set_session_cookie(response, request, self.cookie, result.token or "", self.ctx.settings.session_hours)

    async def logout(self, request: Request) -> Response:
        if request.method == "POST" and not _same_origin(request):
            return JSONResponse({"detail": "sign-out from another site refused"}, status_code=403)
        username = await anyio.to_thread.run_sync(signin.sign_out, self.ctx.database, request.cookies.get(self.cookie))
        html_reply = _wants_html(request) or request.method == "GET"
        # a crowd-study worker has no password: they get their study and the link to continue (issue 26 §4)
        from components import study_pages  # it builds on this module

        study_page = (
            await anyio.to_thread.run_sync(study_pages.signed_out_page, self.ctx, username, request)
            if html_reply and username
            else None
        )
        response: Response = study_page or (
            RedirectResponse("login?signed_out=1", status_code=303) if html_reply else JSONResponse({"success": True})
        )
        response.delete_cookie(self.cookie, path="/", httponly=True, samesite="lax")
        return response

    def routes(self) -> list[Route]:
        return [
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login/", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/login/", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["GET", "POST"]),
            Route("/logout/", self.logout, methods=["GET", "POST"]),
        ]

    def middleware(self) -> Middleware:
        return Middleware(SignInGate, user=self.user)


class SignInGate:
    """Send an anonymous visitor of the app's page (``GET /``) to the login page. Everything else passes
    (Gradio itself refuses anonymous calls through ``auth_dependency``)."""

    def __init__(self, app: ASGIApp, user: Callable[[HTTPConnection], str | None]):
        self.app = app
        self.user = user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in {"GET", "HEAD"} and scope["path"] == "/":
            if self.user(HTTPConnection(scope)) is None:
                await RedirectResponse("login", status_code=303)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_signin(ctx: AppContext) -> SignIn:
    return SignIn(ctx=ctx, cookie=sessions.cookie_name(ctx.database), limiter=LazyLimiter(2))


def oauth_logout_routes(ctx: AppContext) -> list[Route]:
    """``/logout`` under Sign in with Hugging Face: Gradio's own route only drops the session cookie's user; this
    one, placed before it, also frees the person's leases at once (issue 13 §2), then does the same."""

    async def logout(request: Request) -> Response:
        info = request.session.pop("oauth_info", None) or {}
        username = (info.get("userinfo") or {}).get("preferred_username")
        await anyio.to_thread.run_sync(signin.sign_out_user, ctx.database, username)
        return RedirectResponse("/", status_code=303)

    return [Route("/logout", logout, methods=["GET"]), Route("/logout/", logout, methods=["GET"])]
