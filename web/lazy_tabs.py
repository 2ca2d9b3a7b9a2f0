"""A page's tabs other than its landing tab, built when the person first opens them (setting ``lazy_tabs``).

Why: the browser builds every component of the page's config before it paints, opened or not (~0.4 ms each
here), so an admin's page of 757 components signed in at 3.3x a plain Gradio app's time, an annotator's of 298 at
2.3x (docs/performance.md). Built on first visit, a page's config holds its header and landing tab only.

How (Gradio's public API): each such tab holds a hidden flag and a ``gr.render``. The tab's select sets the flag in
the browser (``js``, no round trip); the flag changes once, from 0 to 1, so the render runs once, on the first
visit, and what the person does in the tab survives leaving it and coming back. The render calls the tab's own
builder inside :func:`components.opening.opening`, so a tab is the same code built either way; what the tab's
page load or its select would fill is filled by load events Gradio dispatches once the render is drawn.

The render is guarded like an event (components/access.py), named ``tab_open_<id>``, with the tab's row of
``components.TABS`` (the least identity that sees the tab); :func:`web.access_table.check_events` refuses a render
that is not. The events inside are wired as on a page built whole (``components.events.wire``, each behind the
guard), so the access table is read from the pages built whole (``compstudio access``: every event of every tab).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.accounts import access
from backend.context import AppContext
from components import TabSpec
from components.access import guarded
from components.common import TabHandle
from components.events import Event, wire
from components.opening import opening

#: the browser-only select that marks a tab opened: the flag's first change runs the render, later ones none
MARK_OPENED_JS = "() => 1"


def render_name(tab_id: str) -> str:
    """The access-table name of a tab's first-visit render.

    >>> render_name("planning")
    'tab_open_planning'
    """
    return f"tab_open_{tab_id}"


def build_lazy_tab(
    ctx: AppContext,
    spec: TabSpec,
    identity: str,
    load: Callable[..., Any],
    fill: Callable[[TabHandle, gr.Request], dict],
) -> gr.Tab:
    """``spec``'s tab, empty until the first visit builds it for a page of ``identity`` (its inner tabs shown as
    that identity may open them). ``load`` is the page's ``Blocks.load``; ``fill(handle)`` is the tab's part of the
    page load (``web.audiences.tab_load``), run once the render is drawn."""
    with gr.Tab(spec.label, id=spec.tab_id) as tab:
        opened = gr.Number(0, visible="hidden", label=f"{spec.label} opened", elem_id=f"{spec.tab_id}-opened")

        def build(request: gr.Request) -> None:  # the guard admits the caller by the tab's row first
            with opening(tab, load):  # every event of the tab wired inside, its first fill too
                handle = build_tab(ctx, spec)
                if handle.on_load and not handle.filled_on_select:  # a tab filled on select is filled by that event
                    outputs = list(dict.fromkeys(handle.on_load[1]))
                    on_open = _filler(handle, outputs, fill)
                    wire(ctx, [Event(f"{spec.tab_id}_ui_first_open", spec.min_role, on_open, load, None, outputs)])
            for inner, least in handle.inner_tabs:
                inner.visible = access.allows(least, identity)

        gr.render(triggers=[opened.change], show_progress="hidden")(
            guarded(ctx, render_name(spec.tab_id), build, spec.min_role)
        )
    tab.select(None, None, opened, js=MARK_OPENED_JS, queue=False)
    return tab


def build_tab(ctx: AppContext, spec: TabSpec) -> TabHandle:
    """``spec``'s tab, built by its builder (which must build the tab ``components.TABS`` says)."""
    handle: TabHandle = getattr(importlib.import_module(spec.module), spec.builder)(ctx)
    if handle.tab.id != spec.tab_id:
        raise TypeError(f"components.TABS says {spec}, but {spec.builder} built {handle.tab.id!r}")
    return handle


def _filler(
    handle: TabHandle, outputs: list[Any], fill: Callable[[TabHandle, gr.Request], dict]
) -> Callable[[gr.Request], dict]:
    """The tab's part of the page load as an event of its own: a dict of updates, never empty (Gradio would read
    an empty dict as one output's value)."""

    def on_open(request: gr.Request) -> dict:
        updates = fill(handle, request)
        return updates or {outputs[0]: gr.update()}

    return on_open
