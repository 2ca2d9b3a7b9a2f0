"""The Verify panel's disputes (reviewers): an item whose verifiers disagreed, with their votes, accepted or
rejected for good. The outcome is said in the Verify panel's outcome line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.vqa import service
from components.common import caller, esc
from components.events import Event, bind, wire
from components.vqa.display import question_md


@dataclass(frozen=True)
class DisputesPanel:
    disputed: gr.Dropdown
    details: gr.Markdown
    note: gr.Textbox
    load: gr.Button
    accept: gr.Button
    reject: gr.Button
    outcome: gr.Markdown  # the Verify panel's


def layout(outcome: gr.Markdown) -> DisputesPanel:
    with gr.Accordion("Disputes (reviewers)", open=False):
        disputed = gr.Dropdown([], label="Disputed item")
        details = gr.Markdown()
        note = gr.Textbox(label="Note (optional)", max_length=2000)
        with gr.Row():
            load = gr.Button("Load disputes")
            accept = gr.Button("Accept (final)")
            reject = gr.Button("Reject (final)")
    return DisputesPanel(disputed, details, note, load, accept, reject, outcome)


def on_load_disputes(ctx: AppContext, request: gr.Request) -> Any:
    items = service.disputes(ctx.database, caller(ctx, request))
    return gr.update(choices=[i["id"] for i in items], value=items[0]["id"] if items else None)


def on_pick(ctx: AppContext, item_id: str | None, request: gr.Request) -> str:
    """The disputed item with its key and each verifier's vote."""
    if not item_id:
        return ""
    view = service.item_view(ctx.database, caller(ctx, request), item_id)
    votes = "\n".join(
        f"- {esc(v['verifier'])}: **{v['decision']}** {esc(v['note'] or '')}" for v in view["verifications"]
    )
    return question_md(view, view["answer"]) + "\n\n**Verifiers:**\n" + votes


def resolve(ctx: AppContext, decision: str, item_id: str | None, note: str, name: str | None) -> str:
    if not item_id:
        raise ValidationError("Choose a disputed item.")
    done = service.resolve_dispute(ctx.database, ctx.settings, name, item_id, decision, note)["item"]
    return f"{esc(item_id)} is now **{done['status']}**."


def on_accept(ctx: AppContext, item_id: str | None, note: str, request: gr.Request) -> str:
    return resolve(ctx, "accept", item_id, note, caller(ctx, request))


def on_reject(ctx: AppContext, item_id: str | None, note: str, request: gr.Request) -> str:
    return resolve(ctx, "reject", item_id, note, caller(ctx, request))


def events(ctx: AppContext, p: DisputesPanel) -> list[Event]:
    chosen = [p.disputed, p.note]
    return [
        Event("vqa_ui_disputes", "reviewer", bind(on_load_disputes, ctx), p.load.click, None, p.disputed),
        Event("vqa_ui_dispute_pick", "reviewer", bind(on_pick, ctx), p.disputed.change, p.disputed, p.details),
        Event("vqa_ui_dispute_accept", "reviewer", bind(on_accept, ctx), p.accept.click, chosen, p.outcome),
        Event("vqa_ui_dispute_reject", "reviewer", bind(on_reject, ctx), p.reject.click, chosen, p.outcome),
    ]


def build_disputes_panel(ctx: AppContext, outcome: gr.Markdown) -> DisputesPanel:
    p = layout(outcome)
    wire(ctx, events(ctx, p))
    return p
