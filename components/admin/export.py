"""The Admin tab's "Export intent annotations" panel: the intent annotations as a file to download (jsonl, csv or
parquet). The backend checks the admin role."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from backend.context import AppContext
from backend.intents.export import FORMATS, export_for_download
from components.admin.shown import shown
from components.common import caller
from components.events import Event, wire
from components.feedback import QUIET


@dataclass(frozen=True)
class ExportPanel:
    fmt: gr.Dropdown
    start: gr.Button
    message: gr.Markdown
    file: gr.File  # shown with a file


def layout() -> ExportPanel:
    fmt = gr.Dropdown(list(FORMATS), value="jsonl", label="Format")
    start = gr.Button("Export", elem_id="export-button")
    message = gr.Markdown(elem_id="export-message")
    file = gr.File(label="Download", interactive=False, visible=False)
    return ExportPanel(fmt, start, message, file)


def on_export(ctx: AppContext, p: ExportPanel, chosen: str, request: gr.Request) -> dict:
    exported = Path(export_for_download(ctx.database, ctx.settings, caller(ctx, request), chosen)["path"])
    download = Path(tempfile.mkdtemp(prefix="compstudio-export-")) / exported.name
    shutil.copyfile(exported, download)  # handed to Gradio's cache under an unguessable name
    return {p.file: gr.File(str(download), visible=True), p.message: ""}


def events(ctx: AppContext, p: ExportPanel) -> list[Event]:
    return [
        Event("admin_ui_export", "admin", shown(on_export, ctx, p), p.start.click, [p.fmt], [p.file, p.message], QUIET)
    ]


def build_export_panel(ctx: AppContext) -> ExportPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
