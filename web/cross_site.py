"""Writes a browser sends on another site's behalf are refused, for the whole app, in one middleware.

Cross-site request forgery: a page elsewhere makes a signed-in person's browser post to this app, and the browser
adds the person's cookie. Sign in with Hugging Face keeps its session in a ``SameSite=None`` cookie (a Space runs in
an iframe on huggingface.co), which such a post carries; the password session cookie is ``SameSite=Lax``. So every
write (any method but GET, HEAD and OPTIONS) is checked here, before any route, page or mount sees it: the
sign-in and sign-out forms, the study and invitation forms, ``POST /api/<name>`` and every Gradio route under a
mount (queue join, upload, ...). Reads pass: a cross-site read gets no CORS grant, and a link must still open a page.

Browsers say where a request comes from in ``Sec-Fetch-Site``; an older browser is judged by ``Origin`` against
``Host`` / ``X-Forwarded-Host``. Scripts (httpx, curl, gradio_client) and servers (Prolific's webhooks) send
neither, and pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from web import page

#: methods that change nothing: a browser may send them on another site's behalf
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: what a refused write says to a script or a page's own script (JSON)
CROSS_SITE = {
    "error": "A request from another site was refused: use this app's own pages, or call the API from a script.",
    "session": "cross_site",
}


def same_origin(connection: HTTPConnection) -> bool:
    """Whether the request's ``Origin`` (when it has one) names this host. Behind a reverse proxy the public host
    is in Host (when the proxy passes it on) or X-Forwarded-Host."""
    origin = connection.headers.get("origin")
    if not origin or origin == "null":
        return True
    hosts = {connection.headers.get("host", ""), *connection.headers.get("x-forwarded-host", "").split(",")}
    return urlsplit(origin).netloc in {host.strip() for host in hosts if host.strip()}


def cross_site(connection: HTTPConnection) -> bool:
    """Whether a browser sent this request on behalf of another site.

    ``Sec-Fetch-Site``: this app's own pages send ``same-origin`` and a typed address or a bookmark ``none``;
    ``same-site`` (another app under the same registrable domain, e.g. another Space) and ``cross-site`` are
    refused. Without it, ``Origin`` decides (:func:`same_origin`).

    >>> from starlette.requests import Request
    >>> def asked(*headers):
    ...     raw = [(k.encode(), v.encode()) for k, v in (("host", "app.example"), *headers)]
    ...     return cross_site(Request({"type": "http", "method": "POST", "headers": raw}))
    >>> asked(("sec-fetch-site", "same-origin")), asked(("sec-fetch-site", "cross-site")), asked()
    (False, True, False)
    >>> asked(("sec-fetch-site", "same-site")), asked(("origin", "https://evil.example"))
    (True, True)
    >>> asked(("origin", "http://app.example"))
    False
    """
    fetch_site = connection.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site.strip().lower() in {"cross-site", "same-site"}
    return not same_origin(connection)


def refusal(connection: HTTPConnection) -> Response:
    """403: a page with the reason and a way on for a form a person sent, the JSON sentence for anything else."""
    if "text/html" in connection.headers.get("accept", ""):
        body = (
            '<p class="error" role="alert" id="cross-site-message">This form was sent from another site\'s page, so '
            "nothing was done. Open CompStudio itself and try again there.</p>"
            '<p><a class="button" href="/">Open CompStudio</a></p>'
        )
        return page.render("Refused: sent from another site", body, status=403, state="cross-site")
    return JSONResponse(CROSS_SITE, status_code=403, headers={"Cache-Control": "no-store"})


@dataclass
class CrossSiteWrites:
    """ASGI middleware: see the module's docstring."""

    app: ASGIApp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") not in SAFE_METHODS:
            connection = HTTPConnection(scope)
            if cross_site(connection):
                await refusal(connection)(scope, receive, send)
                return
        await self.app(scope, receive, send)
