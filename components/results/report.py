"""The Results tab's Report panel: one report across the three benchmarks for chosen models, with its downloads.

The handler reads the chosen models, calls :func:`backend.reporting.report.build_report` (which checks the caller's
role) and formats the tables and charts; a mistake (no model chosen) is shown beside the button
(:func:`components.feedback.shown_in`, put around the handler where its event is declared).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.reporting.exports import write_report
from backend.reporting.plots import layout as chart_layout
from backend.reporting.plots import to_svg
from backend.reporting.report import build_report
from backend.reporting.tables import Report
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import shown_in

REPORT_TABLES = (
    "coverage", "planning", "planning_people", "vqa", "vqa_paper", "vqa_people", "position_bias", "icl", "outcomes",
)  # fmt: skip
INTRO = (
    "Choose models and build one report of what is stored for them: planning accuracy plain and circular with "
    "95% intervals (by length and scene below, in the downloads), VQA partial credit per dimension and category "
    "beside the random row and the blind runs, in-context exact match per category and setting, and the answers "
    "read, refused and unparsed. Nothing is run here: run models in their tabs or the Models tab first."
)


def charts_html(report: Report) -> str:
    """Every chart of ``report`` as inline SVG (our own drawing; every text in it is XML-escaped)."""
    figures = [
        f'<figure class="report-chart" data-chart="{name}" style="margin:0.5em 0;overflow-x:auto">'
        f"{to_svg(chart_layout(chart))}</figure>"
        for name, chart in report.charts.items()
    ]
    return "".join(figures) or "<p>No charts: nothing stored yet for these models.</p>"


def export(report: Report, prefix: str) -> dict[str, Any]:
    """Write every export of ``report`` into a fresh temporary folder (CSV, Markdown, LaTeX, JSON, charts, zip)."""
    return write_report(report, Path(tempfile.mkdtemp(prefix=prefix)))


def _frame(report: Report, name: str) -> pd.DataFrame:
    table = next((t for t in report.tables if t.name == name), None)
    return pd.DataFrame(table.rows, columns=table.columns) if table else pd.DataFrame()


def shown(report: Report, name: str) -> gr.Dataframe:
    """A report table; an empty one says so in its label instead of standing under bare numbered headers."""
    table = next((t for t in report.tables if t.name == name), None)
    if table is None:  # a table only some reports have (people against models, circular figures)
        return gr.Dataframe(visible=False)
    if not table.rows:
        empty = pd.DataFrame([{"results": "no results yet for these models"}])
        return gr.Dataframe(value=empty, label=table.title, visible=True)
    return gr.Dataframe(value=_frame(report, name), label=table.title, visible=True)


@dataclass(frozen=True)
class ReportPanel:
    models: gr.Dropdown
    build: gr.Button
    message: gr.Markdown
    download: gr.DownloadButton
    frames: tuple[gr.Dataframe, ...]  # one per name of REPORT_TABLES, in that order
    charts: gr.HTML
    files: gr.File

    @property
    def outputs(self) -> list[Any]:
        return [self.message, self.charts, self.download, self.files, *self.frames]


def layout() -> ReportPanel:
    gr.Markdown(INTRO)
    with gr.Row():
        models = gr.Dropdown(label="Models", multiselect=True, choices=[], elem_id="results-models", scale=3)
        build = gr.Button("Build report", variant="primary", elem_id="results-build", scale=1)
    message = gr.Markdown(elem_id="results-message")
    with gr.Row():
        download = gr.DownloadButton("Download report (zip)", elem_id="results-download", visible=False)
    frames = tuple(  # shown once a report is built, titled by its table
        gr.Dataframe(interactive=False, elem_id=f"results-{name}", visible=False) for name in REPORT_TABLES
    )
    charts = gr.HTML(elem_id="results-charts")
    files = gr.File(
        label="Every export (CSV, Markdown, LaTeX, JSON, PNG, SVG)", file_count="multiple", interactive=False
    )
    return ReportPanel(models, build, message, download, frames, charts, files)


def on_build(ctx: AppContext, p: ReportPanel, chosen: list[str] | None, request: gr.Request) -> dict:
    """Build the report of the ``chosen`` models: its tables, charts and downloads."""
    report = build_report(ctx, caller(ctx, request), chosen or [])
    written = export(report, "report-")
    out: dict[Any, Any] = {frame: shown(report, name) for name, frame in zip(REPORT_TABLES, p.frames, strict=True)}
    missing = [r["model"] for r in report.table("coverage").rows if r["results"] == "no results yet"]
    said = f" No results yet: {esc(', '.join(missing))}." if missing else ""
    return out | {
        p.message: f"Report built: {len(report.tables)} tables, {len(report.charts)} charts.{said}",
        p.charts: charts_html(report),
        p.download: gr.DownloadButton(value=written["zip"], visible=True),
        p.files: [written["json"], written["md"], written["tex"], *written["csv"], *written["svg"], *written["png"]],
    }


def events(ctx: AppContext, p: ReportPanel) -> list[Event]:
    build = shown_in(p.message)(bind(on_build, ctx, p))
    return [Event("results_ui_report", "reviewer", build, p.build.click, [p.models], p.outputs)]


def build_report_panel(ctx: AppContext) -> ReportPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
