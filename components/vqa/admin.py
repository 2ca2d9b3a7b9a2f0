"""The VQA tab's Admin panel: grant or revoke the author permission, import items (the released layout or JSON
lines; a file with any problem imports nothing) and export the verified items."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from backend.context import AppContext
from backend.errors import ValidationError
from backend.vqa import io
from backend.vqa.permissions import set_permission
from components.common import caller, esc
from components.events import Event, bind, wire


@dataclass(frozen=True)
class AdminPanel:
    user: gr.Textbox
    grant: gr.Button
    revoke: gr.Button
    done: gr.Markdown
    upload: gr.File
    do_import: gr.Button
    export_layout: gr.Radio
    do_export: gr.Button
    bundle: gr.File
    imported: gr.Markdown


def layout() -> AdminPanel:
    gr.Markdown("The **author** permission lets an annotator write VQA items and verify others' items.")
    user = gr.Textbox(label="User name", elem_id="vqa-admin-user")
    with gr.Row():
        grant = gr.Button("Grant author", elem_id="vqa-admin-grant")
        revoke = gr.Button("Revoke author")
    done = gr.Markdown(elem_id="vqa-admin-done")
    gr.Markdown(
        "**Import** a `.zip` of `questions.json` + `images/` (the released layout, with `answer` and "
        "`category`) or an items `.jsonl`; a file with any problem imports nothing. **Export** the "
        "verified items in either layout."
    )
    with gr.Row():
        upload = gr.File(label="Items file", file_types=[".zip", ".jsonl"], elem_id="vqa-admin-upload")
        with gr.Column():
            do_import = gr.Button("Import", elem_id="vqa-admin-import")
            export_layout = gr.Radio(["released", "jsonl"], value="released", label="Export layout")
            do_export = gr.Button("Export verified items")
            bundle = gr.File(label="Export")
    imported = gr.Markdown(elem_id="vqa-admin-imported")
    return AdminPanel(user, grant, revoke, done, upload, do_import, export_layout, do_export, bundle, imported)


def set_author(ctx: AppContext, granted: bool, user: str, request: gr.Request) -> str:
    set_permission(ctx.database, caller(ctx, request), (user or "").strip(), "author", granted)
    return f"{esc(user)} {'now has' if granted else 'no longer has'} the author permission."


def on_grant(ctx: AppContext, user: str, request: gr.Request) -> str:
    return set_author(ctx, True, user, request)


def on_revoke(ctx: AppContext, user: str, request: gr.Request) -> str:
    return set_author(ctx, False, user, request)


def on_import(ctx: AppContext, path: str | None, request: gr.Request) -> str:
    if not path:
        raise ValidationError("Choose a file to import.")
    out = io.import_upload(ctx.database, ctx.settings, caller(ctx, request), path)
    return f"Imported {out['imported']} items; {out['to_verify']} wait for verification."


def on_export(ctx: AppContext, fmt: str, request: gr.Request) -> str:
    out_dir = Path(tempfile.mkdtemp(prefix="vqa-export-"))
    return io.export_download(ctx.database, ctx.settings, caller(ctx, request), out_dir, fmt)


def events(ctx: AppContext, p: AdminPanel) -> list[Event]:
    return [
        Event("vqa_ui_author_grant", "admin", bind(on_grant, ctx), p.grant.click, [p.user], p.done),
        Event("vqa_ui_author_revoke", "admin", bind(on_revoke, ctx), p.revoke.click, [p.user], p.done),
        Event("vqa_ui_import", "admin", bind(on_import, ctx), p.do_import.click, [p.upload], p.imported),
        Event("vqa_ui_export", "reviewer", bind(on_export, ctx), p.do_export.click, [p.export_layout], p.bundle),
    ]


def build_admin_panel(ctx: AppContext) -> AdminPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
