"""Review's "Worker quality" panel (issue 16 §3-4): open quality flags and why, resume a paused worker, judge gold
intents below the agreement threshold. Built inside the Review tab (components/review/); handlers only call
backend/campaigns, which checks the reviewer role every time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from backend.campaigns import gold, quality
from backend.context import AppContext
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import QUIET, Mistake, shown_in

FLAG_COLUMNS = ["annotator", "state", "reason", "kind", "item_id", "detail", "flagged_at"]
GOLD_COLUMNS = ["assignment_id", "annotator", "sequence_id", "agreement", "concrete_intent", "high_level_intent"]


@dataclass(frozen=True)
class FlagsPanel:
    refresh: gr.Button
    flags: gr.Dataframe
    worker: gr.Textbox
    resume: gr.Button
    pending: gr.Dataframe  # gold answers to judge
    answer: gr.Number
    right: gr.Button
    wrong: gr.Button
    message: gr.Markdown


def layout() -> FlagsPanel:
    refresh = gr.Button("Refresh", elem_id="flags-refresh")
    flags = gr.Dataframe(headers=FLAG_COLUMNS, interactive=False, label="Open quality flags", elem_id="flags-table")
    with gr.Row():
        worker = gr.Textbox(label="Paused worker", elem_id="flags-worker")
        resume = gr.Button("Resume (flags looked at)", elem_id="flags-resume")
    pending = gr.Dataframe(
        headers=GOLD_COLUMNS, interactive=False, label="Gold intents to judge (below agreement)", elem_id="gold-table"
    )
    with gr.Row():
        answer = gr.Number(label="assignment_id", value=None, precision=0, elem_id="gold-answer")
        right = gr.Button("Reasonable", elem_id="gold-correct")
        wrong = gr.Button("Not reasonable", elem_id="gold-wrong")
    message = gr.Markdown(elem_id="flags-message")
    return FlagsPanel(refresh, flags, worker, resume, pending, answer, right, wrong, message)


def flags_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(quality.flags(ctx.database, me), columns=FLAG_COLUMNS)


def gold_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(gold.pending_judgments(ctx.database, me), columns=GOLD_COLUMNS)


def _filled(ctx: AppContext, p: FlagsPanel, me: str | None) -> dict:
    return {p.flags: flags_frame(ctx, me), p.pending: gold_frame(ctx, me)}


def on_refresh(ctx: AppContext, p: FlagsPanel, request: gr.Request) -> dict:
    return {**_filled(ctx, p, caller(ctx, request)), p.message: ""}


def on_resume(ctx: AppContext, p: FlagsPanel, name: str, request: gr.Request) -> dict:
    if not (name or "").strip():
        raise Mistake("Enter the paused worker's user name.")
    me = caller(ctx, request)
    done = quality.resume(ctx.database, me, name.strip())
    text = f"Resumed **{esc(done['worker'])}** ({done['flags_resolved']} flag(s) resolved)."
    return {**_filled(ctx, p, me), p.message: text}


def on_judge(ctx: AppContext, p: FlagsPanel, correct: bool, assignment_id: float | None, request: gr.Request) -> dict:
    """Judge one gold answer reasonable (``correct``) or not."""
    if assignment_id is None:
        raise Mistake("Enter the assignment_id of the gold answer from the table.")
    me = caller(ctx, request)
    done = gold.judge(ctx.database, ctx.settings, me, int(assignment_id), correct)
    return {**_filled(ctx, p, me), p.message: f"Judged {done['outcome']}."}


def events(ctx: AppContext, p: FlagsPanel, opened: gr.Tab | None = None) -> list[Event]:
    """``opened``: the sub-tab holding the panel; opening it fills the flags and the gold answers to judge (issue 44:
    the panel opened empty until "Show flags" was pressed)."""

    def shown(fn: Callable[..., dict], *front: object) -> Callable[..., dict]:
        return bind(shown_in(p.message)(fn), ctx, p, *front)

    changed = [p.flags, p.pending, p.message]
    opening = []
    if opened is not None:
        hidden = {"show_progress": "hidden"}
        opening.append(Event("quality_ui_open", "reviewer", shown(on_refresh), opened.select, None, changed, hidden))
    return [
        Event("quality_ui_refresh", "reviewer", shown(on_refresh), p.refresh.click, None, changed),
        *opening,
        Event("quality_ui_resume", "reviewer", shown(on_resume), p.resume.click, [p.worker], changed, QUIET),
        Event("quality_ui_gold_right", "reviewer", shown(on_judge, True), p.right.click, [p.answer], changed, QUIET),
        Event("quality_ui_gold_wrong", "reviewer", shown(on_judge, False), p.wrong.click, [p.answer], changed, QUIET),
    ]


def build_flags_panel(ctx: AppContext, opened: gr.Tab | None = None) -> FlagsPanel:
    """Review tab: open quality flags and why; resume a paused worker; judge gold intents below the threshold.
    ``opened``: the sub-tab holding the panel (see :func:`events`)."""
    p = layout()
    wire(ctx, events(ctx, p, opened))
    return p
