"""The Models tab's "Served replicas" panel: read-only, the replicas ``compstudio serve`` started and their state
(:func:`backend.serve.service.replicas_view`), filled when the tab opens and on its Refresh button."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.serve.service import REPLICA_COLUMNS, replicas_view
from components.common import caller
from components.events import Event, bind

EMPTY = (
    "No model is served by `compstudio serve` from this data folder. Start one: `compstudio serve MODEL --engine vllm`."
)


def replicas_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame([{c: r.get(c) for c in REPLICA_COLUMNS} for r in rows], columns=list(REPLICA_COLUMNS))


def replicas_note(rows: list[dict[str, Any]]) -> str:
    """One line above the table.

    >>> replicas_note([{"model": "m", "state": "ready"}, {"model": "m", "state": "exited"}])
    '**1 served model**, 2 replicas: 1 ready, 1 exited'
    """
    if not rows:
        return EMPTY
    models = len({r["model"] for r in rows})
    states: dict[str, int] = {}
    for row in rows:
        states[row["state"]] = states.get(row["state"], 0) + 1
    counts = ", ".join(f"{n} {state}" for state, n in states.items())
    return f"**{models} served model{'s' * (models != 1)}**, {len(rows)} replicas: {counts}"


@dataclass(frozen=True)
class ReplicasPanel:
    tab: gr.Tab  # the Models tab: opening it fills the panel
    note: gr.Markdown
    table: gr.Dataframe
    refresh: gr.Button


def layout(tab: gr.Tab) -> ReplicasPanel:
    with gr.Accordion("Served replicas", open=False):
        note = gr.Markdown(EMPTY)
        table = gr.Dataframe(replicas_frame([]), interactive=False, label="Replicas started by compstudio serve")
        refresh = gr.Button("Refresh replicas", size="sm")
    return ReplicasPanel(tab, note, table, refresh)


def on_show(ctx: AppContext, p: ReplicasPanel, request: gr.Request) -> dict[Any, Any]:
    rows = replicas_view(ctx, caller(ctx, request))
    return {p.note: replicas_note(rows), p.table: replicas_frame(rows)}


def events(ctx: AppContext, p: ReplicasPanel) -> list[Event]:
    triggers = [p.tab.select, p.refresh.click]
    hidden = {"show_progress": "hidden"}
    return [Event("models_ui_replicas", "reviewer", bind(on_show, ctx, p), triggers, None, [p.note, p.table], hidden)]
