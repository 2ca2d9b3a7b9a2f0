"""The planning tab's "Browse and ask a model" panel: show a question (reviewers see the key and the STRIPS
verdicts) and, for reviewers only (hidden for others; the backend refuses them too), ask a model, run a batch over
every question, author a new question."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.inference.registry import model_names
from backend.planning import service
from backend.planning.authoring import author_question
from components.common import caller, esc
from components.events import Event, bind, wire
from components.models import run_summary_markdown
from components.planning.views import clip_update, is_reviewer, question_markdown
from components.player import build_player


@dataclass(frozen=True)
class ToolsPanel:
    """The reviewers' tools."""

    model: gr.Dropdown  # the model picker (filled when the tab opens: components/model_choices.py)
    mode: gr.Radio
    ask: gr.Button
    answer: gr.Markdown
    circular: gr.Checkbox
    limit: gr.Number
    run: gr.Button
    summary: gr.Markdown
    sequence: gr.Textbox
    intent: gr.Textbox
    author: gr.Button
    authored: gr.Markdown


@dataclass(frozen=True)
class BrowsePanel:
    qid: gr.Dropdown
    show: gr.Button
    clip: gr.HTML
    text: gr.Markdown
    tools_column: gr.Column  # shown to reviewers only
    tools: ToolsPanel


def tools_layout(ctx: AppContext) -> ToolsPanel:
    gr.Markdown("#### Ask a model")
    with gr.Row():
        model = gr.Dropdown(label="Model", choices=model_names(ctx), value="nsplan-lite", elem_id="planning-model")
        mode = gr.Radio(
            ["frames", "text"],
            value="frames",
            label="Input",
            info="frames: sampled from the observed window; text: observed action names",
        )
        ask = gr.Button("Ask", variant="primary", elem_id="planning-ask")
    answer = gr.Markdown(elem_id="planning-answer")
    gr.Markdown("#### Batch run over all questions")
    with gr.Row():
        circular = gr.Checkbox(label="Circular (every rotation must be right)", value=False)
        limit = gr.Number(label="Limit (empty: all)", value=None, precision=0, elem_id="planning-limit")
        run = gr.Button("Run", elem_id="planning-run")
    summary = gr.Markdown(elem_id="planning-run-summary")  # readable: a status line and a table (issue 44 §11)
    gr.Markdown("#### Author a new question: it goes to annotators before it counts")
    with gr.Row():
        sequence = gr.Textbox(label="Sequence id", elem_id="planning-author-sequence")
        intent = gr.Textbox(label="Intent (empty: the sequence's first high-level intent)")
        author = gr.Button("Author", elem_id="planning-author")
    authored = gr.Markdown(elem_id="planning-authored")
    return ToolsPanel(model, mode, ask, answer, circular, limit, run, summary, sequence, intent, author, authored)


def layout(ctx: AppContext) -> BrowsePanel:
    with gr.Row():
        qid = gr.Dropdown(label="Question", choices=[], allow_custom_value=True, elem_id="planning-question-id")
        show = gr.Button("Show", elem_id="planning-show")
    with gr.Row():
        clip = build_player("planning-clip", visible=False)  # the observed window (first 20%)
        text = gr.Markdown(elem_id="planning-question")
    with gr.Column(visible=False, elem_id="planning-reviewer-tools") as column:
        tools = tools_layout(ctx)
    return BrowsePanel(qid, show, clip, text, column, tools)


def on_show(ctx: AppContext, p: BrowsePanel, question_id: str | None, request: gr.Request) -> dict:
    if not question_id:  # e.g. pressed before the tab, opened for the first time, filled its list
        raise ValidationError("Choose a question first.")
    name = caller(ctx, request)
    view = service.view_question(ctx, name, question_id)
    return {p.clip: clip_update(view, name), p.text: question_markdown(view, show_key=is_reviewer(ctx, name))}


def on_ask(ctx: AppContext, question_id: str, model_name: str, input_mode: str, request: gr.Request) -> str:
    result = service.ask_model(ctx, caller(ctx, request), question_id, model_name, input_mode)
    verdict = "right" if result.score == 1.0 else "wrong"
    return (
        f"**{esc(model_name)}** answered **{esc(result.parsed)}** ({verdict}; key {esc(result.correct_answer)})"
        f" in {result.latency_ms or 0:.0f} ms{' (from the store)' if result.from_store else ''}.  \n"
        f"Raw output: {esc(result.raw_output)}"
    )


def on_run(
    ctx: AppContext,
    model_name: str,
    input_mode: str,
    rotate: bool,
    count,
    request: gr.Request,
    progress=gr.Progress(track_tqdm=True),
) -> str:
    def report(done: int, total: int) -> None:
        progress(done / max(total, 1), desc=f"{done}/{total}")

    limit_n = int(count) if count else None
    done = service.run_batch(ctx, caller(ctx, request), model_name, input_mode, rotate, limit_n, report)
    return run_summary_markdown(done)


def on_author(ctx: AppContext, sequence_id: str, intent_text: str, request: gr.Request) -> str:
    question = author_question(
        ctx.database,
        caller(ctx, request),
        (sequence_id or "").strip(),
        (intent_text or "").strip() or None,
        annotators_per_question=ctx.settings.planning_annotators_per_question,
    )
    view = service.build_view(ctx, question, with_clip=False)
    return question_markdown(view, show_key=True)


def events(ctx: AppContext, p: BrowsePanel) -> list[Event]:
    t = p.tools
    return [
        Event("planning_ui_show", "annotator", bind(on_show, ctx, p), p.show.click, [p.qid], [p.clip, p.text]),
        Event(
            "planning_ui_author", "reviewer", bind(on_author, ctx), t.author.click, [t.sequence, t.intent], t.authored
        ),
        Event(
            "planning_ui_ask",
            "reviewer",
            bind(on_ask, ctx),
            t.ask.click,
            [p.qid, t.model, t.mode],
            t.answer,
            model=True,
        ),
        Event(
            "planning_ui_run",
            "reviewer",
            bind(on_run, ctx),
            t.run.click,
            [t.model, t.mode, t.circular, t.limit],
            t.summary,
            model=True,
        ),
    ]


def build_browse_panel(ctx: AppContext) -> BrowsePanel:
    p = layout(ctx)
    wire(ctx, events(ctx, p))
    return p
