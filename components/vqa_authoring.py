"""The authoring side of the compositional VQA tab: shared display helpers and the Author panel (composite
and probing builders). The Verify panel is components/vqa_verify.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.vqa import service
from backend.vqa.categories import CATEGORIES
from backend.vqa.images import media_path
from backend.vqa.items import LETTERS
from components.access import listen
from components.common import EventOptions, caller, esc, ui_errors


def item_image(ctx: AppContext, view: dict[str, Any]) -> str:
    return str(media_path(ctx.settings, view.get("composite") or view["images"][0]))


def options_lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def letter_choices(options: list[str]) -> list[tuple[str, str]]:
    return [(f"{LETTERS[i]}. {text}", LETTERS[i]) for i, text in enumerate(options[: len(LETTERS)])]


def question_md(view: dict[str, Any], key: list[str] | None = None) -> str:
    kind = "single choice" if view["choice_type"] == "single" else "indefinite choice (one or more)"
    lines = [f"**{esc(view['category'])}** · {kind} · item {esc(view['id'])}", "", f"### {esc(view['question'])}"]
    options = (
        view["options"] if isinstance(view["options"], dict) else dict(zip(LETTERS, view["options"], strict=False))
    )
    for letter, text in options.items():
        mark = " ✅" if key and letter in key else ""
        lines.append(f"- **{letter}.** {esc(text)}{mark}")
    return "\n".join(lines)


@dataclass
class AuthorView:
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


def _author_layout() -> AuthorView:
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
    return AuthorView(
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


def _on_options(text: str, chosen: list[str]) -> Any:
    letters = letter_choices(options_lines(text))
    valid = {v for _, v in letters}
    return gr.update(choices=letters, value=[c for c in chosen or [] if c in valid])


def _create(ctx: AppContext, v: AuthorView, data: dict, name: str | None) -> str:
    if not data[v.stored]:
        raise gr.Error("Store the images first (step 1).")
    item = service.create_item(
        ctx.database,
        ctx.settings,
        name,
        category=data[v.category],
        question=data[v.question],
        options=options_lines(data[v.options]),
        answer=data[v.correct],
        choice_type=data[v.choice_type],
        images=data[v.stored],
    )
    return f"Saved item {esc(item.id)} ({esc(item.category)}); it now waits for {ctx.settings.vqa_verifiers} verifiers."


def author_panel(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings
    v = _author_layout()

    @ui_errors
    def on_build(paths: list[str] | None, request: gr.Request) -> dict:
        if not paths:
            raise gr.Error("Choose one or more images first.")
        name = caller(ctx, request)
        rels = service.upload_images(db, settings, name, paths)
        composite = service.preview_composite(db, settings, name, rels)
        return {v.stored: rels, v.preview: str(media_path(settings, composite or rels[0]))}

    @ui_errors
    def on_probe(true_text: str, conflict_text: str, x: str, request: gr.Request) -> dict:
        draft = service.probing_draft(
            db,
            caller(ctx, request),
            options_lines(true_text),
            options_lines(conflict_text),
            None if x == "random" else int(x),
        )
        return {
            v.category: draft.category,
            v.question: draft.question,
            v.options: "\n".join(draft.options),
            v.correct: gr.update(choices=letter_choices(list(draft.options)), value=list(draft.answer)),
            v.choice_type: draft.choice_type,
        }

    @ui_errors
    def on_create(data: dict, request: gr.Request) -> str:
        return _create(ctx, v, data, caller(ctx, request))

    @ui_errors
    def on_refresh(request: gr.Request) -> pd.DataFrame:
        return pd.DataFrame(service.browse_items(db, caller(ctx, request)))

    private: EventOptions = {"api_visibility": "private"}
    listen(ctx, v.build.click, on_build, [v.files], [v.stored, v.preview], **private, api_name="vqa_ui_author_build")
    listen(
        ctx,
        v.options.change,
        _on_options,
        [v.options, v.correct],
        v.correct,
        show_progress="hidden",
        **private,
        api_name="vqa_ui_author_options",
    )
    listen(
        ctx,
        v.probe.click,
        on_probe,
        [v.true_caps, v.conflict_caps, v.count],
        [v.category, v.question, v.options, v.correct, v.choice_type],
        **private,
        api_name="vqa_ui_author_probe",
    )
    listen(
        ctx,
        v.create.click,
        on_create,
        {v.stored, v.category, v.question, v.options, v.correct, v.choice_type},
        v.saved,
        **private,
        api_name="vqa_ui_author_create",
    )
    listen(ctx, v.refresh.click, on_refresh, None, v.table, **private, api_name="vqa_ui_author_refresh")
