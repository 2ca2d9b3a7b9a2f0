"""The Samples panel's one item as the model saw it: what was asked and read, the images or frames it got, the
prompt, the raw output, the parse trace, the stored key and the run's manifest
(:func:`backend.inference.samples_api.sample`, which checks the caller's role)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference import samples_api
from components.common import caller
from components.events import FAST, Event, bind
from components.feedback import shown_in
from components.results.samples.pages import PagePanel
from components.results.samples.text import gallery_items, header_markdown, trace_markdown


@dataclass(frozen=True)
class ItemPanel:
    header: gr.Markdown
    media: gr.Gallery
    prompt: gr.Textbox
    raw: gr.Textbox
    trace: gr.Markdown
    key: gr.JSON
    manifest: gr.JSON

    @property
    def outputs(self) -> list[Any]:
        return [self.header, self.media, self.prompt, self.raw, self.trace, self.key, self.manifest]


def layout() -> ItemPanel:
    header = gr.Markdown(elem_id="samples-item")
    media = gr.Gallery(label="Images and frames, as the model got them", columns=4, height="auto", elem_id="samples-media")  # fmt: skip
    with gr.Row():
        prompt = gr.Textbox(label="Prompt (the template filled in)", lines=8, interactive=False, elem_id="samples-prompt")  # fmt: skip
        raw = gr.Textbox(label="Raw output", lines=8, interactive=False, elem_id="samples-raw")
    trace = gr.Markdown(elem_id="samples-trace")
    with gr.Accordion("Stored key and run manifest", open=False):
        key = gr.JSON(label="Stored key", elem_id="samples-key")
        manifest = gr.JSON(label="Run manifest", elem_id="samples-manifest")
    return ItemPanel(header, media, prompt, raw, trace, key, manifest)


def on_pick(
    ctx: AppContext, p: ItemPanel, run_id: str | None, item_id: str | None, request: gr.Request
) -> dict[Any, Any]:
    """One item of the run, opened from the page's item picker."""
    if not run_id or not item_id:
        return {p.header: "Choose a run and one of its items."}
    detail = samples_api.sample(ctx, caller(ctx, request), run_id, item_id)
    return {
        p.header: header_markdown(detail),
        p.media: gallery_items(detail),
        p.prompt: (detail["prompt"] or {}).get("prompt_text", "(not recorded)"),
        p.raw: detail["sample"]["raw_output"] or detail["sample"]["error"] or "",
        p.trace: trace_markdown(detail),
        p.key: detail["key"],
        p.manifest: detail["manifest"],
    }


def events(ctx: AppContext, p: ItemPanel, page: PagePanel) -> list[Event]:
    """``page``: the run and the item picker of the page shown above."""
    pick = shown_in(p.header)(bind(on_pick, ctx, p))
    return [Event("results_samples_item", "reviewer", pick, page.pick.input, [page.run, page.pick], p.outputs, FAST)]
