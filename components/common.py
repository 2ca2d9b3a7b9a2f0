"""Small pieces every tab uses: who is calling, turning domain errors into gr.Error, tab handles."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError

# one pass: HTML's special characters and Markdown's syntax each become one entity (escaping in two passes
# turned the "#" of "&#x27;" into "&#35;", and the page showed "&#x27;")
_MARKDOWN_ENTITIES = {ord(c): f"&#{ord(c)};" for c in "\\`*_{}[]()#+!|~-\"'"} | {
    ord("&"): "&amp;",
    ord("<"): "&lt;",
    ord(">"): "&gt;",
}
#: what Markdown turns into a link by itself: a scheme's "://", "www." and the "@" of an e-mail address
_AUTOLINK = re.compile(r"://|\b(?i:www)\.|@")


@dataclass(frozen=True)
class TabHandle:
    """What a tab builder returns: the tab and optionally a ``(fn, outputs)`` pair that app.py runs on page load (fn takes ``request: gr.Request``). ``inner_tabs``:
    tabs inside it that need a higher role, with that role (hidden on lower roles' pages,
    web/audiences.py). ``filled_on_select``: the tab's own select event runs ``on_load`` (Gradio fires
    it when a page opens on the tab, so the page load leaves that tab to it). The least role that sees the tab is
    said once, in ``components.TABS``; an inner tab's role only here, where the inner tab is declared."""

    tab: gr.Tab
    on_load: tuple[Callable[..., Any], list[Any]] | None = None
    inner_tabs: tuple[tuple[gr.Tab, str], ...] = ()
    filled_on_select: bool = False


@dataclass(frozen=True)
class Caller:
    """Who is calling, resolved once per HTTP request by the gate (web/gate.py) and carried in the request's scope
    (:data:`CALLER_KEY`): the account's name (None when nobody is signed in), its identity (one of
    ``backend.accounts.access.IDENTITIES``) and the audience of the page it gets (``web.audiences.caller_of``;
    None when it was resolved outside a web request: a test, or a handler called directly).

    It lives as long as its request: a role change or a disabled account takes effect on the next request."""

    name: str | None
    identity: str
    audience: str | None


#: where the gate keeps the request's :class:`Caller`, in its scope's state (``request.state``)
CALLER_KEY = "compstudio.caller"
#: the attribute the access guard (components/access.py) sets on the ``gr.Request`` Gradio passes to an event:
#: the caller's name, for this call; :func:`caller` answers from it
CALLER_ATTRIBUTE = "compstudio_caller"
_UNRESOLVED = object()


def caller(ctx: AppContext, request: gr.Request | None) -> str | None:
    """The signed-in user's name (:func:`resolve_caller`). Inside an event the access guard has resolved it for
    this call already (``CALLER_ATTRIBUTE`` on the request): that name is returned, nothing is looked up again."""
    resolved = getattr(request, CALLER_ATTRIBUTE, _UNRESOLVED)
    if resolved is not _UNRESOLVED:
        return resolved  # type: ignore[return-value]
    return resolve_caller(ctx, request)


def scope_caller(request: Any) -> Caller | None:
    """The :class:`Caller` the gate put in the scope of ``request`` (a ``gr.Request``, which wraps the HTTP
    request of the call, queued or not, or a Starlette request); None when there is none (no HTTP request)."""
    state = getattr(request, "state", None)  # gr.Request reads it from the request it wraps
    found = getattr(state, CALLER_KEY, None) if state is not None else None
    return found if isinstance(found, Caller) else None


def resolve_caller(ctx: AppContext, request: gr.Request | None) -> str | None:
    """The signed-in user's name, or None when nobody is signed in (the backend's role checks then refuse).

    The web shell resolves who is calling once per HTTP request, for password sign-in and Sign in with Hugging
    Face alike (web/gate.py, web/signin.py ``Identity.caller``), keeps it in the request's scope
    (:func:`scope_caller`) and hands the name to Gradio as each mount's ``auth_dependency``, so Gradio sets
    ``request.username`` on every call. ``ctx`` is kept for the handlers' one way of asking.
    """
    del ctx
    if request is None:
        return None
    found = scope_caller(request)
    if found is not None:
        return found.name
    return getattr(request, "username", None) or None


def ui_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a CompStudioError into a gr.Error with the message a person can act on."""

    if inspect.isgeneratorfunction(inspect.unwrap(fn)):

        @functools.wraps(fn)
        def streaming(*args: Any, **kwargs: Any) -> Any:
            try:
                yield from fn(*args, **kwargs)
            except CompStudioError as exc:
                raise gr.Error(str(exc), print_exception=False) from None

        return streaming

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CompStudioError as exc:
            raise gr.Error(str(exc), print_exception=False) from None

    return wrapper


def counted(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the noun in the number it takes (issue 44 §13: "1 sequence round", "2 sequence rounds").

    >>> counted(1, "sequence round"), counted(2, "sequence round"), counted(1, "sequence", "sequences")
    ('1 sequence round', '2 sequence rounds', '1 sequence')
    """
    return f"{count} {one if count == 1 else (many or one + 's')}"


def esc(text: Any) -> str:
    """Escape user-written text for Markdown/HTML output (also neutralises Markdown syntax); not for code spans,
    where Markdown shows entities as typed (use ``<code>{html.escape(text)}</code>`` there).

    >>> esc("'output' <b> a-b")
    '&#39;output&#39; &lt;b&gt; a&#45;b'

    Nothing a person wrote becomes a link: Markdown's autolinks (``scheme://``, ``www.``, an e-mail address) are
    broken by an entity, which the page shows as the character (issue 44 §9: "ftp://example.org/x" was a link,
    and the link swallowed the escaped ")" after it, shown as a raw "&#41;").

    >>> esc("(ftp://example.org/x)"), esc("www.x.org a@b.org")
    ('&#40;ftp&#58;//example.org/x&#41;', 'www&#46;x.org a&#64;b.org')
    """
    escaped = ("" if text is None else str(text)).translate(_MARKDOWN_ENTITIES)
    return _AUTOLINK.sub(_unlink, escaped)


def _unlink(match: re.Match[str]) -> str:
    found = match.group(0)
    return {"://": "&#58;//", "@": "&#64;"}.get(found, found[:-1] + "&#46;")
