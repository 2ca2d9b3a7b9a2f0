"""Reviewers and admins store an example bank or a test set from the browser (the backend checks the role; the
accordion is shown to them by the tab's load). The stored set is chosen in the test-case chooser at once."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.icl import service
from components.common import caller, esc
from components.events import Event, bind
from components.icl.cases import CasesPanel, cases_of
from components.icl.view import not_done


@dataclass(frozen=True)
class UploadPanel:
    box: gr.Accordion
    file: gr.File
    name: gr.Textbox
    kind: gr.Radio
    replace: gr.Checkbox
    button: gr.Button


def layout() -> UploadPanel:
    with gr.Accordion("Add an example bank or test set (reviewers and admins)", open=False, visible=False) as box:
        gr.Markdown(
            f'JSON Lines, one `{{"input", "output", "category"?}}` object a line, at most '
            f"{service.UPLOAD_MAX_BYTES // 10**6} MB. Every line is checked before anything is stored."
        )
        with gr.Row():
            file = gr.File(label="JSONL file", file_types=[".jsonl", ".json"], elem_id="icl_upload_file")
            with gr.Column():
                name = gr.Textbox(label="Name (blank: the file name)", elem_id="icl_upload_name")
                kind = gr.Radio(["bank", "tests"], value="tests", label="Kind", elem_id="icl_upload_kind")
                replace = gr.Checkbox(False, label="Replace a set with the same name")
                button = gr.Button("Store the set", elem_id="icl_upload")
    return UploadPanel(box, file, name, kind, replace, button)


def on_upload(
    ctx: AppContext,
    c: CasesPanel,
    message: gr.Markdown,
    path: str | None,
    name: str,
    kind: str,
    replace: bool,
    request: gr.Request,
) -> dict:
    """Store the set, say so in ``message`` (the tab's message line), and choose it."""
    user = caller(ctx, request)
    try:
        stored = service.upload_set(ctx, user, path, name, kind, replace)
        found = service.sets(ctx, user)
        chosen = cases_of(ctx, c, stored["name"], "", "", user) if stored["kind"] == "tests" else {}
    except CompStudioError as exc:
        return not_done(message, exc)
    target = c.bank if stored["kind"] == "bank" else c.tests
    return {
        message: f"Stored the {esc(stored['kind'])} set **{esc(stored['name'])}** ({stored['items']:,} lines).",
        c.bank: gr.update(choices=found["bank"]),
        c.tests: gr.update(choices=found["tests"]),
        target: gr.update(value=stored["name"]),
        **chosen,
    }


def events(ctx: AppContext, up: UploadPanel, c: CasesPanel, message: gr.Markdown) -> list[Event]:
    return [
        Event(
            "icl_ui_upload", "reviewer", bind(on_upload, ctx, c, message), up.button.click,
            [up.file, up.name, up.kind, up.replace], [message, c.bank, c.tests, c.category, c.case],
            {"concurrency_limit": 1, "show_progress": "minimal"},
        ),
    ]  # fmt: skip
