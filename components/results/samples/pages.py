"""The Samples panel's run and its pages: the run picker, the filters (outcome, category, search), the counts, one
page of the run's items as a table, paging, and the picker of an item of the page.

Handlers read the filters and call :func:`backend.inference.samples_api.samples_page` (which checks the caller's
role); database reads of milliseconds, so their events skip the queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference import samples_api
from components.common import caller
from components.events import FAST, Event, bind
from components.feedback import shown_in
from components.results.samples.text import (
    COLUMNS,
    FILTER_CHOICES,
    PAGE_SIZE,
    counts_markdown,
    item_choice,
    page_info_text,
    run_choices,
    table_rows,
)


@dataclass(frozen=True)
class PagePanel:
    run: gr.Dropdown
    refresh: gr.Button
    which: gr.Dropdown
    category: gr.Dropdown
    search: gr.Textbox
    show: gr.Button
    counts: gr.Markdown
    page_info: gr.Markdown
    table: gr.Dataframe
    prev_page: gr.Button
    page_no: gr.Number
    next_page: gr.Button
    pick: gr.Dropdown

    @property
    def filters(self) -> list[Any]:
        return [self.run, self.which, self.category, self.search]

    @property
    def outputs(self) -> list[Any]:
        return [self.counts, self.page_info, self.table, self.pick, self.page_no, self.category]


def layout() -> PagePanel:
    with gr.Row():
        run = gr.Dropdown(label="Run", choices=[], elem_id="samples-run", scale=4)
        refresh = gr.Button("Refresh runs", elem_id="samples-refresh", scale=1)
    with gr.Row():
        which = gr.Dropdown(label="Show", choices=FILTER_CHOICES, value="all", elem_id="samples-filter")
        category = gr.Dropdown(label="Category", choices=[("any", "")], value="", elem_id="samples-category")
        search = gr.Textbox(label="Output contains", elem_id="samples-search")
        show = gr.Button("Show", variant="primary", elem_id="samples-show")
    counts = gr.Markdown(elem_id="samples-counts")
    page_info = gr.Markdown(elem_id="samples-page-info")
    table = gr.Dataframe(headers=COLUMNS, interactive=False, wrap=True, elem_id="samples-table", label="Samples")
    with gr.Row():
        prev_page = gr.Button("◀ Previous page", elem_id="samples-prev", size="sm")
        page_no = gr.Number(label="Page", value=1, precision=0, minimum=1, elem_id="samples-page")
        next_page = gr.Button("Next page ▶", elem_id="samples-next", size="sm")
    pick = gr.Dropdown(label="Open an item of this page", choices=[], elem_id="samples-pick")
    return PagePanel(
        run, refresh, which, category, search, show, counts, page_info, table, prev_page, page_no, next_page, pick
    )


def on_open(ctx: AppContext, p: PagePanel, other: gr.Dropdown, request: gr.Request) -> dict[Any, Any]:
    """The stored runs, offered in the run picker and in the picker of the run to compare with (``other``)."""
    choices = run_choices(samples_api.runs(ctx, caller(ctx, request)))
    return {p.run: gr.Dropdown(choices=choices), other: gr.Dropdown(choices=choices)}


def show_page(
    ctx: AppContext,
    p: PagePanel,
    query: tuple[str | None, str, str, str],
    number: float | None,
    first: bool,
    request: gr.Request,
) -> dict[Any, Any]:
    """A page of the run (``query``: run id, filter, category, search); ``first``: a new query (with the filters'
    counts and the run's categories)."""
    run_id, filt, cat, text = query
    if not run_id:
        return {p.counts: "Choose a run first.", p.table: table_rows([]), p.pick: gr.Dropdown(choices=[], value=None)}
    page = samples_api.samples_page(
        ctx, caller(ctx, request), run_id, filter=filt or "all", category=cat or "", search=text or "",
        page=max(1, int(number or 1)), page_size=PAGE_SIZE, with_counts=first,
    )  # fmt: skip
    out = {
        p.page_info: page_info_text(page),
        p.table: table_rows(page["rows"]),
        p.pick: gr.Dropdown(choices=[(item_choice(r), r["item_id"]) for r in page["rows"]], value=None),
        p.page_no: min(page["query"]["page"], page["pages"]),
    }
    if first:
        choices = [("any", ""), *[(c, c) for c in page["categories"]]]
        out |= {p.counts: counts_markdown(page), p.category: gr.Dropdown(choices=choices, value=cat or "")}
    return out


def on_show(
    ctx: AppContext, p: PagePanel, run_id: str | None, filt: str, cat: str, text: str, request: gr.Request
) -> dict[Any, Any]:
    """The first page of a new query, with the counts of every filter."""
    return show_page(ctx, p, (run_id, filt, cat, text), 1, True, request)


def on_prev(
    ctx: AppContext,
    p: PagePanel,
    run_id: str | None,
    filt: str,
    cat: str,
    text: str,
    number: float | None,
    request: gr.Request,
) -> dict[Any, Any]:
    return show_page(ctx, p, (run_id, filt, cat, text), max(1, int(number or 1) - 1), False, request)


def on_next(
    ctx: AppContext,
    p: PagePanel,
    run_id: str | None,
    filt: str,
    cat: str,
    text: str,
    number: float | None,
    request: gr.Request,
) -> dict[Any, Any]:
    return show_page(ctx, p, (run_id, filt, cat, text), int(number or 1) + 1, False, request)


def events(ctx: AppContext, p: PagePanel, tab: gr.Tab, other: gr.Dropdown) -> list[Event]:
    """``tab``: the Samples tab (opening it offers the runs); ``other``: the picker of the run to compare with."""
    opened = bind(on_open, ctx, p, other)
    show = shown_in(p.counts)(bind(on_show, ctx, p))
    prev, next_ = (shown_in(p.page_info)(bind(fn, ctx, p)) for fn in (on_prev, on_next))
    paged = [*p.filters, p.page_no]
    return [
        Event("results_samples_open", "reviewer", opened, tab.select, None, [p.run, other], FAST),
        Event("results_samples_refresh", "reviewer", opened, p.refresh.click, None, [p.run, other], FAST),
        Event("results_samples_show", "reviewer", show, p.show.click, p.filters, p.outputs, FAST),
        Event("results_samples_filter", "reviewer", show, p.which.input, p.filters, p.outputs, FAST),
        Event("results_samples_search", "reviewer", show, p.search.submit, p.filters, p.outputs, FAST),
        Event("results_samples_prev", "reviewer", prev, p.prev_page.click, paged, p.outputs, FAST),
        Event("results_samples_next", "reviewer", next_, p.next_page.click, paged, p.outputs, FAST),
    ]
