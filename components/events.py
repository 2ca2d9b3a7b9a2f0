"""Events declared once, as data, beside the panel that owns them (issue 43 §2).

An :class:`Event` is one row of the app's access table and one Gradio event at once: its name (the ``api_name``),
the least identity that may call it (``backend.accounts.access.IDENTITIES``), the trigger, the handler, its inputs
and outputs and the listener's options. A panel returns its events as a list; :func:`wire` registers them, each
behind the access guard (components/access.py), private to the page unless ``public``, and on the shared model
queue when ``model``. An event with no trigger is a named endpoint for scripts (``gr.api``, on the scripts mount).

There is no second place to write an event's row: the access table is what the built pages declare
(web/access_table.py reads every event of the built Blocks with its least identity), so a renamed or added event cannot
drift from its row. ``compstudio access`` prints it and docs/access.md is generated from it
(``python scripts/access_table.py``).

Adding an event to a panel (docs/architecture.md has the worked example)::

    def events(ctx: AppContext, v: QueuePanel) -> list[Event]:
        return [
            Event("review_ui_skip", "reviewer", bind(on_skip, ctx, v), v.skip.click, [v.current, v.why], v.outputs),
        ]

Handlers are plain module functions (``on_skip(ctx, v, item, why, request)``), callable in a test without a
browser; :func:`bind` gives them their first arguments. ``wire`` turns the named errors a handler raises
(``backend.errors.CompStudioError``) into the message the page shows, so handlers need no ``ui_errors``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from backend.accounts import access
from backend.context import AppContext
from components.access import guarded
from components.common import ui_errors
from components.opening import note_event, with_first_open

#: database-only events skip Gradio's queue (milliseconds each): ``Event(..., options=FAST)``
FAST: Mapping[str, Any] = {"queue": False}
#: the shared queue of model calls: one at a time per page, whichever tab asks (``Event(..., model=True)``)
MODEL_QUEUE: Mapping[str, Any] = {"concurrency_id": "models", "concurrency_limit": 1}


@dataclass(frozen=True)
class Event:
    """One event: see the module's docstring. ``options`` are Gradio's listener keywords (``queue``,
    ``show_progress``, ``trigger_mode``, ``js``, ...); ``api_visibility`` is set from ``public``, the queue from
    ``model``."""

    name: str
    least: str
    handler: Callable[..., Any] | None
    trigger: Callable[..., Any] | Sequence[Callable[..., Any]] | None = None
    inputs: Any = None
    outputs: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)
    public: bool = False
    model: bool = False

    def __post_init__(self) -> None:
        if self.least not in access.IDENTITIES:
            raise ValueError(f"event {self.name!r}: least identity {self.least!r} is not one of {access.IDENTITIES}")
        if "api_visibility" in self.options or "api_name" in self.options:
            raise ValueError(f"event {self.name!r}: say public=True, not api_visibility/api_name in options")

    @property
    def endpoint(self) -> bool:
        """A named endpoint for scripts (``gr.api``), not a page event."""
        return self.trigger is None


def wire(ctx: AppContext, events: Iterable[Event]) -> list[Any]:
    """Register ``events`` in the Blocks being built (one call per panel or tab); returns Gradio's dependencies."""
    return [_wire_one(ctx, event) for event in events]


def bind(fn: Callable[..., Any], *front: Any) -> Callable[..., Any]:
    """``fn`` with its first ``len(front)`` arguments given (``bind(on_skip, ctx, panel)``), keeping the rest of its
    signature and its type hints for Gradio and the guard (``functools.partial`` hides both), and its kind: a
    generator stays a generator (Gradio streams it)."""
    signature = inspect.signature(fn)
    rest = list(signature.parameters.values())[len(front) :]
    if inspect.isgeneratorfunction(inspect.unwrap(fn)):

        @functools.wraps(fn)
        def bound(*args: Any, **kwargs: Any) -> Any:
            yield from fn(*front, *args, **kwargs)

    else:

        @functools.wraps(fn)
        def bound(*args: Any, **kwargs: Any) -> Any:
            return fn(*front, *args, **kwargs)

    bound.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    return bound


def _wire_one(ctx: AppContext, event: Event) -> Any:
    handler = None if event.handler is None else guarded(ctx, event.name, ui_errors(event.handler), event.least)
    options = {**event.options, **(MODEL_QUEUE if event.model else {})}
    if event.endpoint:
        if handler is None:
            raise ValueError(f"endpoint {event.name!r} has no handler")
        return gr.api(handler, api_name=event.name, **options)
    options["api_visibility"] = "public" if event.public else "private"
    # in a tab built on its first visit, what the tab's select fills runs on that visit too (components/opening.py)
    trigger = event.trigger
    assert trigger is not None  # an event without one is an endpoint (above)
    triggers = with_first_open([trigger] if callable(trigger) else list(trigger))
    note_event(event.inputs, event.outputs)
    if len(triggers) > 1:
        return gr.on(triggers, handler, event.inputs, event.outputs, api_name=event.name, **options)
    return triggers[0](handler, event.inputs, event.outputs, api_name=event.name, **options)
