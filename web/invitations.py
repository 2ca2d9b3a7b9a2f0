"""The sign-up page of a one-time invitation link: ``/invite?token=...`` (GET: the form; POST: sign up).

A usable link shows the role it invites to and a form for a user name and password of the person's choice;
signing up creates the account, uses the link up and signs the person in (our session cookie, as
web/signin.py sets it), in one transaction (backend/accounts/invitations.py). A forged, used or
expired link gets a page saying so, and no form. No scripts on the page; user text is escaped.
"""

from __future__ import annotations

import html

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from backend.accounts import invitations
from backend.errors import CompStudioError, PermissionDenied
from web import page as template
from web.client_address import client_address
from web.signin import SignIn, set_session_cookie

FORM = """<p>You are invited as <strong>{role}</strong>. Choose your user name and password; this link works once.</p>
{message}
<form method="post">
<input type="hidden" name="token" value="{token}">
<label for="username">User name</label>
<input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required
  value="{username}" autofocus>
<label for="password">Password (8 or more characters)</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required>
<button type="submit" id="signup">Sign up</button>
</form>"""


def _page(body: str, status: int = 200) -> HTMLResponse:
    return template.render("Sign up", body, heading="Join CompStudio", status=status)


def _refused(message: str, status: int = 403) -> HTMLResponse:
    return _page(f'<p class="message" role="alert" id="invite-message">{html.escape(message)}</p>', status)


def _form(token: str, role: str, username: str = "", error: str = "", status: int = 200) -> HTMLResponse:
    message = f'<p class="message" role="alert" id="invite-message">{html.escape(error)}</p>' if error else ""
    body = FORM.format(
        role=html.escape(role),
        message=message,
        token=html.escape(token, quote=True),
        username=html.escape(username, quote=True),
    )
    return _page(body, status)


def invitation_routes(signin: SignIn) -> list[Route]:
    """``/invite`` for an app with password sign-in (``signin`` gives the cookie and the hashing limiter)."""
    database, settings = signin.ctx.database, signin.ctx.settings

    async def page(request: Request) -> Response:
        token = request.query_params.get("token", "")[:200]
        try:
            role = invitations.invitation_role(database, token)
        except PermissionDenied as exc:
            return _refused(str(exc))
        return _form(token, role)

    async def sign_up(request: Request) -> Response:
        form = await request.form()
        token = str(form.get("token") or request.query_params.get("token") or "")[:200]
        username, password = str(form.get("username") or "")[:200], str(form.get("password") or "")[:1024]
        address = client_address(request, settings.trusted_proxies)
        try:
            _, session = await anyio.to_thread.run_sync(
                invitations.accept_invitation,
                database,
                settings,
                token,
                username,
                password,
                address,
                limiter=signin.limiter.get(),
            )
        except PermissionDenied as exc:
            return _refused(str(exc))
        except CompStudioError as exc:
            try:
                role = invitations.invitation_role(database, token)
            except PermissionDenied as gone:
                return _refused(str(gone))
            return _form(token, role, username.strip(), str(exc), status=400)
        response = RedirectResponse("/", status_code=303)
        return set_session_cookie(response, request, signin.cookie, session, settings.session_hours)

    return [
        Route(f"/{invitations.INVITE_PATH}", page, methods=["GET"]),
        Route(f"/{invitations.INVITE_PATH}", sign_up, methods=["POST"]),
    ]
