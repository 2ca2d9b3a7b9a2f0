"""Mistakes a person made, shown next to what they were doing (issue 13 §1).

A raised ``gr.Error`` puts an "Error" badge over every output of the event, including the person's own
fields, and each badge has to be closed before they can type again (docs/decisions.md, "Errors a person
caused"). Handlers wrapped in :func:`shown_in` instead return the message into one Markdown beside the
form and leave every other output as it was: what they typed stays, and they can fix it and resubmit.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from backend.errors import CompStudioError
from components.common import esc

log = logging.getLogger("compstudio.ui")

#: For events whose outputs include the person's inputs: no progress overlay over them while it runs.
QUIET = {"show_progress": "minimal"}


class Mistake(CompStudioError):
    """A mistake found in the UI handler itself (an empty field), shown like the backend's."""


def mistake_text(message: str) -> str:
    return f"⚠️ {esc(message)}"


def shown_in(message: Any) -> Callable[[Callable[..., dict]], Callable[..., dict]]:
    """Decorate a handler returning a dict keyed by component: a ``CompStudioError`` it raises becomes
    ``{message: "⚠️ <escaped text>"}`` (every other output unchanged) and one line in the server log."""

    def decorate(fn: Callable[..., dict]) -> Callable[..., dict]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> dict:
            try:
                return fn(*args, **kwargs)
            except CompStudioError as exc:
                log.warning("%s refused: %s", fn.__name__, str(exc).replace("\n", " "))
                return {message: mistake_text(str(exc))}

        return wrapper

    return decorate
