"""Mistakes a person made, shown next to what they were doing (issue 13 §1).

A raised ``gr.Error`` puts an "Error" badge over every output of the event, including the person's own
fields, and each badge has to be closed before they can type again (docs/decisions.md, "Errors a person
caused"). Two ways to avoid it, both logging one line and changing no other output:

* :func:`refusal`: a toast (``gr.Warning``) plus the message as Markdown for a component by the field, for
  handlers that check a choice themselves (no choice made, two ticks on a single-choice item);
* :func:`shown_in`: a decorator for handlers returning a dict keyed by component: a ``CompStudioError`` they
  raise becomes ``{message: "⚠️ <escaped text>"}``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, Literal, TypedDict

import gradio as gr

from backend.errors import CompStudioError
from components.common import esc

log = logging.getLogger("compstudio.ui")


class ProgressOptions(TypedDict, total=False):
    show_progress: Literal["full", "minimal", "hidden"]


#: For events whose outputs include the person's inputs: no progress overlay over them while it runs.
QUIET: ProgressOptions = {"show_progress": "minimal"}


def refusal(message: str, who: str | None = None) -> str:
    """Toast ``message``, log one line, and return it as Markdown for a message component by the field."""
    text = str(message)
    text = text[:1].upper() + text[1:]
    log.warning("refused %s: %s", who or "(not signed in)", text)
    gr.Warning(text)
    return f"⚠️ **{esc(text)}**"


def refused(action: str, who: str | None, exc: CompStudioError) -> str:
    """An ordinary mistake a person made (a wrong form, a missing reason): one line in the server log, no
    traceback, and a toast. Returns the message, for the handler to show next to the field as well; the
    handler returns only that message, so nothing the person typed, chose or is watching is touched and
    no "Error" status badge covers it (NOTES-stack.md, "Gradio: errors and the status tracker")."""
    message = str(exc)
    log.warning("%s refused for %s: %s", action, who or "(not signed in)", message)
    problems = getattr(exc, "problems", None) or [message]
    more = len(problems) - 1
    gr.Warning(problems[0] + (f" (and {more} more, listed by the fields)" if more else ""))
    return message


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
