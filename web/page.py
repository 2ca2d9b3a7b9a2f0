"""The one HTML page template of the shell's own pages: /login, /logout, /invite and the study pages.

No scripts at all, styles inline only, every text escaped by the caller (``body`` is HTML), and headers that
keep the page out of frames and out of every cache (Back after Log out asks the server again).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import parse_qs

from starlette.datastructures import MutableHeaders
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LIGHT = (
    "color-scheme: light; --bg: #f6f7fb; --text: #1f2937; --card: #fff; --line: #e5e7eb; --field: #9ca3af;"
    " --subtle: #4b5563; --code: #f3f4f6; --soft: #f9fafb; --err-bg: #fef2f2; --err: #991b1b; --err-line: #fecaca;"
    " --info-bg: #eff6ff; --info: #1e3a8a; --info-line: #bfdbfe; --focus: #b45309"
)
DARK = (
    "color-scheme: dark; --bg: #0b0f19; --text: #e5e7eb; --card: #111827; --line: #374151; --field: #6b7280;"
    " --subtle: #cbd5e1; --code: #1f2937; --soft: #1f2937; --err-bg: #3f1d1d; --err: #fecaca; --err-line: #7f1d1d;"
    " --info-bg: #172554; --info: #bfdbfe; --info-line: #1e3a8a; --focus: #fbbf24"
)
# dark when asked for with ?__theme=dark (PageTheme below), or by the system unless ?__theme=light, as Gradio's pages
STYLE = (
    f"""
:root {{{LIGHT}}}
@media (prefers-color-scheme: dark) {{html:not([data-theme=light]) {{{DARK}}}}}
html[data-theme=dark] {{{DARK}}}
"""
    + """
body {font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--text);
  margin: 0; display: flex; justify-content: center; padding: 3rem 1rem}
main {background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 2rem; max-width: 30rem;
  width: 100%; box-shadow: 0 1px 3px rgba(0, 0, 0, .06)}
main.wide {max-width: 42rem}
a {color: var(--info)}
h1 {margin: 0 0 .5rem; font-size: 1.6rem} p, li {line-height: 1.5}
label {display: block; font-weight: 600; margin: 1rem 0 .3rem}
input {width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid var(--field);
  border-radius: 6px; background: var(--card); color: var(--text)}
input:focus-visible, button:focus-visible, a:focus-visible {outline: 3px solid var(--focus); outline-offset: 1px}
fieldset input, input[type=radio], input[type=checkbox] {width: auto}
form > button, .signin-button {margin-top: 1.3rem; width: 100%; padding: .7rem; font-size: 1rem; font-weight: 600;
  color: #fff; background: #4338ca; border: 0; border-radius: 6px; cursor: pointer; display: block;
  text-align: center; text-decoration: none; box-sizing: border-box}
