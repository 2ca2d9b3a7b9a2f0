"""The planning tab's "Check questions" panel (annotators): the next question to check (its observed window and
six candidate futures, without the key), the person's choice of the plausible one, and their counts or, for a
crowd-study worker, their quota and completion code."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.planning import service, validation
from backend.planning.questions import CHOICE_LETTERS
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import QUIET, refusal
from components.planning.views import (
    CHECK_HELP,
    NONE_LABEL,
    clip_update,
    counts_markdown,
    is_reviewer,
    question_markdown,
)
from components.player import build_player, empty_value
from components.study_status import study_end, study_line


@dataclass(frozen=True)
class CheckPanel:
    current: gr.State  # the question being checked
    started: gr.State  # when it was shown (seconds since the epoch)
    progress: gr.Markdown
    fetch: gr.Button
    clip: gr.HTML
    text: gr.Markdown
    form: gr.Group
    choice: gr.Radio
    submit: gr.Button
    status: gr.Markdown

    @property
    def outputs(self) -> list[Any]:
        """What showing a question (or the end) changes, the status line included."""
        return [
            self.current,
            self.started,
            self.progress,
            self.fetch,
            self.clip,
            self.text,
            self.form,
            self.choice,
            self.status,
        ]


def layout() -> CheckPanel:
    gr.Markdown(CHECK_HELP)
    current = gr.State(None)
    started = gr.State(0.0)
    progress = gr.Markdown(elem_id="planning-check-progress")
    fetch = gr.Button("Next question", elem_id="planning-check-next")
    with gr.Row():
        clip = build_player("planning-check-clip", visible=False)  # the observed window
        text = gr.Markdown(elem_id="planning-check-question")
    with gr.Group(visible=False) as form:
        choice = gr.Radio([*CHOICE_LETTERS, NONE_LABEL], label="The plausible future", elem_id="planning-check-choice")
        submit = gr.Button("Submit", variant="primary", elem_id="planning-check-submit")
    status = gr.Markdown(elem_id="planning-check-status")
    return CheckPanel(current, started, progress, fetch, clip, text, form, choice, submit, status)


def render(ctx: AppContext, p: CheckPanel, task: Any, name: str | None) -> dict:
    """The page for ``task`` (a question to check), or for the end when it is None: say so (a study worker: their
    code, or where to wait), no empty form."""
    study = validation.study_of(ctx.database, name)  # a crowd-study worker: their quota, then their code
    line = study_line(study) if study else counts_markdown(validation.check_counts(ctx.database, name))
    if task is None:
        return {
            p.progress: line,
            p.current: None,
            p.started: 0.0,
            p.clip: gr.update(value=empty_value(), visible=False),
            p.form: gr.update(visible=False),
            p.fetch: gr.update(visible=False),
            p.text: study_end(study, "planning") if study else "### Nothing left for you to check. Thank you!",
        }
    view = service.build_view(ctx, task.question)
    return {
        p.progress: line,
        p.current: task.question.id,
        p.started: time.time(),
        p.clip: clip_update(view, name, "#planning-check-submit"),
        p.form: gr.update(visible=True),
        p.fetch: gr.update(visible=False),
        p.text: question_markdown(view, show_key=is_reviewer(ctx, name)),
        p.choice: gr.update(value=None),
    }


def _next(ctx: AppContext, name: str | None) -> Any:
    return validation.next_question(ctx.database, name, ctx.settings.lease_minutes, ctx.settings)


def on_next(ctx: AppContext, p: CheckPanel, request: gr.Request) -> dict:
    name = caller(ctx, request)
    return {**render(ctx, p, _next(ctx, name), name), p.status: ""}


def on_submit(
    ctx: AppContext, p: CheckPanel, question_id: str | None, began: float, picked: str | None, request: gr.Request
) -> dict:
    """Store the check and show the next question; a refusal is said in the status line, the person's choice, clip
    and question left as they are."""
    name = caller(ctx, request)
    if not question_id:
        return {p.status: refusal("Ask for a question first: press Next question.", name)}
    if not picked:
        return {p.status: refusal("Mark one choice as plausible, or choose 'None is plausible'.", name)}
    index = -1 if picked == NONE_LABEL else CHOICE_LETTERS.index(picked)
    seconds = round(time.time() - began, 1) if began else None
    try:
        validation.submit_check(ctx.database, name, question_id, index, seconds, ctx.settings)
        nxt = render(ctx, p, _next(ctx, name), name)
    except CompStudioError as exc:
        return {p.status: refusal(str(exc), name)}
    return {**nxt, p.status: f"Saved your check of {esc(question_id)}."}


def events(ctx: AppContext, p: CheckPanel) -> list[Event]:
    return [
        Event("planning_ui_next_check", "annotator", bind(on_next, ctx, p), p.fetch.click, None, p.outputs),
        # show_progress="minimal": no overlay (nor "Error" badge) over the clip, question or choice being made
        Event(
            "planning_ui_submit_check",
            "annotator",
            bind(on_submit, ctx, p),
            p.submit.click,
            [p.current, p.started, p.choice],
            p.outputs,
            QUIET,
        ),
    ]


def build_check_panel(ctx: AppContext) -> CheckPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
