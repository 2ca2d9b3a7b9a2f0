"""The Admin tab's "Backups" panel: the backup status, and a backup now (``ctx.backup``, which checks the admin
role)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from components.admin.shown import shown
from components.common import caller
from components.events import Event, wire


@dataclass(frozen=True)
class BackupPanel:
    status: gr.Button
    now: gr.Button
    message: gr.Markdown
    info: gr.JSON  # shown once asked for


def layout() -> BackupPanel:
    gr.Markdown(
        "Consistent snapshots of the database (SQLite backup API) in `<data>/backups/`, and pushes "
        "to the Hub dataset repo when `COMPSTUDIO_HUB_BACKUP_REPO` is set."
    )
    with gr.Row():
        status = gr.Button("Show backup status", elem_id="backup-status-button")
        now = gr.Button("Back up now", elem_id="backup-now-button")
    message = gr.Markdown(elem_id="backup-message")
    info = gr.JSON(label="Backup status", visible=False)
    return BackupPanel(status, now, message, info)


def on_status(ctx: AppContext, p: BackupPanel, request: gr.Request) -> dict:
    return {p.info: gr.JSON(ctx.backup.status(caller(ctx, request)), visible=True), p.message: ""}


def on_now(ctx: AppContext, p: BackupPanel, request: gr.Request) -> dict:
    done = ctx.backup.back_up_now(caller(ctx, request))
    return {p.info: gr.JSON(done, visible=True), p.message: "Backed up."}


def events(ctx: AppContext, p: BackupPanel) -> list[Event]:
    outputs = [p.info, p.message]
    return [
        Event("admin_ui_backup_status", "admin", shown(on_status, ctx, p), p.status.click, None, outputs),
        Event("admin_ui_backup_now", "admin", shown(on_now, ctx, p), p.now.click, None, outputs),
    ]


def build_backup_panel(ctx: AppContext) -> BackupPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
