"""The access table in front of every event handler (backend/accounts/access.py).

:func:`guard_events` wraps each event's function once the Blocks are built: before the handler runs, the
caller is checked against the handler's row; a handler with no row is refused to everyone (and logged), so
an endpoint added without a row fails closed. The services' ``require_role`` checks still run inside.
The request is read from Gradio's call context (``LocalContext.request``), which Gradio sets around every
event call, so handlers keep their own signatures (and Gradio still injects what they ask for).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.context import LocalContext

from backend.accounts import access
from backend.context import AppContext
from backend.errors import PermissionDenied
from components.common import caller

log = logging.getLogger("compstudio.access")


def key_of(block_fn: Any) -> str:
    """The access-table key of one of Gradio's BlockFunctions."""
    fn = inspect.unwrap(block_fn.fn)
    module = fn.__module__
    if module == "__main__":  # `python app.py`: app.py's own handlers are keyed `app.…` as when it is imported
        module = Path(inspect.getfile(fn)).stem
    return access.event_key(block_fn.api_name, block_fn.api_visibility == "public", module, fn.__qualname__)


def _guarded(ctx: AppContext, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    least = access.EVENTS.get(key) or access.OAUTH_EVENTS.get(key)

    def check() -> None:
        name = caller(ctx, LocalContext.request.get(None))
        try:
            if least is None:
                raise PermissionDenied(
                    f"The action {key!r} is not in the access table (backend/accounts/access.py); refused."
                )
            access.check(ctx.database, name, least)
        except PermissionDenied as exc:
            log.warning("refused %s for %s: %s", key, name or "(not signed in)", exc)
            raise gr.Error(str(exc), print_exception=False) from None

    if inspect.isasyncgenfunction(fn) or inspect.iscoroutinefunction(fn) or inspect.isgeneratorfunction(fn):
        raise TypeError(f"{key}: guard_events wraps plain functions only; add a wrapper for this kind")

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check()
        return fn(*args, **kwargs)

    return guarded


def guard_events(ctx: AppContext, demo: gr.Blocks) -> list[str]:
    """Put the access check in front of every event handler of ``demo``; returns the keys with no row."""
    missing = []
    for block_fn in demo.fns.values():
        if block_fn.fn is None:  # runs in the browser only (js=...): nothing to call on the server
            continue
        key = key_of(block_fn)
        if key not in access.EVENTS:
            missing.append(key)
            log.error("event %s is not in the access table (backend/accounts/access.py): refused to everyone", key)
        block_fn.fn = _guarded(ctx, key, block_fn.fn)
    return missing
