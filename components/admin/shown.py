"""The Admin tab's panels show a refusal by the field that caused it: a handler's named error
(``backend.errors.CompStudioError``, a :class:`components.feedback.Mistake` included) becomes the text of the
panel's message line, every other output unchanged (``components.feedback.shown_in``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backend.context import AppContext
from components.events import bind
from components.feedback import shown_in


def shown(fn: Callable[..., dict], ctx: AppContext, panel: Any) -> Callable[..., dict]:
    """``fn(ctx, panel, ...)`` bound to ``ctx`` and ``panel``, its named errors shown in ``panel.message``."""
    return bind(shown_in(panel.message)(fn), ctx, panel)
