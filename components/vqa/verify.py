"""The Verify panel of the compositional VQA tab (authors): each item checked by two verifiers (compositional? key
right?), accepted, rejected or edited; disagreements go to a reviewer as disputes (components/vqa/disputes.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.vqa import service
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import refusal
from components.vqa.display import item_image, options_lines, question_md
from components.vqa.disputes import build_disputes_panel


@dataclass(frozen=True)
class VerifyPanel:
    current: gr.State
    fetch: gr.Button
    progress: gr.Markdown
    image: gr.Image
    details: gr.Markdown
    compositional: gr.Checkbox
    key_right: gr.Checkbox
    note: gr.Textbox
    accept: gr.Button
    reject: gr.Button
    edit_question: gr.Textbox
    edit_options: gr.Textbox
    edit_key: gr.Textbox
    edit: gr.Button
    outcome: gr.Markdown
    form: gr.Column

    @property
    def outputs(self) -> list[Any]:
        """What :func:`render` fills: the item, or "nothing left"."""
        return [
            self.current,
            self.progress,
            self.image,
            self.details,
            self.edit_question,
            self.edit_options,
            self.edit_key,
            self.form,
        ]

    @property
    def inputs(self) -> set[Any]:
        """A decision's fields (read by component, as a dict)."""
        return {
            self.current,
            self.compositional,
            self.key_right,
            self.note,
            self.edit_question,
            self.edit_options,
            self.edit_key,
        }


def layout(verifiers: int) -> VerifyPanel:
    current = gr.State(None)
    gr.Markdown(
        f"Each item is checked by {verifiers} verifiers: does the question test "
        "compositional information, and is the key right? When they disagree a reviewer decides."
    )
    fetch = gr.Button("Next item to verify", elem_id="vqa-verify-next")
    progress = gr.Markdown(elem_id="vqa-verify-progress")
    details = gr.Markdown(elem_id="vqa-verify-item")
    with gr.Column(visible=False) as form:
        image = gr.Image(
            label="Image", alt_text="The image the question is about", type="filepath", interactive=False, height=380
        )
        decision_fields = _fields()
    outcome = gr.Markdown(elem_id="vqa-verify-outcome")
    return VerifyPanel(current, fetch, progress, image, details, *decision_fields, outcome, form)


def _fields() -> tuple[
    gr.Checkbox, gr.Checkbox, gr.Textbox, gr.Button, gr.Button, gr.Textbox, gr.Textbox, gr.Textbox, gr.Button
]:
    compositional = gr.Checkbox(True, label="The question tests compositional information")
    key_right = gr.Checkbox(True, label="The key is right")
    note = gr.Textbox(label="Note (optional)", max_length=2000)
    with gr.Row():
        accept = gr.Button("Accept", variant="primary", elem_id="vqa-verify-accept")
        reject = gr.Button("Reject", variant="stop", elem_id="vqa-verify-reject")
    with gr.Accordion("Edit, then accept", open=False):
        edit_question = gr.Textbox(label="Question")
        edit_options = gr.Textbox(label="Options (one per line)", lines=4)
        edit_key = gr.Textbox(label="Correct letters (e.g. A, C)")
        edit = gr.Button("Save the edit and accept")
    return compositional, key_right, note, accept, reject, edit_question, edit_options, edit_key, edit


def verify_counts(done: dict[str, int]) -> str:
    if done["left_for_you"] == 0:
        return f"**Verified by you:** {done['mine_total']} · nothing left for you to verify"
    return f"**Verified by you:** {done['mine_total']} · **items left for you:** {done['left_for_you']}"


def render(ctx: AppContext, p: VerifyPanel, payload: dict[str, Any]) -> dict:
    """The panel's outputs for a ``service.next_verification`` payload."""
    task, done = payload["task"], payload["progress"]
    base = {p.progress: verify_counts(done)}
    if task is None:  # nothing left: say so, and no empty image or form
        return {
            **base,
            p.current: None,
            p.image: None,
            p.details: "### Nothing left for you to verify.",
            p.edit_question: "",
            p.edit_options: "",
            p.edit_key: "",
            p.form: gr.update(visible=False),
        }
    return {
        **base,
        p.form: gr.update(visible=True),
        p.current: task["id"],
        p.image: item_image(ctx, task),
        p.details: question_md(task, task["answer"]),
        p.edit_question: task["question"],
        p.edit_options: "\n".join(task["options"]),
        p.edit_key: ", ".join(task["answer"]),
    }


