"""A tab built on its first visit, from the same builder as a tab built with its page (issue 44, sign-in speed).

The browser builds every component of a page's config before it paints it, opened or not: ~0.4 ms each on this
machine, so an admin's 757 made sign-in 3.3x a plain Gradio app's. The web shell (web/lazy_tabs.py) therefore
builds a page's landing tab with the page, and each other tab inside a ``gr.render`` that runs once, when the person
first opens the tab. While that render runs the tab's builder, :data:`OPENING` holds the tab being opened and the
page's load trigger, and two things read it:

* :func:`tab_frame`: the builder's ``with tab_frame("planning") as tab:`` gives it that tab instead of a new
  ``gr.Tab`` labelled as ``components.TABS`` says (a builder is the same code either way);
* :func:`with_first_open`, in ``components.events.wire``: an event the opened tab's ``select`` triggers also
  runs on the page's load, which Gradio dispatches for a rendered block once it has drawn it; so what a tab fills
  each time it is selected is filled on its first visit too, when its select has already passed;
* :func:`note_event`, also in ``wire``: the components each event reads and writes, from which
  :func:`settle_interactivity` says which are interactive (Gradio's frontend would infer it wrongly for a render).

:data:`OPENING` is a context variable set only for the duration of one render (:func:`opening`), never a global
the app mutates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from components import TABS


@dataclass(frozen=True)
class Opening:
    """The tab a render is building, the page's load trigger (``Blocks.load``), and the components the events wired
    meanwhile read and write (:func:`note_event`)."""

    tab: gr.Tab
    load: Callable[..., Any]
    read: list[Any] = field(default_factory=list)
    written: list[Any] = field(default_factory=list)


#: the tab being built by the running render (None outside one)
OPENING: ContextVar[Opening | None] = ContextVar("compstudio_opening", default=None)


@contextmanager
def opening(tab: gr.Tab, load: Callable[..., Any]) -> Iterator[Opening]:
    """Build ``tab``'s content: the builders called inside fill ``tab`` (see the module's docstring); on leaving,
    each component the tab's events read or write is settled interactive or not (:func:`settle_interactivity`)."""
    current = Opening(tab, load)
    token = OPENING.set(current)
    try:
        yield current
    finally:
        OPENING.reset(token)
    settle_interactivity(current)


def note_event(inputs: Any, outputs: Any) -> None:
    """Note an event's components while a render builds a tab (``components.events.wire`` calls it)."""
    current = OPENING.get()
    if current is not None:
        current.read.extend(_components(inputs))
        current.written.extend(_components(outputs))


def settle_interactivity(current: Opening) -> None:
    """Say which of the tab's components are interactive, as Gradio infers it for a page sent whole: an input of
    an event is, a component only written to is not. Its frontend infers it from the events of the config it was
    first sent, and a render's events come after its components are drawn, so a field of a tab built on its first
    visit came up disabled; a component that says ``interactive`` itself keeps it."""
    read = {id(component) for component in current.read}
    for component in current.read:
        if getattr(component, "interactive", False) is None:
            component.interactive = True
    for component in current.written:
        if id(component) not in read and getattr(component, "interactive", False) is None:
            component.interactive = False


def _components(value: Any) -> list[Any]:
    """An event's inputs or outputs as a list (Gradio takes one component, a list, a set or None)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return list(value)
    return [value]


@contextmanager
def tab_frame(tab_id: str, **options: Any) -> Iterator[gr.Tab]:
    """A tab builder's frame: a new ``gr.Tab`` with the label ``components.TABS`` gives ``tab_id`` (and
    ``options``), or, inside the render opening that tab, the tab the page already has (its options are the
    page's: the shell shows only tabs the page holds)."""
    current = OPENING.get()
    if current is None:
        with gr.Tab(label_of(tab_id), id=tab_id, **options) as tab:
            yield tab
        return
    if current.tab.id != tab_id:
        raise TypeError(f"opening tab {current.tab.id!r}, but its builder builds {tab_id!r}")
    yield current.tab


def label_of(tab_id: str) -> str:
    """The label ``components.TABS`` gives a tab.

    >>> label_of("vqa")
    'Compositional VQA'
    """
    return next(spec.label for spec in TABS if spec.tab_id == tab_id)


def with_first_open(triggers: Sequence[Callable[..., Any]]) -> list[Callable[..., Any]]:
    """``triggers``, and the page's load when one of them is the select of the tab being opened."""
    current = OPENING.get()
    found = list(triggers)
    # an event listener is a bound method of its block: equal to ``tab.select`` exactly when it is that tab's select
    if current is not None and any(trigger == current.tab.select for trigger in found):
        found.append(current.load)
    return found
