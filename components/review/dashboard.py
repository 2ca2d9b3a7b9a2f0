"""The review dashboard panel: totals, per-round and per-annotator figures with their charts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.review import dashboard
from components.common import caller
from components.events import FAST, Event, bind, wire
from components.feedback import shown_in

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


@dataclass(frozen=True)
class DashboardPanel:
    refresh: gr.Button
    totals: gr.Markdown
    rounds_table: gr.Dataframe
    rounds_plot: gr.BarPlot
    annotators_table: gr.Dataframe
    annotators_plot: gr.BarPlot

    @property
    def outputs(self) -> list[Any]:
        return [self.totals, self.rounds_table, self.rounds_plot, self.annotators_table, self.annotators_plot]


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


def layout() -> DashboardPanel:
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
    return DashboardPanel(refresh, totals, rounds_table, rounds_plot, annotators_table, annotators_plot)


def on_dashboard(ctx: AppContext, p: DashboardPanel, request: gr.Request) -> dict:
    figures = dashboard.dashboard(ctx.database, caller(ctx, request))
    annotators = _frame(figures["annotators"], ANNOTATOR_COLUMNS)
    # an empty table or chart is hidden (it says nothing, and screen readers meet an empty scroll region)
    reviewed, submitted = bool(figures["rounds"]), bool(figures["annotators"])
    return {
        p.totals: totals_markdown(figures["totals"]) + ("" if reviewed else NOTHING_REVIEWED),
        p.rounds_table: gr.Dataframe(_frame(figures["rounds"], ROUND_COLUMNS), visible=reviewed),
        p.rounds_plot: gr.BarPlot(rounds_long(figures["rounds"]), visible=reviewed),
        p.annotators_table: gr.Dataframe(annotators, visible=submitted),
        p.annotators_plot: gr.BarPlot(
            annotators.fillna({"acceptance_rate": 0.0}).astype({"acceptance_rate": float}), visible=submitted
        ),
    }


def events(ctx: AppContext, p: DashboardPanel, opened: Any) -> list[Event]:
    """Refresh, and the sub-tab's own select (``opened``): the figures as of now."""
    show = shown_in(p.totals)(bind(on_dashboard, ctx, p))
    return [
        Event("review_ui_dashboard", "reviewer", show, p.refresh.click, None, p.outputs, FAST),
        Event("review_ui_dashboard_open", "reviewer", show, opened, None, p.outputs, FAST),
    ]


def build_dashboard_panel(ctx: AppContext, tab: gr.Tab) -> DashboardPanel:
    """The dashboard inside its sub-tab ``tab``, filled whenever the sub-tab is opened."""
    p = layout()
    wire(ctx, events(ctx, p, tab.select))
    return p
