"""The Samples panel's two runs side by side: the items only one of them got right (the discordant pairs of the
paired comparison, :func:`backend.inference.samples_api.samples_vs`, which checks the caller's role), and one such
item with both outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.inference import samples_api
from components.common import caller, esc
from components.events import FAST, Event, bind
from components.feedback import shown_in
from components.results.samples.text import VS_COLUMNS, side_markdown


@dataclass(frozen=True)
class VsPanel:
    other: gr.Dropdown
    compare: gr.Button
    counts: gr.Markdown
    table: gr.Dataframe
    pairs: gr.State
    pick: gr.Dropdown
    side_a: gr.Markdown
    raw_a: gr.Textbox
    side_b: gr.Markdown
    raw_b: gr.Textbox


def layout() -> VsPanel:
    gr.Markdown("#### Two runs side by side")
    with gr.Row():
        other = gr.Dropdown(label="Compare with run", choices=[], elem_id="samples-other", scale=4)
        compare = gr.Button("Compare", elem_id="samples-compare", scale=1)
    counts = gr.Markdown(elem_id="samples-vs-counts")
    table = gr.Dataframe(headers=VS_COLUMNS, interactive=False, wrap=True, elem_id="samples-vs-table", label="Items only one run got right")  # fmt: skip
    pairs = gr.State([])
    pick = gr.Dropdown(label="Open an item side by side", choices=[], elem_id="samples-vs-pick")
    with gr.Row():
        with gr.Column():
            side_a = gr.Markdown(elem_id="samples-vs-a")
            raw_a = gr.Textbox(label="Run A's output", lines=6, interactive=False, elem_id="samples-vs-raw-a")
        with gr.Column():
            side_b = gr.Markdown(elem_id="samples-vs-b")
            raw_b = gr.Textbox(label="Run B's output", lines=6, interactive=False, elem_id="samples-vs-raw-b")
    return VsPanel(other, compare, counts, table, pairs, pick, side_a, raw_a, side_b, raw_b)


def vs_rows(result: dict[str, Any]) -> list[list[Any]]:
    """The table's rows: each item only one run got right, with the key, the model that was right and both reads."""
    a, b = result["a"], result["b"]
    return [
        [r["base_id"], r["category"], r["a"]["answer"], (a if r["right"] == "a" else b)["model"],
         r["a"]["parsed"], r["a"]["outcome"], r["b"]["parsed"], r["b"]["outcome"]]
        for r in result["rows"]
    ]  # fmt: skip


def on_compare(
    ctx: AppContext, p: VsPanel, run_id: str | None, other_id: str | None, request: gr.Request
) -> dict[Any, Any]:
    """The run above against the run chosen here, item by item."""
    if not run_id or not other_id:
        return {p.counts: "Choose a run above and a run to compare it with."}
    result = samples_api.samples_vs(ctx, caller(ctx, request), run_id, other_id, page_size=500)
    a, b = result["a"], result["b"]
    rows = vs_rows(result)
    more = f" (the first {len(rows)} shown)" if result["pages"] > 1 else ""
    return {
        p.counts: (
            f"A = **{esc(a['label'])}**, B = **{esc(b['label'])}**. Both answered {result['common']} items; "
            f"only A was right on **{result['a_only_right']}**, only B on **{result['b_only_right']}** "
            f"(the discordant pairs of the paired comparison){more}."
        ),
        p.table: pd.DataFrame(rows, columns=VS_COLUMNS),
        p.pairs: [{"a": r["a"], "b": r["b"], "models": [a["model"], b["model"]]} for r in result["rows"]],
        p.pick: gr.Dropdown(choices=[(r["base_id"], i) for i, r in enumerate(result["rows"])], value=None),
    }


def on_compare_pick(ctx: AppContext, p: VsPanel, pairs: list[dict[str, Any]], row: int | None) -> dict[Any, Any]:
    """One item of the comparison, both runs' reads and outputs side by side (from the state; nothing is read)."""
    del ctx
    if not pairs or row is None or not 0 <= int(row) < len(pairs):
        return {p.side_a: "", p.side_b: ""}
    pair = pairs[int(row)]
    model_a, model_b = pair["models"]
    return {
        p.side_a: side_markdown(pair["a"] | {"model": model_a}, "A"),
        p.raw_a: pair["a"]["raw_output"] or pair["a"]["error"] or "",
        p.side_b: side_markdown(pair["b"] | {"model": model_b}, "B"),
        p.raw_b: pair["b"]["raw_output"] or pair["b"]["error"] or "",
    }


def events(ctx: AppContext, p: VsPanel, run: gr.Dropdown) -> list[Event]:
    """``run``: the run picked above (run A)."""
    compare = shown_in(p.counts)(bind(on_compare, ctx, p))
    sides = [p.side_a, p.raw_a, p.side_b, p.raw_b]
    return [
        Event("results_samples_compare", "reviewer", compare, p.compare.click, [run, p.other],
              [p.counts, p.table, p.pairs, p.pick], FAST),
        Event("results_samples_compare_item", "reviewer", bind(on_compare_pick, ctx, p), p.pick.input,
              [p.pairs, p.pick], sides, FAST),
    ]  # fmt: skip