.message {padding: .7rem; border-radius: 6px; margin: 1rem 0 0}
.error {background: var(--err-bg); color: var(--err); border: 1px solid var(--err-line); padding: .7rem; border-radius: 6px}
.info {background: var(--info-bg); color: var(--info); border: 1px solid var(--info-line)}
.note {font-size: .9rem; color: var(--subtle)} code {background: var(--code); padding: 0 .25rem; border-radius: 4px}
fieldset {border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; padding: .8rem 1rem}
legend {font-weight: 600; padding: 0 .3rem} fieldset label {display: block; margin: .35rem 0; font-weight: 400}
.button {display: inline-block; margin-top: 1rem; padding: .7rem 1.2rem; font-size: 1rem; font-weight: 600;
  color: #fff; background: #4338ca; border: 0; border-radius: 6px; cursor: pointer; text-decoration: none; width: auto}
.secondary {background: var(--card); color: var(--text); border: 1px solid var(--field); font-weight: 400}
.code {font-size: 1.6rem; font-weight: 700; letter-spacing: .05em; background: var(--code); padding: .3rem .8rem;
  border-radius: 6px; display: inline-block; user-select: all; -webkit-user-select: all}
.instructions {background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: .2rem 1rem; margin: 1rem 0}
h2 {font-size: 1.15rem; margin: 1rem 0 .3rem} details {margin: 1rem 0} summary {cursor: pointer; font-weight: 600}
.mistake {margin-bottom: .8rem} .rules {margin: .2rem 0}
"""
)
TEMPLATE = """<!doctype html>
<html lang="en" data-theme="system"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · CompStudio</title><style>{style}</style>{head}</head>
<body><main{main_attrs}><h1>{heading}</h1>
{body}
</main></body></html>
"""


def headers(
    form_hosts: tuple[str, ...] = (), referrer: str = "same-origin", fetch_ahead: bool = False
) -> dict[str, str]:
    """No scripts, no frames, no cache; ``form_hosts``: other sites a form may post to (Mechanical Turk);
    ``fetch_ahead``: the page may have the browser fetch this site's files ahead (``<link rel="prefetch">``, which
    browsers check against ``default-src``), still with no script, image, font or connection of its own."""
    form_action = " ".join(("'self'", *form_hosts))
    sources = (
        "default-src 'self'; script-src 'none'; img-src 'none'; font-src 'none'; connect-src 'none'; "
        "object-src 'none'; frame-src 'none'; media-src 'none'; manifest-src 'none'; worker-src 'none'"
        if fetch_ahead
        else "default-src 'none'"
    )
    return {
        "Content-Security-Policy": f"{sources}; style-src 'unsafe-inline'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
        "Referrer-Policy": referrer,
    }


def render(
    title: str,
    body: str,
    *,
    heading: str | None = None,
    status: int = 200,
    main_id: str = "",
    state: str = "",
    wide: bool = False,
    form_hosts: tuple[str, ...] = (),
    referrer: str = "same-origin",
    fetch_ahead: Sequence[str] = (),
) -> HTMLResponse:
    """A page: ``title`` and ``heading`` are escaped here, ``body`` must already be escaped HTML. ``fetch_ahead``:
    this site's files (``/assets/...``) the browser fetches into its cache while the person reads the page."""
    attrs = ""
    if main_id:
        attrs += f' id="{html.escape(main_id, quote=True)}"'
    if state:
        attrs += f' data-state="{html.escape(state, quote=True)}"'
    if wide:
        attrs += ' class="wide"'
    text = TEMPLATE.format(
        title=html.escape(title),
        heading=html.escape(heading if heading is not None else title),
        style=STYLE,
        main_attrs=attrs,
        body=body,
        head="".join(
            f'<link rel="prefetch" href="{html.escape(path.lstrip("/"), quote=True)}">' for path in fetch_ahead
        ),
    )
    return HTMLResponse(text, status_code=status, headers=headers(form_hosts, referrer, bool(fetch_ahead)))


THEMES = frozenset({"dark", "light"})
SYSTEM = b'<html lang="en" data-theme="system">'


class PageTheme:
    """ASGI middleware: ``?__theme=dark`` (or ``light``) on one of these pages sets its theme, as it does on the
    Gradio pages; without it the page follows the system's preference (STYLE's media query). Only responses of
    a request that asks for a theme are read, and only this template's first tag is changed."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        theme = self._asked(scope)
        if theme is None:
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = bytearray()

        async def themed(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if not MutableHeaders(scope=message).get("content-type", "").startswith("text/html"):
                    await send(message)  # not a page: passed on as it comes
                    return
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            text = bytes(body)
            if text.find(SYSTEM, 0, 200) >= 0:
                text = text.replace(SYSTEM, f'<html lang="en" data-theme="{theme}">'.encode(), 1)
            headers = MutableHeaders(scope=start)
            headers["content-length"] = str(len(text))
            await send(start)
            await send({"type": "http.response.body", "body": text})

        await self.app(scope, receive, themed)

    @staticmethod
    def _asked(scope: Scope) -> str | None:
        if scope["type"] != "http" or scope.get("method") not in {"GET", "POST"}:
            return None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        theme = (query.get("__theme") or [""])[0]
        return theme if theme in THEMES else None
