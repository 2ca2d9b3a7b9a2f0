"""The Results tab (reviewers and admins): one report across the three benchmarks for chosen models, with its
downloads, and controlled comparisons (one model over a grid of one setting, paired tests).

Handlers read inputs, call :mod:`backend.reporting` (which checks the caller's role) and format outputs; a
mistake (no model chosen, a wrong value) is shown beside the button (:func:`components.feedback.shown_in`).
Named JSON endpoints: ``results_report`` and ``results_grid``; the Samples sub-tab (components/results_samples.py)
adds ``results_sample_runs``, ``results_samples``, ``results_sample`` and ``results_samples_vs``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import auth
from backend.context import AppContext
from backend.inference.benchmarks import list_benchmarks
from backend.inference.registry import model_names
from backend.reporting.exports import report_json, write_report
from backend.reporting.grids import GRID_SETTINGS, grid_report, run_grid
from backend.reporting.plots import layout, to_svg
from backend.reporting.report import build_report
from backend.reporting.tables import Report
from components.access import endpoint, listen
from components.common import ConcurrencyOptions, TabHandle, caller, esc, ui_errors
from components.feedback import shown_in
from components.model_choices import offer_models_on_open
from components.results_samples import build_samples_tab

MODEL_QUEUE: ConcurrencyOptions = {"concurrency_id": "models", "concurrency_limit": 1}
REPORT_TABLES = (
    "coverage", "planning", "planning_people", "vqa", "vqa_paper", "vqa_people", "position_bias", "icl", "outcomes",
)  # fmt: skip
GRID_BENCHMARKS = [("planning (ViLPAct)", "planning"), ("VQA (MMComposition)", "vqa"), ("in-context (CoFe)", "icl")]
SHOWN = ("vilpact-planning", "mmcomposition", "mmcomposition-blind", "icl")


def charts_html(report: Report) -> str:
    """Every chart of ``report`` as inline SVG (our own drawing; every text in it is XML-escaped)."""
    figures = [
        f'<figure class="report-chart" data-chart="{name}" style="margin:0.5em 0;overflow-x:auto">'
        f"{to_svg(layout(chart))}</figure>"
        for name, chart in report.charts.items()
    ]
    return "".join(figures) or "<p>No charts: nothing stored yet for these models.</p>"


def _export(report: Report, prefix: str) -> dict[str, Any]:
    return write_report(report, Path(tempfile.mkdtemp(prefix=prefix)))


def _frame(report: Report, name: str) -> pd.DataFrame:
    table = next((t for t in report.tables if t.name == name), None)
    return pd.DataFrame(table.rows, columns=table.columns) if table else pd.DataFrame()


def _shown(report: Report, name: str) -> gr.Dataframe:
    """A report table; an empty one says so in its label instead of standing under bare numbered headers."""
    table = next((t for t in report.tables if t.name == name), None)
    if table is None:  # a table only some reports have (people against models, circular figures)
        return gr.Dataframe(visible=False)
    if not table.rows:
        empty = pd.DataFrame([{"results": "no results yet for these models"}])
        return gr.Dataframe(value=empty, label=table.title, visible=True)
    return gr.Dataframe(value=_frame(report, name), label=table.title, visible=True)


def _report_panel(ctx: AppContext) -> gr.Dropdown:
    gr.Markdown(
        "Choose models and build one report of what is stored for them: planning accuracy plain and circular with "
        "95% intervals (by length and scene below, in the downloads), VQA partial credit per dimension and category "
        "beside the random row and the blind runs, in-context exact match per category and setting, and the answers "
        "read, refused and unparsed. Nothing is run here: run models in their tabs or the Models tab first."
    )
    with gr.Row():
        models = gr.Dropdown(label="Models", multiselect=True, choices=[], elem_id="results-models", scale=3)
        build = gr.Button("Build report", variant="primary", elem_id="results-build", scale=1)
    message = gr.Markdown(elem_id="results-message")
    with gr.Row():
        download = gr.DownloadButton("Download report (zip)", elem_id="results-download", visible=False)
    frames = {  # shown once a report is built, titled by its table
        name: gr.Dataframe(interactive=False, elem_id=f"results-{name}", visible=False) for name in REPORT_TABLES
    }
    charts = gr.HTML(elem_id="results-charts")
    files = gr.File(
        label="Every export (CSV, Markdown, LaTeX, JSON, PNG, SVG)", file_count="multiple", interactive=False
    )

    @shown_in(message)
    def on_build(chosen: list[str] | None, request: gr.Request) -> dict:
        report = build_report(ctx, caller(ctx, request), chosen or [])
        written = _export(report, "report-")
        out: dict[Any, Any] = {frames[name]: _shown(report, name) for name in REPORT_TABLES}
        missing = [r["model"] for r in report.table("coverage").rows if r["results"] == "no results yet"]
        said = f" No results yet: {esc(', '.join(missing))}." if missing else ""
        return out | {
            message: f"Report built: {len(report.tables)} tables, {len(report.charts)} charts.{said}",
            charts: charts_html(report),
            download: gr.DownloadButton(value=written["zip"], visible=True),
            files: [written["json"], written["md"], written["tex"], *written["csv"], *written["svg"], *written["png"]],
        }

    listen(
        ctx,
        build.click,
        on_build,
        [models],
        [message, charts, download, files, *frames.values()],
        api_visibility="private",
        api_name="results_ui_report",
    )
    return models


def _grid_panel(ctx: AppContext) -> gr.Dropdown:
    gr.Markdown(
        "One model over a grid of **one** setting, everything else fixed: the side-by-side table, and every pair of "
        "values compared on the items all of them answered (paired bootstrap 95% interval, exact McNemar, Holm "
        "across all pairs, Cohen's h). Each value is its own prediction in the store; a re-run computes only what "
        "is missing."
    )
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

    @shown_in(message)
    def on_run(name: str | None, bench: str, which: str, text: str, first: float | None, request: gr.Request) -> dict:
        result = run_grid(
            ctx, caller(ctx, request), name or "", bench, which, text or "", limit=int(first) if first else None
        )
        report = grid_report(result)
        written = _export(report, "grid-")
        common = result["comparison"]["common_items"]
        return {
            message: f"Grid of {len(result['values'])} values; paired on {common} items every value answered.",
            side: _shown(report, "grid"),
            pairs: _shown(report, "grid_pairs"),
            chart: charts_html(report),
            download: gr.DownloadButton(value=written["zip"], visible=True),
        }

    listen(
        ctx,
        run.click,
        on_run,
        [model, benchmark, setting, values, limit],
        [message, side, pairs, chart, download],
        api_visibility="private",
        **MODEL_QUEUE,
        api_name="results_ui_grid",
    )
    return model


def _register_api(ctx: AppContext) -> None:
    @ui_errors
    def results_report(models: list[str], request: gr.Request) -> dict:
        """The report of the named models across planning, VQA and in-context (reviewers), as JSON."""
        return report_json(build_report(ctx, caller(ctx, request), models))

    @ui_errors
    def results_grid(
        model: str, benchmark: str, setting: str, values: str, limit: int | None, request: gr.Request
    ) -> dict:
        """Run one model over a grid of one setting (reviewers); side-by-side results and paired tests."""
        return run_grid(
            ctx, caller(ctx, request), model, benchmark, setting, values, limit=int(limit) if limit else None
        )

    endpoint(ctx, results_report, api_name="results_report")
    endpoint(ctx, results_grid, api_name="results_grid", **MODEL_QUEUE)


def build_results_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Results", id="results", visible=False) as tab:  # shown to reviewers by app.py on load
        with gr.Tabs():
            with gr.Tab("Report", id="results-report"):
                report_models = _report_panel(ctx)
            with gr.Tab("Controlled comparison", id="results-grid"):
                grid_model = _grid_panel(ctx)
            build_samples_tab(ctx)  # components/results_samples.py: any run item by item
    offer_models_on_open(ctx, tab, [report_models, grid_model], "results_models_open")

    def on_load(request: gr.Request) -> dict:
        """Every page load: the model lists for reviewers; nothing for anyone else (the tab is hidden)."""
        user = auth.get_user(ctx.database, caller(ctx, request) or "")
        if user is None or user.disabled or not user.has_role("reviewer"):
            return {report_models: gr.update(), grid_model: gr.update()}
        names = model_names(ctx)
        return {report_models: gr.Dropdown(choices=names), grid_model: gr.Dropdown(choices=names)}

    return TabHandle(tab=tab, on_load=(on_load, [report_models, grid_model]))
