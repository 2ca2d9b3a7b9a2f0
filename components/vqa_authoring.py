"""The authoring side of the compositional VQA tab: shared display helpers, the Author panel (composite
and probing builders) and the Verify panel (two verifiers, disputes to reviewers)."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.vqa import service
from backend.vqa.categories import CATEGORIES
from backend.vqa.images import media_path
from backend.vqa.items import LETTERS
from components.common import caller, esc, ui_errors


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


def author_panel(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings
    stored = gr.State([])
    gr.Markdown(
        "**1. Images.** One image is shown as it is; two side by side labelled *Left* and *Right*; "
        "more in a grid labelled *Image 1 … n* (paper section 3.1)."
    )
    with gr.Row():
        files = gr.File(label="Images", file_count="multiple", file_types=["image"], elem_id="vqa-author-files")
        preview = gr.Image(label="What models see", type="filepath", interactive=False, elem_id="vqa-author-preview")
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

    @ui_errors
    def on_build(paths: list[str] | None, request: gr.Request) -> tuple:
        if not paths:
            raise gr.Error("Choose one or more images first.")
        name = caller(ctx, request)
        rels = service.upload_images(db, settings, name, paths)
        composite = service.preview_composite(db, settings, name, rels)
        return rels, str(media_path(settings, composite or rels[0]))

    def on_options(text: str, chosen: list[str]) -> Any:
        letters = letter_choices(options_lines(text))
        valid = {v for _, v in letters}
        return gr.update(choices=letters, value=[c for c in chosen or [] if c in valid])

    @ui_errors
    def on_probe(true_text: str, conflict_text: str, x: str, request: gr.Request) -> tuple:
        draft = service.probing_draft(
            db,
            caller(ctx, request),
            options_lines(true_text),
            options_lines(conflict_text),
            None if x == "random" else int(x),
        )
        return (
            draft.category,
            draft.question,
            "\n".join(draft.options),
            gr.update(choices=letter_choices(list(draft.options)), value=list(draft.answer)),
            draft.choice_type,
        )

    @ui_errors
    def on_create(
        rels: list[str], cat: str, q: str, opts: str, letters: list[str], kind: str, request: gr.Request
    ) -> str:
        if not rels:
            raise gr.Error("Store the images first (step 1).")
        item = service.create_item(
            db,
            settings,
            caller(ctx, request),
            category=cat,
            question=q,
            options=options_lines(opts),
            answer=letters,
            choice_type=kind,
            images=rels,
        )
        return f"Saved item {esc(item.id)} ({esc(item.category)}); it now waits for {settings.vqa_verifiers} verifiers."

    @ui_errors
    def on_refresh(request: gr.Request) -> pd.DataFrame:
        return pd.DataFrame(service.browse_items(db, caller(ctx, request)))

    build.click(on_build, [files], [stored, preview], api_visibility="private")
    options.change(on_options, [options, correct], correct, api_visibility="private", show_progress="hidden")
    probe.click(
        on_probe,
        [true_caps, conflict_caps, count],
        [category, question, options, correct, choice_type],
        api_visibility="private",
    )
    create.click(
        on_create, [stored, category, question, options, correct, choice_type], saved, api_visibility="private"
    )
    refresh.click(on_refresh, None, table, api_visibility="private")


def verify_panel(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings
    current = gr.State(None)
    gr.Markdown(
        f"Each item is checked by {settings.vqa_verifiers} verifiers: does the question test "
        "compositional information, and is the key right? When they disagree a reviewer decides."
    )
    fetch = gr.Button("Next item to verify", elem_id="vqa-verify-next")
    progress = gr.Markdown()
    with gr.Row():
        image = gr.Image(label="Image", type="filepath", interactive=False, height=380)
        details = gr.Markdown(elem_id="vqa-verify-item")
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
    outcome = gr.Markdown(elem_id="vqa-verify-outcome")
    with gr.Accordion("Disputes (reviewers)", open=False):
        disputed = gr.Dropdown([], label="Disputed item")
        dispute_md = gr.Markdown()
        with gr.Row():
            load_disputes = gr.Button("Load disputes")
            resolve_accept = gr.Button("Accept (final)")
            resolve_reject = gr.Button("Reject (final)")

    outputs = [current, progress, image, details, edit_question, edit_options, edit_key]

    def render(payload: dict[str, Any]) -> dict:
        task, done = payload["task"], payload["progress"]
        base = {progress: f"**Verified by you:** {done['mine_total']} · **left in the pool:** {done['left_in_pool']}"}
        if task is None:
            return {
                **base,
                current: None,
                image: None,
                details: "### Nothing left for you to verify.",
                edit_question: "",
                edit_options: "",
                edit_key: "",
            }
        return {
            **base,
            current: task["id"],
            image: item_image(ctx, task),
            details: question_md(task, task["answer"]),
            edit_question: task["question"],
            edit_options: "\n".join(task["options"]),
            edit_key: ", ".join(task["answer"]),
        }

    @ui_errors
    def on_fetch(request: gr.Request) -> dict:
        return render(service.next_verification(db, settings, caller(ctx, request)))

    def decide(decision: str):
        @ui_errors
        def handler(item_id, comp, key_ok, text, q, opts, letters, request: gr.Request) -> dict:
            if not item_id:
                raise gr.Error("Ask for an item to verify first.")
            name = caller(ctx, request)
            changes = {"question": q, "options": options_lines(opts), "answer": letters} if decision == "edit" else None
            done = service.submit_verification(
                db,
                settings,
                name,
                item_id,
                decision,
                compositional=comp,
                key_correct=key_ok,
                note=text,
                changes=changes,
            )["item"]
            state = "disputed: a reviewer decides" if done["disputed"] else done["status"]
            return {
                **render(service.next_verification(db, settings, name)),
                outcome: f"Recorded your {decision} of {esc(item_id)}; the item is now **{state}**.",
            }

        return handler

    @ui_errors
    def on_disputes(request: gr.Request) -> Any:
        items = service.disputes(db, caller(ctx, request))
        return gr.update(choices=[i["id"] for i in items], value=items[0]["id"] if items else None)

    @ui_errors
    def on_dispute_pick(item_id: str | None, request: gr.Request) -> str:
        if not item_id:
            return ""
        view = service.item_view(db, caller(ctx, request), item_id)
        votes = "\n".join(
            f"- {esc(v['verifier'])}: **{v['decision']}** {esc(v['note'] or '')}" for v in view["verifications"]
        )
        return question_md(view, view["answer"]) + "\n\n**Verifiers:**\n" + votes

    def resolve(decision: str):
        @ui_errors
        def handler(item_id: str | None, text: str, request: gr.Request) -> str:
            if not item_id:
                raise gr.Error("Choose a disputed item.")
            done = service.resolve_dispute(db, settings, caller(ctx, request), item_id, decision, text)["item"]
            return f"{esc(item_id)} is now **{done['status']}**."

        return handler

    inputs = [current, compositional, key_right, note, edit_question, edit_options, edit_key]
    fetch.click(on_fetch, None, outputs, api_visibility="private")
    accept.click(decide("accept"), inputs, [*outputs, outcome], api_visibility="private")
    reject.click(decide("reject"), inputs, [*outputs, outcome], api_visibility="private")
    edit.click(decide("edit"), inputs, [*outputs, outcome], api_visibility="private")
    load_disputes.click(on_disputes, None, disputed, api_visibility="private")
    disputed.change(on_dispute_pick, disputed, dispute_md, api_visibility="private")
    resolve_accept.click(resolve("accept"), [disputed, note], outcome, api_visibility="private")
    resolve_reject.click(resolve("reject"), [disputed, note], outcome, api_visibility="private")
