"""The Admin tab's "Import ViLPAct" panel: import ViLPAct's released data/ folder (and optionally a folder of
Charades videos) from inside the import folder; the report is shown below. The backend checks the admin role."""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.vilpact.importer import import_release
from components.admin.shown import shown
from components.common import caller
from components.events import Event, wire
from components.feedback import QUIET, Mistake


@dataclass(frozen=True)
class ImportPanel:
    root: gr.Textbox
    videos: gr.Textbox
    start: gr.Button
    message: gr.Markdown
    report: gr.JSON  # shown once there is a report


def layout(ctx: AppContext) -> ImportPanel:
    gr.Markdown(
        "The folder of ViLPAct's released `data/` (classes, `gt_act_seq/all_gt_seq.csv`, splits) on the "
        "server, and optionally a folder of Charades `<id>.mp4` videos, both inside the import folder "
        f"<code>{html.escape(str(ctx.settings.import_root))}</code> (setting `import_dir`; a relative path is taken inside it). "
        "A malformed file is named with its line; nothing is imported then. Re-importing is safe."
    )
    with gr.Row():
        root = gr.Textbox(label="ViLPAct data folder", elem_id="import-root")
        videos = gr.Textbox(label="Video folder (optional)", elem_id="import-videos")
    start = gr.Button("Import", elem_id="import-button")
    message = gr.Markdown(elem_id="import-message")
    report = gr.JSON(label="Import report", visible=False)
    return ImportPanel(root, videos, start, message, report)


def on_import(ctx: AppContext, p: ImportPanel, folder: str, video_folder: str, request: gr.Request) -> dict:
    if not folder.strip():
        raise Mistake("Enter the folder of ViLPAct's data/ on the server.")
    report = import_release(
        ctx.database, ctx.settings, caller(ctx, request), folder.strip(), video_folder.strip() or None
    )
    return {p.report: gr.JSON(report, visible=True), p.message: "Imported; the report is below."}


def events(ctx: AppContext, p: ImportPanel) -> list[Event]:
    handler = shown(on_import, ctx, p)
    return [Event("admin_ui_import", "admin", handler, p.start.click, [p.root, p.videos], [p.report, p.message], QUIET)]


def build_import_panel(ctx: AppContext) -> ImportPanel:
    p = layout(ctx)
    wire(ctx, events(ctx, p))
    return p
