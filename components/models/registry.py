"""The Models tab's main panel: the registered models, unloading them, a batch run with progress, and the recent
runs (:mod:`backend.inference.service`, which checks the caller's role).

:func:`view` is what every refresh fills (also after the registry editor saves or deletes, components/models/form.py).
Model events run on the page's shared model queue (``Event(..., model=True)``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError, PermissionDenied
from backend.inference import service
from components.common import caller
from components.events import Event, bind
from components.feedback import QUIET, Mistake, mistake_text, shown_in
from components.models.text import (
    MODEL_COLUMNS,
    RUN_COLUMNS,
    models_count,
    models_frame,
    run_summary_markdown,
    runs_frame,
)
from components.readable import BROWSER_ZONE_JS

JUDGE_OFF = "(no judge)"
INTRO = (
    "Registered models (`models.json` in the data folder) and batch runs. Answers are stored: "
    "a re-run computes only what is missing. Admins can edit the registry."
)


@dataclass(frozen=True)
class ModelsView:
    """The Models tab's components; ``view`` are the ones every refresh fills (see :func:`view`)."""

    tab: gr.Tab
    count: gr.Markdown
    table: gr.Dataframe
    refresh: gr.Button
    unload: gr.Button
    benchmark: gr.Dropdown
    model: gr.Dropdown
    limit: gr.Number
    retry: gr.Checkbox
    judge: gr.Dropdown
    run: gr.Button
    run_message: gr.Markdown
    runs: gr.Dataframe
    zone: gr.Textbox  # the browser's time zone, read when the tab opens (components/readable.py)
    start_from: gr.Dropdown | None = None  # the registry editor's "Start from a registered model"

    @property
    def view(self) -> list[Any]:
        shown = [self.count, self.table, self.benchmark, self.model, self.judge, self.runs]
        return shown + ([self.start_from] if self.start_from is not None else [])


def layout(tab: gr.Tab) -> ModelsView:
    """The panel's components (``tab``: the Models tab, whose opening fills them)."""
    gr.Markdown(INTRO)
    count = gr.Markdown(elem_id="models-count")
    table = gr.Dataframe(
        headers=list(MODEL_COLUMNS.values()), interactive=False, label="Models", elem_id="models-table"
    )
    with gr.Row():
        refresh = gr.Button("Refresh", elem_id="models-refresh")
        unload = gr.Button("Unload all models", elem_id="models-unload")
    zone = gr.Textbox(visible=False, elem_id="models-zone")
    with gr.Accordion("Run a benchmark", open=True):
        with gr.Row():
            benchmark = gr.Dropdown([], label="Benchmark", elem_id="run-benchmark", allow_custom_value=True)
            model = gr.Dropdown([], label="Model", elem_id="run-model", allow_custom_value=True)
            limit = gr.Number(value=0, precision=0, label="Limit (first N items; 0 = all)", elem_id="run-limit")
        with gr.Row():
            retry = gr.Checkbox(label="Retry items that failed before")
            judge = gr.Dropdown(
                [JUDGE_OFF], value=JUDGE_OFF, label="Judge for unparsed answers (labelled)", allow_custom_value=True
            )
        run = gr.Button("Run", variant="primary", elem_id="run-button")
        run_message = gr.Markdown(elem_id="run-message")  # after a run: its status line and counts
        runs = gr.Dataframe(
            headers=list(RUN_COLUMNS.values()), interactive=False, label="Recent runs", elem_id="runs-table"
        )
    return ModelsView(
        tab, count, table, refresh, unload, benchmark, model, limit, retry, judge, run, run_message, runs, zone
    )


def view(ctx: AppContext, v: ModelsView, name: str | None, zone: str | None = None) -> dict[Any, Any]:
    """The registry, the benchmark and model choices, and the recent runs, by component."""
    rows = service.model_table(ctx, name)
    names = [r["name"] for r in rows]
    runs = service.recent_runs(ctx, name)
    return {
        v.count: models_count(rows, runs),
        v.table: models_frame(rows),
        v.benchmark: gr.Dropdown(choices=service.benchmark_names(ctx, name)),
        v.model: gr.Dropdown(choices=names),
        v.judge: gr.Dropdown(choices=[JUDGE_OFF, *names]),
        v.runs: runs_frame(runs, zone),
        **({v.start_from: gr.Dropdown(choices=names)} if v.start_from is not None else {}),
    }


def _fill(ctx: AppContext, v: ModelsView, name: str | None, zone: str | None) -> dict[Any, Any]:
    try:
        return view(ctx, v, name, zone)
    except PermissionDenied:  # annotators never see this tab; leave it empty (one unchanged output: an
        return {v.count: gr.update()}  # empty dict would read as a single value and log a traceback)
    except CompStudioError as exc:  # e.g. a models.json edited by hand that does not parse
        return {v.count: mistake_text(str(exc))}


def on_load(ctx: AppContext, v: ModelsView, request: gr.Request) -> dict[Any, Any]:
    """The page load's part (when the page does not open on this tab)."""
    return _fill(ctx, v, caller(ctx, request), None)


def on_open(ctx: AppContext, v: ModelsView, zone: str | None, request: gr.Request) -> dict[Any, Any]:
    """The tab opened: its tables, with times in the browser's time zone (``zone``, read by the event's js)."""
    return {**_fill(ctx, v, caller(ctx, request), zone), v.zone: zone}


def on_refresh(ctx: AppContext, v: ModelsView, zone: str | None, request: gr.Request) -> dict[Any, Any]:
    return view(ctx, v, caller(ctx, request), zone)


def on_run(
    ctx: AppContext, v: ModelsView, data: dict, request: gr.Request, progress=gr.Progress(track_tqdm=True)
) -> dict[Any, Any]:
    """A batch run of the chosen benchmark and model, with progress; then its summary and the refreshed tables."""
    name = caller(ctx, request)
    bench, chosen, count, judge_name = data[v.benchmark], data[v.model], data[v.limit], data[v.judge]
    if not bench or not chosen:
        raise Mistake("Choose a benchmark and a model.")
    result = service.start_run(
        ctx,
        name,
        bench,
        chosen,
        limit=int(count) if count else None,
        retry_failed=data[v.retry],
        judge=None if judge_name in (None, JUDGE_OFF) else judge_name,
        progress=lambda done, total: progress((done, total), desc=f"{chosen} on {bench}", unit="items"),
    )
    return {v.run_message: run_summary_markdown(result.as_dict()), **view(ctx, v, name, data[v.zone])}


def on_unload(ctx: AppContext, v: ModelsView, zone: str | None, request: gr.Request) -> dict[Any, Any]:
    service.unload_model(ctx, caller(ctx, request), None)
    return view(ctx, v, caller(ctx, request), zone)


def events(ctx: AppContext, v: ModelsView) -> list[Event]:
    opened = {"js": BROWSER_ZONE_JS, "show_progress": "hidden"}
    run = shown_in(v.run_message)(bind(on_run, ctx, v))
    run_inputs = {v.benchmark, v.model, v.limit, v.retry, v.judge, v.zone}
    return [
        Event("models_ui_open", "reviewer", bind(on_open, ctx, v), v.tab.select, [v.zone], [*v.view, v.zone], opened),
        Event("models_ui_refresh", "reviewer", bind(on_refresh, ctx, v), v.refresh.click, [v.zone], v.view, QUIET),
        Event("models_ui_run", "reviewer", run, v.run.click, run_inputs, [v.run_message, *v.view], model=True),
        Event("models_ui_unload", "admin", bind(on_unload, ctx, v), v.unload.click, [v.zone], v.view, QUIET,
              model=True),
    ]  # fmt: skip
