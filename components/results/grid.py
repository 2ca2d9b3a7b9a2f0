"""The Results tab's Controlled comparison panel: one model over a grid of one setting, everything else fixed, with
the side-by-side table and the paired tests (:func:`backend.reporting.grids.run_grid`, which checks the role)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference.benchmarks import list_benchmarks
from backend.reporting.grids import GRID_SETTINGS, grid_report, run_grid
from components.common import caller
from components.events import Event, bind, wire
from components.feedback import shown_in
from components.results.report import charts_html, export, shown

GRID_BENCHMARKS = [("planning (ViLPAct)", "planning"), ("VQA (MMComposition)", "vqa"), ("in-context (CoFe)", "icl")]
SHOWN = ("vilpact-planning", "mmcomposition", "mmcomposition-blind", "icl")
INTRO = (
    "One model over a grid of **one** setting, everything else fixed: the side-by-side table, and every pair of "
    "values compared on the items all of them answered (paired bootstrap 95% interval, exact McNemar, Holm "
    "across all pairs, Cohen's h). Each value is its own prediction in the store; a re-run computes only what "
    "is missing."
)


@dataclass(frozen=True)
class GridPanel:
    model: gr.Dropdown
    benchmark: gr.Dropdown
    setting: gr.Dropdown
    values: gr.Textbox
    limit: gr.Number
    run: gr.Button
    message: gr.Markdown
    side: gr.Dataframe
    pairs: gr.Dataframe
    chart: gr.HTML
    download: gr.DownloadButton


def layout(ctx: AppContext) -> GridPanel:
    gr.Markdown(INTRO)
    others = sorted(name for name in list_benchmarks(ctx) if name not in SHOWN)
    with gr.Row():
        model = gr.Dropdown(label="Model", choices=[], elem_id="grid-model")
        benchmark = gr.Dropdown(
            label="Benchmark", choices=[*GRID_BENCHMARKS, *others], value="vqa", elem_id="grid-benchmark"
        )
        setting = gr.Dropdown(
            label="Setting", choices=[(v, k) for k, v in GRID_SETTINGS.items()], value="input", elem_id="grid-setting"
        )
    with gr.Row():
        values = gr.Textbox(label="Values (comma-separated)", value="frames,text", elem_id="grid-values")
        limit = gr.Number(label="Only the first N items (0: all)", precision=0, value=0, elem_id="grid-limit")
        run = gr.Button("Run the grid", variant="primary", elem_id="grid-run")
    message = gr.Markdown(elem_id="grid-message")
    side = gr.Dataframe(interactive=False, label="Side by side", elem_id="grid-table", visible=False)
    pairs = gr.Dataframe(interactive=False, label="Paired tests", elem_id="grid-pairs", visible=False)
    chart = gr.HTML(elem_id="grid-chart")
    download = gr.DownloadButton("Download grid (zip)", elem_id="grid-download", visible=False)
    return GridPanel(model, benchmark, setting, values, limit, run, message, side, pairs, chart, download)


def on_run(
    ctx: AppContext,
    p: GridPanel,
    name: str | None,
    bench: str,
    which: str,
    text: str,
    first: float | None,
    request: gr.Request,
) -> dict[Any, Any]:
    """Run the model over the grid of values of one setting; the tables, the chart and the download."""
    result = run_grid(
        ctx, caller(ctx, request), name or "", bench, which, text or "", limit=int(first) if first else None
    )
    report = grid_report(result)
    written = export(report, "grid-")
    common = result["comparison"]["common_items"]
    return {
        p.message: f"Grid of {len(result['values'])} values; paired on {common} items every value answered.",
        p.side: shown(report, "grid"),
        p.pairs: shown(report, "grid_pairs"),
        p.chart: charts_html(report),
        p.download: gr.DownloadButton(value=written["zip"], visible=True),
    }


def events(ctx: AppContext, p: GridPanel) -> list[Event]:
    run = shown_in(p.message)(bind(on_run, ctx, p))
    inputs = [p.model, p.benchmark, p.setting, p.values, p.limit]
    outputs = [p.message, p.side, p.pairs, p.chart, p.download]
    return [Event("results_ui_grid", "reviewer", run, p.run.click, inputs, outputs, model=True)]


def build_grid_panel(ctx: AppContext) -> GridPanel:
    p = layout(ctx)
    wire(ctx, events(ctx, p))
    return p
