"""The Models tab's "Served replicas" panel: read-only, the replicas ``compstudio serve`` started and their state
(:func:`backend.serve.service.replicas_view`), filled when the tab opens and on its Refresh button."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.serve.service import REPLICA_COLUMNS, replicas_view
from components.access import listen
from components.common import caller, ui_errors

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


def build_served_replicas(ctx: AppContext, tab: gr.Tab) -> None:
    """The panel, inside the Models tab's layout; its one event runs on the tab's opening and on Refresh."""
    with gr.Accordion("Served replicas", open=False):
        note = gr.Markdown(EMPTY)
        table = gr.Dataframe(replicas_frame([]), interactive=False, label="Replicas started by compstudio serve")
        refresh = gr.Button("Refresh replicas", size="sm")

    @ui_errors
    def on_show(request: gr.Request) -> dict:
        rows = replicas_view(ctx, caller(ctx, request))
        return {note: replicas_note(rows), table: replicas_frame(rows)}

    listen(
        ctx,
        [tab.select, refresh.click],
        on_show,
        None,
        [note, table],
        show_progress="hidden",
        api_visibility="private",
        api_name="models_ui_replicas",
    )
