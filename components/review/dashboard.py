"""The review dashboard panel: totals, per-round and per-annotator figures with their charts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.review import dashboard
from components.access import listen
from components.common import caller
from components.feedback import shown_in
from components.review.queue import PRIVATE_FAST

ROUND_COLUMNS = [
    "round",
    "sequences_reviewed",
    "sequences_accepted",
    "sequences_accepted_share",
    "sequences_returned",
    "sequences_discarded",
    "annotations_judged",
    "annotations_reasonable",
    "annotations_reasonable_share",
]
NOTHING_REVIEWED = "\n\nNo sequence round has been reviewed yet: the per-round figures appear after the first review."
ANNOTATOR_COLUMNS = ["annotator", "submissions", "judged", "reasonable", "acceptance_rate", "median_seconds_per_task"]


@dataclass
class DashboardPanel:
    """``show`` is the (handler, inputs, outputs) that fills the dashboard, for the sub-tab's select event."""

    refresh: gr.Button
    totals: gr.Markdown
    show: tuple[Callable[..., dict], None, list[Any]]


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def totals_markdown(t: dict[str, Any]) -> str:
    return (
        f"**In annotation:** {t['in_annotation']} · **awaiting review:** {t['awaiting_review']} · "
        f"**accepted:** {t['accepted']} · **discarded:** {t['discarded']} · "
        f"**final sequences:** {t['final_sequences']} · **edited final intents:** {t['edited_final_intents']}"
    )


def rounds_long(rounds: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per round and measure (annotations judged reasonable, sequences accepted) for the bar chart."""
    long = [
        {"round": f"round {r['round']} · {measure}", "measure": measure, "share": r[key] or 0.0}
        for r in rounds
        for measure, key in (("annotations", "annotations_reasonable_share"), ("sequences", "sequences_accepted_share"))
    ]
    return pd.DataFrame(long, columns=["round", "measure", "share"])


def build_dashboard_panel(ctx: AppContext) -> DashboardPanel:
    refresh = gr.Button("Refresh", elem_id="review-refresh")
    totals = gr.Markdown(elem_id="review-totals")
    rounds_table = gr.Dataframe(
        headers=ROUND_COLUMNS, interactive=False, label="Per round", elem_id="review-rounds", visible=False
    )
    # shares are drawn on their whole range, 0 to 1, whatever the data (issue 13 §6)
    rounds_plot = gr.BarPlot(
        x="round",
        y="share",
        color="measure",
        label="Share judged reasonable",
        elem_id="review-rounds-plot",
        visible=False,
        y_lim=[0, 1],
        y_title="share (0–1)",
    )
    annotators_table = gr.Dataframe(
        headers=ANNOTATOR_COLUMNS, interactive=False, label="Per annotator", elem_id="review-annotators", visible=False
    )
    annotators_plot = gr.BarPlot(
        x="annotator",
        y="acceptance_rate",
        label="Acceptance rate",
        elem_id="review-annotators-plot",
        visible=False,
        y_lim=[0, 1],
        y_title="acceptance rate (0–1)",
    )

    def on_dashboard(request: gr.Request) -> dict:
        figures = dashboard.dashboard(ctx.database, caller(ctx, request))
        annotators = _frame(figures["annotators"], ANNOTATOR_COLUMNS)
        # an empty table or chart is hidden (it says nothing, and screen readers meet an empty scroll region)
        reviewed, submitted = bool(figures["rounds"]), bool(figures["annotators"])
        return {
            totals: totals_markdown(figures["totals"]) + ("" if reviewed else NOTHING_REVIEWED),
            rounds_table: gr.Dataframe(_frame(figures["rounds"], ROUND_COLUMNS), visible=reviewed),
            rounds_plot: gr.BarPlot(rounds_long(figures["rounds"]), visible=reviewed),
            annotators_table: gr.Dataframe(annotators, visible=submitted),
            annotators_plot: gr.BarPlot(
                annotators.fillna({"acceptance_rate": 0.0}).astype({"acceptance_rate": float}), visible=submitted
            ),
        }

    outputs = [totals, rounds_table, rounds_plot, annotators_table, annotators_plot]
    show = (shown_in(totals)(on_dashboard), None, outputs)
    listen(ctx, refresh.click, *show, api_name="review_ui_dashboard", **PRIVATE_FAST)
    return DashboardPanel(refresh, totals, show)
