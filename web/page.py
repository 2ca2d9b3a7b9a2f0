"""The one HTML page template of the shell's own pages: /login, /logout, /invite and the study pages.

No scripts at all, styles inline only, every text escaped by the caller (``body`` is HTML), and headers that
keep the page out of frames and out of every cache (Back after Log out asks the server again).
"""

from __future__ import annotations

import html

from starlette.responses import HTMLResponse

STYLE = """
body {font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #f6f7fb; color: #1f2937;
  margin: 0; display: flex; justify-content: center; padding: 3rem 1rem}
main {background: #fff; border: 1px solid #e5e7eb; border-radius: 12px; padding: 2rem; max-width: 30rem;
  width: 100%; box-shadow: 0 1px 3px rgba(0, 0, 0, .06)}
main.wide {max-width: 42rem}
h1 {margin: 0 0 .5rem; font-size: 1.6rem} p, li {line-height: 1.5}
label {display: block; font-weight: 600; margin: 1rem 0 .3rem}
input {width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #9ca3af;
  border-radius: 6px}
fieldset input, input[type=radio], input[type=checkbox] {width: auto}
form > button, .signin-button {margin-top: 1.3rem; width: 100%; padding: .7rem; font-size: 1rem; font-weight: 600;
  color: #fff; background: #4338ca; border: 0; border-radius: 6px; cursor: pointer; display: block;
  text-align: center; text-decoration: none; box-sizing: border-box}
.message {padding: .7rem; border-radius: 6px; margin: 1rem 0 0}
.error {background: #fef2f2; color: #991b1b; border: 1px solid #fecaca; padding: .7rem; border-radius: 6px}
.info {background: #eff6ff; color: #1e3a8a; border: 1px solid #bfdbfe}
.note {font-size: .9rem; color: #4b5563} code {background: #f3f4f6; padding: 0 .25rem; border-radius: 4px}
fieldset {border: 1px solid #e5e7eb; border-radius: 8px; margin: 1rem 0; padding: .8rem 1rem}
legend {font-weight: 600; padding: 0 .3rem} fieldset label {display: block; margin: .35rem 0; font-weight: 400}
.button {display: inline-block; margin-top: 1rem; padding: .7rem 1.2rem; font-size: 1rem; font-weight: 600;
  color: #fff; background: #4338ca; border: 0; border-radius: 6px; cursor: pointer; text-decoration: none; width: auto}
.secondary {background: #fff; color: #374151; border: 1px solid #9ca3af; font-weight: 400}
.code {font-size: 1.6rem; font-weight: 700; letter-spacing: .05em; background: #f3f4f6; padding: .3rem .8rem;
  border-radius: 6px; display: inline-block; user-select: all; -webkit-user-select: all}
.instructions {background: #f9fafb; border: 1px solid #e5e7eb; border-radius: 8px; padding: .2rem 1rem; margin: 1rem 0}
h2 {font-size: 1.15rem; margin: 1rem 0 .3rem} details {margin: 1rem 0} summary {cursor: pointer; font-weight: 600}
.mistake {margin-bottom: .8rem} .rules {margin: .2rem 0}
@media (prefers-color-scheme: dark) {
  body {background: #111827; color: #e5e7eb} main {background: #1f2937; border-color: #374151}
  .code, code {background: #374151; color: #f9fafb} .instructions {background: #111827; border-color: #374151}
  .note {color: #9ca3af} fieldset {border-color: #374151} a {color: #a5b4fc}
  .error {background: #450a0a; color: #fecaca; border-color: #7f1d1d} .info {background: #172554; color: #bfdbfe}
  .button, form > button {background: #6366f1; color: #fff} .secondary {background: #1f2937; color: #e5e7eb}
  input {background: #111827; color: #e5e7eb; border-color: #6b7280}
}
"""
TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · CompStudio</title><style>{style}</style></head>
<body><main{main_attrs}><h1>{heading}</h1>
{body}
</main></body></html>
"""


def headers(form_hosts: tuple[str, ...] = (), referrer: str = "same-origin") -> dict[str, str]:
    """No scripts, no frames, no cache; ``form_hosts``: other sites a form may post to (Mechanical Turk)."""
    form_action = " ".join(("'self'", *form_hosts))
    return {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
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
) -> HTMLResponse:
    """A page: ``title`` and ``heading`` are escaped here, ``body`` must already be escaped HTML."""
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
    )
    return HTMLResponse(text, status_code=status, headers=headers(form_hosts, referrer))
