"""The Author panel of the compositional VQA tab (authors): store images (a composite is built for several),
write the question with lettered options and the key, or build probing options from true and conflicting captions;
a saved item goes to verification (components/vqa/verify.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import ValidationError
from backend.vqa import service
from backend.vqa.categories import CATEGORIES
from backend.vqa.images import media_path
from components.common import caller, esc
from components.events import Event, bind, wire
from components.vqa.display import letter_choices, options_lines


@dataclass(frozen=True)
class AuthorPanel:
    stored: gr.State
    files: gr.File
    preview: gr.Image
    build: gr.Button
    category: gr.Dropdown
    question: gr.Textbox
    options: gr.Textbox
    correct: gr.CheckboxGroup
    choice_type: gr.Radio
    true_caps: gr.Textbox
    conflict_caps: gr.Textbox
    count: gr.Dropdown
    probe: gr.Button
    create: gr.Button
    saved: gr.Markdown
    table: gr.Dataframe
    refresh: gr.Button

    @property
    def draft(self) -> list[Any]:
        """The fields a probing draft fills."""
        return [self.category, self.question, self.options, self.correct, self.choice_type]


def _images() -> tuple[gr.State, gr.File, gr.Image, gr.Button]:
    stored = gr.State([])
    gr.Markdown(
        "**1. Images.** One image is shown as it is; two side by side labelled *Left* and *Right*; "
        "more in a grid labelled *Image 1 … n* (paper section 3.1)."
    )
    with gr.Row():
        files = gr.File(label="Images", file_count="multiple", file_types=["image"], elem_id="vqa-author-files")
        preview = gr.Image(
            label="What models see",
            alt_text="The composite image models are shown",
            type="filepath",
            interactive=False,
            elem_id="vqa-author-preview",
        )
    build = gr.Button("Store images and build the composite", elem_id="vqa-author-build")
    return stored, files, preview, build


def layout() -> AuthorPanel:
    stored, files, preview, build = _images()
    gr.Markdown("**2. Question.** Options one per line; they are lettered A, B, … in order.")
    category = gr.Dropdown(list(CATEGORIES), label="Category", value=CATEGORIES[0], elem_id="vqa-author-category")
    question = gr.Textbox(label="Question", elem_id="vqa-author-question", max_length=2000)
    options = gr.Textbox(label="Options (one per line)", lines=4, elem_id="vqa-author-options")
    correct = gr.CheckboxGroup(label="Correct options", choices=[], elem_id="vqa-author-correct")
    choice_type = gr.Radio(["single", "indefinite"], value="single", label="Choice type", elem_id="vqa-author-type")
    with gr.Accordion("Probing builder: x true and 4 - x conflicting captions, shuffled", open=False):
        true_caps = gr.Textbox(label="True captions (one per line)", lines=4, elem_id="vqa-probe-true")
        conflict_caps = gr.Textbox(label="Conflicting captions (one per line)", lines=4, elem_id="vqa-probe-conflict")
        count = gr.Dropdown(["random", "1", "2", "3", "4"], value="random", label="x (true captions)")
        probe = gr.Button("Build the probing options", elem_id="vqa-probe-build")
    create = gr.Button("Save the item (it goes to verification)", variant="primary", elem_id="vqa-author-save")
    saved = gr.Markdown(elem_id="vqa-author-saved")
    with gr.Accordion("All items", open=False):
        table = gr.Dataframe(interactive=False, wrap=True)
        refresh = gr.Button("Refresh")
    return AuthorPanel(
        stored,
        files,
        preview,
        build,
        category,
        question,
        options,
        correct,
        choice_type,
        true_caps,
        conflict_caps,
        count,
        probe,
        create,
        saved,
        table,
        refresh,
    )


def on_build(ctx: AppContext, p: AuthorPanel, paths: list[str] | None, request: gr.Request) -> dict:
    """Store the images and show the composite models will see."""
    if not paths:
        raise ValidationError("Choose one or more images first.")
    name = caller(ctx, request)
    rels = service.upload_images(ctx.database, ctx.settings, name, paths)
    composite = service.preview_composite(ctx.database, ctx.settings, name, rels)
    return {p.stored: rels, p.preview: str(media_path(ctx.settings, composite or rels[0]))}


def on_options(text: str, chosen: list[str]) -> Any:
    """The key's choices follow the options as typed; ticks of options gone are dropped."""
    letters = letter_choices(options_lines(text))
    valid = {v for _, v in letters}
    return gr.update(choices=letters, value=[c for c in chosen or [] if c in valid])


def on_probe(ctx: AppContext, p: AuthorPanel, true_text: str, conflict_text: str, x: str, request: gr.Request) -> dict:
    """A probing draft: x true and 4 - x conflicting captions, shuffled, filled into the question's fields."""
    draft = service.probing_draft(
        ctx.database,
        caller(ctx, request),
        options_lines(true_text),
        options_lines(conflict_text),
        None if x == "random" else int(x),
    )
    return {
        p.category: draft.category,
        p.question: draft.question,
        p.options: "\n".join(draft.options),
        p.correct: gr.update(choices=letter_choices(list(draft.options)), value=list(draft.answer)),
        p.choice_type: draft.choice_type,
    }


def on_create(ctx: AppContext, p: AuthorPanel, data: dict, request: gr.Request) -> str:
    if not data[p.stored]:
        raise ValidationError("Store the images first (step 1).")
    item = service.create_item(
        ctx.database,
        ctx.settings,
        caller(ctx, request),
        category=data[p.category],
        question=data[p.question],
        options=options_lines(data[p.options]),
        answer=data[p.correct],
        choice_type=data[p.choice_type],
        images=data[p.stored],
    )
    return f"Saved item {esc(item.id)} ({esc(item.category)}); it now waits for {ctx.settings.vqa_verifiers} verifiers."


def on_refresh(ctx: AppContext, request: gr.Request) -> pd.DataFrame:
    return pd.DataFrame(service.browse_items(ctx.database, caller(ctx, request)))


def events(ctx: AppContext, p: AuthorPanel) -> list[Event]:
    item = {p.stored, p.category, p.question, p.options, p.correct, p.choice_type}
    captions, typed = [p.true_caps, p.conflict_caps, p.count], [p.options, p.correct]
    hidden = {"show_progress": "hidden"}  # the key's choices follow the typing without a flicker
    return [
        Event("vqa_ui_author_build", "author", bind(on_build, ctx, p), p.build.click, [p.files], [p.stored, p.preview]),
        Event("vqa_ui_author_options", "author", on_options, p.options.change, typed, p.correct, hidden),
        Event("vqa_ui_author_probe", "author", bind(on_probe, ctx, p), p.probe.click, captions, p.draft),
        Event("vqa_ui_author_create", "author", bind(on_create, ctx, p), p.create.click, item, p.saved),
        Event("vqa_ui_author_refresh", "author", bind(on_refresh, ctx), p.refresh.click, None, p.table),
    ]


def build_author_panel(ctx: AppContext) -> AuthorPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
