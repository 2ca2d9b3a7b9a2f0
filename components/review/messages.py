"""A mistake the reviewer made, said next to the button they pressed (issue 13 §1).

The review events run outside the queue (``queue=False``), where Gradio shows no toast for a ``gr.Error``
and marks every output with an "Error" badge that covers the reviewer's own choices. So a handler wrapped
in :func:`said_in` returns the message into one Markdown component and leaves every other output as it is.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.errors import CompStudioError
from components.common import esc

log = logging.getLogger("compstudio.review")


def warning_markdown(message: str) -> str:
    return f"⚠️ **{esc(message)}**"


def said_in(target: gr.Markdown, fn: Callable[..., dict]) -> Callable[..., dict]:
    """``fn`` returns outputs by component; a CompStudioError becomes ``{target: message}`` and one log line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict:
        try:
            return fn(*args, **kwargs)
        except CompStudioError as exc:
            log.info("review: %s: %s", fn.__name__, exc)
            return {target: warning_markdown(str(exc))}

    return wrapper
