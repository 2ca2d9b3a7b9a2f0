"""The Answer panel: an annotator answers one item at a time, without ever seeing its key before answering. An
item is handed out (leased) only when the person opens the panel to work (the tab's select events,
components/vqa/__init__.py), not on page load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.campaigns.instructions import VQA as VQA_INSTRUCTIONS
from backend.context import AppContext
from backend.errors import CompStudioError
from backend.vqa import service
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import refusal
from components.study_status import study_end, study_line
from components.vqa.display import item_image, letter_choices, question_md

ANSWER_HELP = VQA_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)


@dataclass(frozen=True)
class AnswerPanel:
    current: gr.State
    progress: gr.Markdown
    question: gr.Markdown
    form: gr.Row
    image: gr.Image
    choices: gr.CheckboxGroup
    submit: gr.Button
    result: gr.Markdown

    @property
    def outputs(self) -> list[Any]:
        """What :func:`render` fills: the item, or "nothing left"."""
        return [self.current, self.progress, self.image, self.form, self.question, self.choices]


def layout() -> AnswerPanel:
    gr.Markdown(ANSWER_HELP)
    current = gr.State(None)
    progress = gr.Markdown(elem_id="vqa-answer-progress")
    question = gr.Markdown(elem_id="vqa-answer-question")
    with gr.Row(visible=False) as form:
        image = gr.Image(
            label="Image",
            alt_text="The image the question is about",
            type="filepath",
            interactive=False,
            elem_id="vqa-answer-image",
            height=420,
        )
        with gr.Column():
            choices = gr.CheckboxGroup(label="Your answer", choices=[], elem_id="vqa-answer-choices")
            submit = gr.Button("Submit answer", variant="primary", elem_id="vqa-answer-submit")
    result = gr.Markdown(elem_id="vqa-answer-result")
    return AnswerPanel(current, progress, question, form, image, choices, submit, result)


def answer_counts(done: dict[str, int]) -> str:
    if done["left_for_you"] == 0:
        return f"**Answered by you:** {done['mine_total']} · nothing left for you to answer"
    return f"**Answered by you:** {done['mine_total']} · **items left for you:** {done['left_for_you']}"


def progress_line(counts: dict[str, Any]) -> str:
    """The panel's progress line from ``service.left_counts``: a study worker's place in their study, or the
    counts of answers."""
    return study_line(counts["study"]) if counts["study"] else answer_counts(counts["answer"] or {})


def render(ctx: AppContext, p: AnswerPanel, payload: dict[str, Any]) -> dict:
    """The panel's outputs for a ``service.next_answer_task`` payload."""
    task, done, study = payload["task"], payload["progress"], payload.get("study")
    base = {p.progress: study_line(study) if study else answer_counts(done)}
    if task is None:  # nothing left: say so (a study worker: their code, or where to wait), no empty form
        return {
            **base,
            p.current: None,
            p.image: None,
            p.form: gr.update(visible=False),
            p.question: study_end(study, "vqa") if study else "### Nothing left for you to answer. Thank you!",
            p.choices: gr.update(choices=[], value=[]),
        }
    return {
        **base,
        p.current: task["id"],
        p.image: item_image(ctx, task),
        p.form: gr.update(visible=True),
        p.question: question_md(task),
        p.choices: gr.update(choices=letter_choices(list(task["options"].values())), value=[]),
    }


def on_open(ctx: AppContext, p: AnswerPanel, request: gr.Request) -> dict:
    """The person is on the Answer panel to work: hand them their current or next item."""
    return render(ctx, p, service.next_answer_task(ctx.database, ctx.settings, caller(ctx, request)))


def on_submit(ctx: AppContext, p: AnswerPanel, item_id: str | None, letters: list[str], request: gr.Request) -> dict:
    """Score the answer, say so, and show the next item."""
    name = caller(ctx, request)
    if not item_id:
        return {p.result: refusal("There is no item to answer.", name)}
    try:
        done = service.submit_answer(ctx.database, ctx.settings, name, item_id, letters)
        nxt = render(ctx, p, service.next_answer_task(ctx.database, ctx.settings, name))
    except CompStudioError as exc:  # e.g. two ticks on a single-choice item: the ticks stay for fixing
        return {p.result: refusal(str(exc), name)}
    feedback = (
        f"Your answer {', '.join(done['answer'])} for {esc(item_id)}: key {', '.join(done['key'])}, "
        f"score {done['score']:.2f}."
    )
    return {**nxt, p.result: feedback}


def events(ctx: AppContext, p: AnswerPanel) -> list[Event]:
    submit, fields, outputs = bind(on_submit, ctx, p), [p.current, p.choices], [*p.outputs, p.result]
    # show_progress="minimal": no overlay (nor "Error" badge) over the image and the ticks being made
    minimal = {"show_progress": "minimal"}
    return [Event("vqa_ui_submit_answer", "annotator", submit, p.submit.click, fields, outputs, minimal)]


def build_answer_panel(ctx: AppContext) -> AnswerPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