def verification_outcome(decision: str, item_id: str, before: str | None, item: dict) -> str:
    """What a verifier reads after a decision: the item's state, "still" when the decision did not change it
    (issue 44 §13: not "now draft" for an item that already was a draft).

    >>> verification_outcome("accept", "q1", "draft", {"status": "draft", "disputed": False})
    'Recorded your accept of q1; the item is still a **draft**: it waits for the other verifiers.'
    >>> verification_outcome("accept", "q1", "draft", {"status": "verified", "disputed": False})
    'Recorded your accept of q1; the item is now **verified**.'
    """
    state = "disputed" if item["disputed"] else item["status"]
    head = f"Recorded your {decision} of {esc(item_id)}; the item is "
    if state == "disputed":
        return head + ("still" if before == "disputed" else "now") + " **disputed**: a reviewer decides."
    if before == state == "draft":
        return head + "still a **draft**: it waits for the other verifiers."
    if before == state:
        return head + f"still **{state}**."
    return head + f"now **{state}**."


def on_fetch(ctx: AppContext, p: VerifyPanel, request: gr.Request) -> dict:
    return render(ctx, p, service.next_verification(ctx.database, ctx.settings, caller(ctx, request)))


def decide(ctx: AppContext, p: VerifyPanel, decision: str, data: dict, name: str | None) -> dict:
    """Record ``decision`` ("accept", "reject" or "edit") on the item held, say what it did, show the next."""
    item_id = data[p.current]
    if not item_id:
        return {p.outcome: refusal("Ask for an item to verify first.", name)}
    changes = None
    if decision == "edit":
        changes = {
            "question": data[p.edit_question],
            "options": options_lines(data[p.edit_options]),
            "answer": data[p.edit_key],
        }
    try:
        submitted = service.submit_verification(
            ctx.database,
            ctx.settings,
            name,
            item_id,
            decision,
            compositional=data[p.compositional],
            key_correct=data[p.key_right],
            note=data[p.note],
            changes=changes,
        )
        nxt = render(ctx, p, service.next_verification(ctx.database, ctx.settings, name))
    except CompStudioError as exc:  # a bad edit: the person's fields stay for fixing
        return {p.outcome: refusal(str(exc), name)}
    return {**nxt, p.outcome: verification_outcome(decision, item_id, submitted["status_before"], submitted["item"])}


def on_accept(ctx: AppContext, p: VerifyPanel, data: dict, request: gr.Request) -> dict:
    return decide(ctx, p, "accept", data, caller(ctx, request))


def on_reject(ctx: AppContext, p: VerifyPanel, data: dict, request: gr.Request) -> dict:
    return decide(ctx, p, "reject", data, caller(ctx, request))


def on_edit(ctx: AppContext, p: VerifyPanel, data: dict, request: gr.Request) -> dict:
    return decide(ctx, p, "edit", data, caller(ctx, request))


def events(ctx: AppContext, p: VerifyPanel) -> list[Event]:
    decided = [*p.outputs, p.outcome]
    minimal = {"show_progress": "minimal"}  # no overlay over the fields being filled in
    return [
        Event("vqa_ui_verify_fetch", "author", bind(on_fetch, ctx, p), p.fetch.click, None, p.outputs),
        Event("vqa_ui_verify_accept", "author", bind(on_accept, ctx, p), p.accept.click, p.inputs, decided, minimal),
        Event("vqa_ui_verify_reject", "author", bind(on_reject, ctx, p), p.reject.click, p.inputs, decided, minimal),
        Event("vqa_ui_verify_edit", "author", bind(on_edit, ctx, p), p.edit.click, p.inputs, decided, minimal),
    ]


def build_verify_panel(ctx: AppContext) -> VerifyPanel:
    p = layout(ctx.settings.vqa_verifiers)
    build_disputes_panel(ctx, p.outcome)
    wire(ctx, events(ctx, p))
    return p
