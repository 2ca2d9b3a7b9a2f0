"""The admin tab: import ViLPAct, export intents, manage accounts, read the audit log."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import admin
from backend.accounts.auth import ROLES
from backend.context import AppContext
from backend.intents.export import FORMATS, export_for_download
from backend.vilpact.importer import import_release
from components.common import EventOptions, TabHandle, caller, ui_errors

USER_COLUMNS = ["username", "role", "disabled", "source", "created_at"]


PRIVATE: EventOptions = {"api_visibility": "private"}


def _import_panel(ctx: AppContext) -> None:
    gr.Markdown(
        "The folder of ViLPAct's released `data/` (classes, `gt_act_seq/all_gt_seq.csv`, splits) on the "
        "server, and optionally a folder of Charades `<id>.mp4` videos. A malformed file is named with "
        "its line; nothing is imported then. Re-importing is safe."
    )
    with gr.Row():
        root = gr.Textbox(label="ViLPAct data folder", elem_id="import-root")
        videos = gr.Textbox(label="Video folder (optional)", elem_id="import-videos")
    import_button = gr.Button("Import", elem_id="import-button")
    import_result = gr.JSON(label="Import report")

    @ui_errors
    def admin_ui_import(folder: str, video_folder: str, request: gr.Request) -> dict:
        if not folder.strip():
            raise gr.Error("Enter the folder of ViLPAct's data/ on the server.")
        return import_release(ctx.database, ctx.settings, caller(ctx, request), folder.strip(),
                                       video_folder.strip() or None)

    import_button.click(admin_ui_import, [root, videos], import_result, **PRIVATE)


def _export_panel(ctx: AppContext) -> None:
    fmt = gr.Dropdown(list(FORMATS), value="jsonl", label="Format")
    export_button = gr.Button("Export", elem_id="export-button")
    export_file = gr.File(label="Download", interactive=False)

    @ui_errors
    def on_export(chosen: str, request: gr.Request) -> str:
        exported = Path(export_for_download(ctx.database, ctx.settings, caller(ctx, request), chosen)["path"])
        download = Path(tempfile.mkdtemp(prefix="compstudio-export-")) / exported.name
        shutil.copyfile(exported, download)  # handed to Gradio's cache under an unguessable name
        return str(download)

    export_button.click(on_export, [fmt], export_file, **PRIVATE)


def users_frame(ctx: AppContext, name: str | None) -> pd.DataFrame:
    return pd.DataFrame(admin.list_accounts(ctx.database, name), columns=USER_COLUMNS)


def _accounts_panel(ctx: AppContext) -> gr.Dataframe:
    db = ctx.database
    users = gr.Dataframe(headers=USER_COLUMNS, interactive=False, label="Accounts", elem_id="users-table")
    with gr.Row():
        new_name = gr.Textbox(label="User name")
        new_role = gr.Dropdown(list(ROLES), value="annotator", label="Role")
        new_password = gr.Textbox(label="Password (8+ characters)", type="password")
    with gr.Row():
        add_button = gr.Button("Add account")
        role_button = gr.Button("Set role")
        disable_button = gr.Button("Disable")
        enable_button = gr.Button("Enable")

    @ui_errors
    def on_add(name: str, role: str, password: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        admin.add_account(db, me, name.strip(), role, password)
        return {users: users_frame(ctx, me), new_password: ""}

    def change(action: Callable[[str | None, str, str], Any]) -> Callable[..., pd.DataFrame]:
        @ui_errors
        def handler(name: str, role: str, request: gr.Request) -> pd.DataFrame:
            me = caller(ctx, request)
            action(me, name.strip(), role)
            return users_frame(ctx, me)

        return handler

    add_button.click(on_add, [new_name, new_role, new_password], [users, new_password], **PRIVATE)
    for button, action in (
        (role_button, lambda me, n, r: admin.change_role(db, me, n, r)),
        (disable_button, lambda me, n, r: admin.set_account_disabled(db, me, n, True)),
        (enable_button, lambda me, n, r: admin.set_account_disabled(db, me, n, False)),
    ):
        button.click(change(action), [new_name, new_role], users, **PRIVATE)
    return users


def _backup_panel(ctx: AppContext) -> None:
    gr.Markdown("Consistent snapshots of the database (SQLite backup API) in `<data>/backups/`, and pushes "
                "to the Hub dataset repo when `COMPSTUDIO_HUB_BACKUP_REPO` is set.")
    with gr.Row():
        backup_refresh = gr.Button("Show backup status", elem_id="backup-status-button")
        backup_now = gr.Button("Back up now", elem_id="backup-now-button")
    backup_info = gr.JSON(label="Backup status")

    @ui_errors
    def on_backup_status(request: gr.Request) -> dict:
        return ctx.backup.status(caller(ctx, request))

    @ui_errors
    def on_backup_now(request: gr.Request) -> dict:
        return ctx.backup.back_up_now(caller(ctx, request))

    backup_refresh.click(on_backup_status, None, backup_info, **PRIVATE)
    backup_now.click(on_backup_now, None, backup_info, **PRIVATE)


def _audit_panel(ctx: AppContext) -> None:
    refresh_audit = gr.Button("Refresh")
    audit_table = gr.Dataframe(interactive=False, label="Audit log")

    @ui_errors
    def on_audit(request: gr.Request) -> pd.DataFrame:
        rows = admin.audit_log(ctx.database, caller(ctx, request), limit=200)
        frame = pd.DataFrame(rows, columns=["at", "actor", "action", "target", "detail"])
        frame["detail"] = frame["detail"].map(lambda d: json.dumps(json.loads(d))[:200] if d else "")
        return frame

    refresh_audit.click(on_audit, None, audit_table, **PRIVATE)


def build_admin_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Admin", id="admin", visible=False) as tab:
        with gr.Accordion("Import ViLPAct", open=True):
            _import_panel(ctx)
        with gr.Accordion("Export intent annotations", open=False):
            _export_panel(ctx)
        with gr.Accordion("Accounts", open=False):
            users = _accounts_panel(ctx)
        with gr.Accordion("Backups", open=False):
            _backup_panel(ctx)
        with gr.Accordion("Audit log (latest 200 writes)", open=False):
            _audit_panel(ctx)
        _register_api(ctx)

    @ui_errors
    def on_load(request: gr.Request) -> Any:
        name = caller(ctx, request)
        from backend.accounts.auth import get_user

        user = get_user(ctx.database, name) if name else None
        if user is None or not user.has_role("admin"):
            return gr.update()
        return users_frame(ctx, name)

    return TabHandle(tab=tab, min_role="admin", on_load=(on_load, [users]))


def _register_api(ctx: AppContext) -> None:
    """Named admin endpoints for scripts; every one checks the admin role in the backend."""
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def admin_import_vilpact(folder: str, video_folder: str, request: gr.Request) -> dict:
        """Import ViLPAct's released data/ folder (on the server); video_folder may be empty."""
        return import_release(db, settings, caller(ctx, request), folder, video_folder or None)

    @ui_errors
    def admin_export_intents(fmt: str, request: gr.Request) -> dict:
        """Export intent annotations (jsonl, csv or parquet); returns the row count and the file name."""
        return export_for_download(db, settings, caller(ctx, request), fmt)

    @ui_errors
    def admin_users(request: gr.Request) -> list:
        """All accounts."""
        return admin.list_accounts(db, caller(ctx, request))

    @ui_errors
    def admin_user_add(name: str, role: str, password: str, request: gr.Request) -> dict:
        """Create an account."""
        return admin.add_account(db, caller(ctx, request), name, role, password)

    @ui_errors
    def admin_user_set_role(name: str, role: str, request: gr.Request) -> dict:
        """Change an account's role."""
        return admin.change_role(db, caller(ctx, request), name, role)

    @ui_errors
    def admin_user_disable(name: str, request: gr.Request) -> dict:
        """Disable an account (it can no longer sign in or call anything)."""
        return admin.set_account_disabled(db, caller(ctx, request), name, True)

    for fn in (admin_import_vilpact, admin_export_intents, admin_users, admin_user_add, admin_user_set_role,
               admin_user_disable):
        gr.api(fn, api_name=fn.__name__)
