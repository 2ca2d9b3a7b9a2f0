"""The Models panel's first section (reviewers): ask one model live about one verified item, or run it on every
verified item (a run that the leaderboard ranks). Both wait on the shared model queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.inference.runner import status_label
from backend.vqa import models, service
from components.common import caller, esc
from components.events import Event, bind, wire


@dataclass(frozen=True)
class AskPanel:
    model: gr.Dropdown
    mode: gr.Radio
    blind: gr.Checkbox
    item: gr.Dropdown
    refresh_items: gr.Button
    ask: gr.Button
    run_all: gr.Button
    answer: gr.Markdown


def layout(ctx: AppContext, names: list[str]) -> AskPanel:
    with gr.Row():
        model = gr.Dropdown(names, label="Model", value=names[0] if names else None, elem_id="vqa-model")
        mode = gr.Radio(list(models.IMAGE_MODES), value=ctx.settings.vqa_image_mode, label="Multi-image items as")
        blind = gr.Checkbox(False, label="Blind (question and options only, no image)")
    with gr.Row():
        item = gr.Dropdown([], label="Item", elem_id="vqa-model-item", allow_custom_value=True)
        refresh_items = gr.Button("Refresh the item list", size="sm")
        ask = gr.Button("Ask live", elem_id="vqa-model-ask")
        run_all = gr.Button("Run on all verified items", variant="primary")
    answer = gr.Markdown(elem_id="vqa-model-answer")
    return AskPanel(model, mode, blind, item, refresh_items, ask, run_all, answer)


def reading(out: dict[str, Any]) -> str:
    """A live answer as read: its letters, or ``(refused)`` / ``(unparsed)``.

    >>> reading({"status": "ok", "letters": ["A", "C"]}), reading({"status": "refusal"})
    ('A, C', '(refused)')
    """
    if out["status"] == "ok":
        return ", ".join(out["letters"])
    return "(refused)" if out["status"] == "refusal" else f"({out['status']})"


def on_ask(ctx: AppContext, name: str, item_id: str, image_mode: str, no_image: bool, request: gr.Request) -> str:
    if not (name and item_id):
        raise ValidationError("Choose a model and an item.")
    out = models.ask_model(ctx, caller(ctx, request), name, item_id, blind=no_image, image_mode=image_mode)
    if out["error"]:
        return f"**Error:** {esc(out['error'])}"
    return (
        f"**{esc(name)}** answered {esc(out['raw_output'])} → {reading(out)}; "
        f"key {', '.join(out['key'])}; score {out['score'] if out['score'] is not None else 0:.2f}"
    )


def on_run(
    ctx: AppContext,
    name: str,
    image_mode: str,
    no_image: bool,
    request: gr.Request,
    progress: gr.Progress = gr.Progress(track_tqdm=True),
) -> str:
    out = models.run_model(
        ctx,
        caller(ctx, request),
        name,
        blind=no_image,
        image_mode=image_mode,
        progress=lambda done, n: progress((done, n)),
    )
    score = (
        f"mean partial credit {out['score']:.3f} over {out['scored']} answered items"
        if out["score"] is not None
        else "no item has an answer: no score, not ranked"
    )
    return (
        f"Run **{esc(out['run'])}** {status_label(out['status'], out['errors'])}: {out['items']} items, {score}, "
        f"{out['answered']} answered, {out['refusals']} refused, {out['parse_failures']} unparsed, "
        f"{out['errors']} errors, {out['newly_computed']} newly computed."
    )


def on_items(ctx: AppContext, request: gr.Request) -> Any:
    """The verified items to ask about."""
    ids = [row["id"] for row in service.browse_items(ctx.database, caller(ctx, request), status="verified")]
    return gr.update(choices=ids, value=ids[0] if ids else None)


def events(ctx: AppContext, p: AskPanel) -> list[Event]:
    ask, run = bind(on_ask, ctx), bind(on_run, ctx)
    asked, ran = [p.model, p.item, p.mode, p.blind], [p.model, p.mode, p.blind]
    return [
        Event("vqa_ui_items", "reviewer", bind(on_items, ctx), p.refresh_items.click, None, p.item),
        Event("vqa_ui_ask", "reviewer", ask, p.ask.click, asked, p.answer, model=True),
        Event("vqa_ui_run", "reviewer", run, p.run_all.click, ran, p.answer, model=True),
    ]


def build_ask_panel(ctx: AppContext, names: list[str]) -> AskPanel:
    p = layout(ctx, names)
    wire(ctx, events(ctx, p))
    return p
