"""The Leaderboard panel: partial-credit scores of people, random choice and every run, per category as
MMComposition's Table 2 prints it (with a grouped chart), paired comparisons, and (reviewers) the questions where
models score below chance (appendix A.4). Filled when the panel opens (components/vqa/__init__.py)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.humans.paired import people_rows
from backend.reporting import leaderboards
from backend.reporting.below_chance import below_chance_export
from backend.reporting.exports import write_report
from backend.vqa import runs
from components.common import caller, esc
from components.events import Event, bind, wire
from components.results import charts_html
from components.vqa.chart import category_chart_html


@dataclass(frozen=True)
class LeaderboardPanel:
    table: gr.Dataframe
    refresh: gr.Button
    download: gr.DownloadButton
    categories: gr.Dataframe
    chart: gr.HTML
    people: gr.Dataframe
    compared: gr.Dataframe
    analyse: gr.Button
    analysis: gr.Markdown
    below_charts: gr.HTML
    below_download: gr.DownloadButton
    below: gr.Dataframe

    @property
    def outputs(self) -> list[Any]:
        """What :func:`render` fills (the comparisons only when it is given them)."""
        return [self.table, self.categories, self.chart, self.download, self.compared, self.people]

    @property
    def analysis_outputs(self) -> list[Any]:
        return [self.analysis, self.below_charts, self.below_download, self.below]


def layout() -> LeaderboardPanel:
    table = gr.Dataframe(
        interactive=False,
        elem_id="vqa-leaderboard",
        label="Partial-credit score (%) on the verified items: people (their answers scored like a model's), "
        "random choice and every run, each over the items it covers, with its 95% bootstrap interval",
    )
    with gr.Row():
        refresh = gr.Button("Refresh")
        download = gr.DownloadButton("Download CSV", elem_id="vqa-leaderboard-csv")
    categories = gr.Dataframe(
        interactive=False,
        elem_id="vqa-paper-table",
        label="Per category (%), as MMComposition's Table 2 prints it: people, the models, Random Choice",
    )
    chart = gr.HTML(elem_id="vqa-category-chart")
    people = gr.Dataframe(
        interactive=False,
        elem_id="vqa-people-vs-models",
        label="Each model against people, on the items both answered (fully right or not): bootstrap 95% interval "
        "of the difference, exact McNemar on the items only one got right, Holm across these pairs",
    )
    compared = gr.Dataframe(
        interactive=False,
        elem_id="vqa-comparison",
        label="Every pair of runs on the items both answered (fully right or not; blind runs always in): "
        "bootstrap 95% interval of the difference, exact McNemar, Holm across all pairs",
    )
    with gr.Accordion("Questions where models score below chance (appendix A.4, reviewers)", open=False):
        analyse = gr.Button("Analyse")
        analysis = gr.Markdown()
        below_charts = gr.HTML(elem_id="vqa-below-chance-charts")
        below_download = gr.DownloadButton(
            "Download the tables and charts (CSV, PNG, SVG, ...)", elem_id="vqa-below-chance-download", visible=False
        )
        below = gr.Dataframe(interactive=False)
    return LeaderboardPanel(
        table,
        refresh,
        download,
        categories,
        chart,
        people,
        compared,
        analyse,
        analysis,
        below_charts,
        below_download,
        below,
    )


def render(ctx: AppContext, p: LeaderboardPanel, rows: list[dict[str, Any]], comparison: dict | None = None) -> dict:
    """The panel's outputs for ``runs.leaderboard`` rows (and ``runs.comparison``, when given)."""
    path = Path(tempfile.mkdtemp(prefix="vqa-board-")) / "vqa_leaderboard.csv"
    path.write_text(runs.leaderboard_csv(rows, runs.run_manifests(ctx)), encoding="utf-8")
    out = {
        p.table: pd.DataFrame(leaderboards.printed(leaderboards.vqa_board(rows))),
        p.categories: pd.DataFrame(leaderboards.printed(leaderboards.paper_table(rows))),
        p.chart: category_chart_html(rows),
        p.download: str(path),
    }
    if comparison is not None:
        pairs = leaderboards.printed(leaderboards.paired_rows(comparison["comparison"]))
        out[p.compared] = leaderboards.frame(pairs, "fewer than two runs of models: nothing to pair yet")
        against = leaderboards.printed(people_rows(comparison["people_vs_models"]))
        out[p.people] = leaderboards.frame(against, "no answers of people, or no model run, yet: nothing to pair")
    return out


def on_refresh(ctx: AppContext, p: LeaderboardPanel, request: gr.Request) -> dict:
    """The board, its comparisons and chart as of now (the Refresh button, and opening the panel)."""
    name = caller(ctx, request)
    return render(
        ctx, p, runs.leaderboard(ctx, name), runs.comparison(ctx, name, samples=ctx.settings.bootstrap_samples)
    )


def on_analyse(ctx: AppContext, request: gr.Request) -> tuple:
    """Appendix A.4: the questions whose mean score across model runs is below their category's random score."""
    out = runs.low_cpv_analysis(ctx, caller(ctx, request))
    report = below_chance_export(out)  # appendix A.4's charts (issue 18), exported with the tables
    written = write_report(report, Path(tempfile.mkdtemp(prefix="vqa-below-chance-")))
    summary = (
        f"{len(out['below_chance'])} of {out['questions']} questions have a mean score across "
        f"{len(out['models'])} model runs below their category's random score. Option counts (all): "
        f"{out['option_counts']}; below chance: {out['option_counts_below']}. Difficulty (all): "
        f"{out['difficulty']}; below chance: {out['difficulty_below']}."
    )
    download = gr.DownloadButton(value=written["zip"], visible=True)
    return esc(summary), charts_html(report), download, pd.DataFrame(out["below_chance"])


def events(ctx: AppContext, p: LeaderboardPanel) -> list[Event]:
    refresh, analyse = bind(on_refresh, ctx, p), bind(on_analyse, ctx)
    return [
        Event("vqa_ui_leaderboard_refresh", "annotator", refresh, p.refresh.click, None, p.outputs),
        Event("vqa_ui_analyse", "reviewer", analyse, p.analyse.click, None, p.analysis_outputs),
    ]


def build_leaderboard_panel(ctx: AppContext) -> LeaderboardPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
