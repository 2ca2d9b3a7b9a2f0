"""The Models panel's last section (reviewers): compose a benchmark of verified items with a mix of difficulty
levels, and export it in the released layout or as JSON lines."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from backend.context import AppContext
from backend.vqa import compose
from backend.vqa.difficulty import LEVELS
from components.common import caller
from components.events import Event, bind, wire


@dataclass(frozen=True)
class BenchmarkPanel:
    total: gr.Number
    weights: tuple[tuple[str, gr.Number], ...]  # (level, its weight), in LEVELS' order
    fmt: gr.Radio
    make: gr.Button
    bundle: gr.File
    composed: gr.Markdown


def layout() -> BenchmarkPanel:
    with gr.Accordion("Compose a benchmark", open=False):
        total = gr.Number(20, precision=0, label="Items")
        weights = tuple((level, gr.Number(1, label=f"Weight of {level.replace('_', ' ')}")) for level in LEVELS)
        fmt = gr.Radio(["released", "jsonl"], value="released", label="Layout")
        make = gr.Button("Compose and export")
        bundle = gr.File(label="Benchmark")
        composed = gr.Markdown()
    return BenchmarkPanel(total, weights, fmt, make, bundle, composed)


def on_compose(ctx: AppContext, p: BenchmarkPanel, data: dict, request: gr.Request) -> dict:
    out = compose.compose_and_export(
        ctx.database,
        ctx.settings,
        caller(ctx, request),
        Path(tempfile.mkdtemp(prefix="vqa-")),
        total=int(data[p.total] or 0),
        level_mix={level: data[box] for level, box in p.weights},
        fmt=data[p.fmt],
    )
    note = f"{out['items']} items" + (f"; {out['shortfall']} missing (too few rated items)" if out["shortfall"] else "")
    return {p.bundle: out["zip"], p.composed: note}


def events(ctx: AppContext, p: BenchmarkPanel) -> list[Event]:
    inputs = {p.total, *(box for _, box in p.weights), p.fmt}
    return [Event("vqa_ui_compose", "reviewer", bind(on_compose, ctx, p), p.make.click, inputs, [p.bundle, p.composed])]


def build_benchmark_panel(ctx: AppContext) -> BenchmarkPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
