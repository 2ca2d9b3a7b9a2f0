"""The Verify panel of the compositional VQA tab: each item checked by two verifiers (compositional? key
right?), accepted, rejected or edited; disagreements go to a reviewer as disputes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.vqa import service
from components.access import listen
from components.common import EventOptions, caller, esc, ui_errors
from components.feedback import refusal
from components.vqa_authoring import item_image, options_lines, question_md

PRIVATE: EventOptions = {"api_visibility": "private"}


@dataclass
class VerifyView:
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
        return {
            self.current,
            self.compositional,
            self.key_right,
            self.note,
            self.edit_question,
            self.edit_options,
            self.edit_key,
        }


def _layout(verifiers: int) -> VerifyView:
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
        _decision_fields = _fields()
    outcome = gr.Markdown(elem_id="vqa-verify-outcome")
    return VerifyView(current, fetch, progress, image, details, *_decision_fields, outcome, form)


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


def render(ctx: AppContext, v: VerifyView, payload: dict[str, Any]) -> dict:
    task, done = payload["task"], payload["progress"]
    base = {v.progress: verify_counts(done)}
    if task is None:  # nothing left: say so, and no empty image or form
        return {
            **base,
            v.current: None,
            v.image: None,
            v.details: "### Nothing left for you to verify.",
            v.edit_question: "",
            v.edit_options: "",
            v.edit_key: "",
            v.form: gr.update(visible=False),
        }
    return {
        **base,
        v.form: gr.update(visible=True),
        v.current: task["id"],
        v.image: item_image(ctx, task),
        v.details: question_md(task, task["answer"]),
        v.edit_question: task["question"],
        v.edit_options: "\n".join(task["options"]),
        v.edit_key: ", ".join(task["answer"]),
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


def _decide(ctx: AppContext, v: VerifyView, decision: str) -> Callable[..., dict]:
    def handler(data: dict, request: gr.Request) -> dict:
        item_id = data[v.current]
        name = caller(ctx, request)
        if not item_id:
            return {v.outcome: refusal("Ask for an item to verify first.", name)}
        changes = None
        if decision == "edit":
            changes = {
                "question": data[v.edit_question],
                "options": options_lines(data[v.edit_options]),
                "answer": data[v.edit_key],
            }
        try:
            submitted = service.submit_verification(
                ctx.database,
                ctx.settings,
                name,
                item_id,
                decision,
                compositional=data[v.compositional],
                key_correct=data[v.key_right],
                note=data[v.note],
                changes=changes,
            )
            nxt = render(ctx, v, service.next_verification(ctx.database, ctx.settings, name))
        except CompStudioError as exc:  # a bad edit: the person's fields stay for fixing
            return {v.outcome: refusal(str(exc), name)}
        return {
            **nxt,
            v.outcome: verification_outcome(decision, item_id, submitted["status_before"], submitted["item"]),
        }

    return handler


def _disputes_panel(ctx: AppContext, outcome: gr.Markdown) -> None:
    with gr.Accordion("Disputes (reviewers)", open=False):
        disputed = gr.Dropdown([], label="Disputed item")
        dispute_md = gr.Markdown()
        note = gr.Textbox(label="Note (optional)", max_length=2000)
        with gr.Row():
            load_disputes = gr.Button("Load disputes")
            resolve_accept = gr.Button("Accept (final)")
            resolve_reject = gr.Button("Reject (final)")

    @ui_errors
    def on_disputes(request: gr.Request) -> Any:
        items = service.disputes(ctx.database, caller(ctx, request))
        return gr.update(choices=[i["id"] for i in items], value=items[0]["id"] if items else None)

    @ui_errors
    def on_dispute_pick(item_id: str | None, request: gr.Request) -> str:
        if not item_id:
            return ""
        view = service.item_view(ctx.database, caller(ctx, request), item_id)
        votes = "\n".join(
            f"- {esc(v['verifier'])}: **{v['decision']}** {esc(v['note'] or '')}" for v in view["verifications"]
        )
        return question_md(view, view["answer"]) + "\n\n**Verifiers:**\n" + votes

    def resolve(decision: str) -> Callable[..., str]:
        @ui_errors
        def handler(item_id: str | None, text: str, request: gr.Request) -> str:
            if not item_id:
                raise gr.Error("Choose a disputed item.")
            done = service.resolve_dispute(ctx.database, ctx.settings, caller(ctx, request), item_id, decision, text)[
                "item"
            ]
            return f"{esc(item_id)} is now **{done['status']}**."

        return handler

    listen(ctx, load_disputes.click, on_disputes, None, disputed, **PRIVATE, api_name="vqa_ui_disputes")
    listen(ctx, disputed.change, on_dispute_pick, disputed, dispute_md, **PRIVATE, api_name="vqa_ui_dispute_pick")
    listen(
        ctx,
        resolve_accept.click,
        resolve("accept"),
        [disputed, note],
        outcome,
        **PRIVATE,
        api_name="vqa_ui_dispute_accept",
    )
    listen(
        ctx,
        resolve_reject.click,
        resolve("reject"),
        [disputed, note],
        outcome,
        **PRIVATE,
        api_name="vqa_ui_dispute_reject",
    )


def verify_panel(ctx: AppContext) -> VerifyView:
    v = _layout(ctx.settings.vqa_verifiers)
    _disputes_panel(ctx, v.outcome)

    @ui_errors
    def on_fetch(request: gr.Request) -> dict:
        return render(ctx, v, service.next_verification(ctx.database, ctx.settings, caller(ctx, request)))

    listen(ctx, v.fetch.click, on_fetch, None, v.outputs, **PRIVATE, api_name="vqa_ui_verify_fetch")
    for button, decision in ((v.accept, "accept"), (v.reject, "reject"), (v.edit, "edit")):
        listen(
            ctx,
            button.click,
            _decide(ctx, v, decision),
            v.inputs,
            [*v.outputs, v.outcome],
            api_name=f"vqa_ui_verify_{decision}",
            show_progress="minimal",
            **PRIVATE,
        )
    return v
