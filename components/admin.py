"""The admin tab: import ViLPAct, export intents, manage accounts, read the audit log."""

from __future__ import annotations

import html
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import admin
from backend.accounts.auth import ROLES
from backend.context import AppContext
from backend.errors import PermissionDenied
from backend.intents.export import FORMATS, export_for_download
from backend.vilpact.importer import import_release
from components import admin_charades, webhooks_panel
from components.access import endpoint, listen
from components.common import EventOptions, TabHandle, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, shown_in
from components.studies.invitations import build_invitations_panel
from components.studies.workers import build_workers_panel

USER_COLUMNS = ["username", "role", "disabled", "source", "created_at"]


PRIVATE: EventOptions = {"api_visibility": "private"}


def _import_panel(ctx: AppContext) -> None:
    gr.Markdown(
        "The folder of ViLPAct's released `data/` (classes, `gt_act_seq/all_gt_seq.csv`, splits) on the "
        "server, and optionally a folder of Charades `<id>.mp4` videos, both inside the import folder "
        f"<code>{html.escape(str(ctx.settings.import_root))}</code> (setting `import_dir`; a relative path is taken inside it). "
        "A malformed file is named with its line; nothing is imported then. Re-importing is safe."
    )
    with gr.Row():
        root = gr.Textbox(label="ViLPAct data folder", elem_id="import-root")
        videos = gr.Textbox(label="Video folder (optional)", elem_id="import-videos")
    import_button = gr.Button("Import", elem_id="import-button")
    message = gr.Markdown(elem_id="import-message")
    import_result = gr.JSON(label="Import report", visible=False)  # shown once there is a report

    @shown_in(message)
    def admin_ui_import(folder: str, video_folder: str, request: gr.Request) -> dict:
        if not folder.strip():
            raise Mistake("Enter the folder of ViLPAct's data/ on the server.")
        report = import_release(
            ctx.database, ctx.settings, caller(ctx, request), folder.strip(), video_folder.strip() or None
        )
        return {import_result: gr.JSON(report, visible=True), message: "Imported; the report is below."}

    listen(
        ctx,
        import_button.click,
        admin_ui_import,
        [root, videos],
        [import_result, message],
        **QUIET,
        **PRIVATE,
        api_name="admin_ui_import",
    )


def _export_panel(ctx: AppContext) -> None:
    fmt = gr.Dropdown(list(FORMATS), value="jsonl", label="Format")
    export_button = gr.Button("Export", elem_id="export-button")
    message = gr.Markdown(elem_id="export-message")
    export_file = gr.File(label="Download", interactive=False, visible=False)  # shown with a file

    @shown_in(message)
    def on_export(chosen: str, request: gr.Request) -> dict:
        exported = Path(export_for_download(ctx.database, ctx.settings, caller(ctx, request), chosen)["path"])
        download = Path(tempfile.mkdtemp(prefix="compstudio-export-")) / exported.name
        shutil.copyfile(exported, download)  # handed to Gradio's cache under an unguessable name
        return {export_file: gr.File(str(download), visible=True), message: ""}

    listen(
        ctx,
        export_button.click,
        on_export,
        [fmt],
        [export_file, message],
        **QUIET,
        **PRIVATE,
        api_name="admin_ui_export",
    )


def users_frame(ctx: AppContext, name: str | None) -> pd.DataFrame:
    return pd.DataFrame(admin.list_accounts(ctx.database, name), columns=USER_COLUMNS)


def accounts_count(frame: pd.DataFrame) -> str:
    """One line of counts over the accounts table, e.g. "**4 accounts**: 3 annotators, 1 admin · 1 disabled".

    >>> accounts_count(pd.DataFrame({"role": ["admin", "annotator", "annotator"], "disabled": [False, True, False]}))
    '**3 accounts**: 2 annotators, 1 admin · 1 disabled'
    """
    by_role = frame["role"].value_counts()
    parts = [f"{by_role[r]} {r}{'' if by_role[r] == 1 else 's'}" for r in ROLES if r in by_role]
    text = f"**{len(frame)} account{'' if len(frame) == 1 else 's'}**: {', '.join(parts) or 'none'}"
    disabled = int(frame["disabled"].astype(bool).sum())
    return text + (f" · {disabled} disabled" if disabled else "")


@dataclass
class AccountsView:
    users: gr.Dataframe
    count: gr.Markdown

    def fill(self, ctx: AppContext, me: str | None) -> dict:
        frame = users_frame(ctx, me)
        return {self.users: frame, self.count: accounts_count(frame)}


def _accounts_panel(ctx: AppContext) -> AccountsView:
    db = ctx.database
    count = gr.Markdown(elem_id="users-count")
    users = gr.Dataframe(headers=USER_COLUMNS, interactive=False, label="Accounts", elem_id="users-table")
    view = AccountsView(users, count)
    with gr.Row():
        new_name = gr.Textbox(label="User name", elem_id="account-name")
        new_role = gr.Dropdown(list(ROLES), value="annotator", label="Role", elem_id="account-role")
        new_password = gr.Textbox(label="Password (8+ characters)", type="password", elem_id="account-password")
    with gr.Row():
        add_button = gr.Button("Add account")
        role_button = gr.Button("Set role")
        disable_button = gr.Button("Disable")
        enable_button = gr.Button("Enable")
    message = gr.Markdown(elem_id="account-message")

    def named(name: str) -> str:
        if not name.strip():
            raise Mistake("Enter the user name of the account.")
        return name.strip()

    @shown_in(message)
    def on_add(name: str, role: str, password: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        added = admin.add_account(db, me, named(name), role, password)
        return {
            **view.fill(ctx, me),
            new_password: "",
            message: f"Added **{esc(added['username'])}** ({esc(added['role'])}).",
        }

    def change(action: Callable[[str | None, str, str], Any], done: str) -> Callable[..., dict]:
        @shown_in(message)
        def handler(name: str, role: str, request: gr.Request) -> dict:
            me = caller(ctx, request)
            changed = action(me, named(name), role)
            return {**view.fill(ctx, me), message: done.format(name=esc(changed["username"]), role=changed["role"])}

        return handler

    listen(
        ctx,
        add_button.click,
        on_add,
        [new_name, new_role, new_password],
        [users, count, new_password, message],
        **QUIET,
        **PRIVATE,
        api_name="admin_ui_user_add",
    )
    for api_name, button, action, done in (
        (
            "admin_ui_user_role",
            role_button,
            lambda me, n, r: admin.change_role(db, me, n, r),
            "**{name}** is now {role}.",
        ),
        (
            "admin_ui_user_disable",
            disable_button,
            lambda me, n, r: admin.set_account_disabled(db, me, n, True),
            "Disabled **{name}**.",
        ),
        (
            "admin_ui_user_enable",
            enable_button,
            lambda me, n, r: admin.set_account_disabled(db, me, n, False),
            "Enabled **{name}**.",
        ),
    ):
        listen(
            ctx,
            button.click,
            change(action, done),
            [new_name, new_role],
            [users, count, message],
            api_name=api_name,
            **QUIET,
            **PRIVATE,
        )
    return view


def _backup_panel(ctx: AppContext) -> None:
    gr.Markdown(
        "Consistent snapshots of the database (SQLite backup API) in `<data>/backups/`, and pushes "
        "to the Hub dataset repo when `COMPSTUDIO_HUB_BACKUP_REPO` is set."
    )
    with gr.Row():
        backup_refresh = gr.Button("Show backup status", elem_id="backup-status-button")
        backup_now = gr.Button("Back up now", elem_id="backup-now-button")
    message = gr.Markdown(elem_id="backup-message")
    backup_info = gr.JSON(label="Backup status", visible=False)  # shown once asked for

    @shown_in(message)
    def on_backup_status(request: gr.Request) -> dict:
        return {backup_info: gr.JSON(ctx.backup.status(caller(ctx, request)), visible=True), message: ""}

    @shown_in(message)
    def on_backup_now(request: gr.Request) -> dict:
        done = ctx.backup.back_up_now(caller(ctx, request))
        return {backup_info: gr.JSON(done, visible=True), message: "Backed up."}

    listen(
        ctx,
        backup_refresh.click,
        on_backup_status,
        None,
        [backup_info, message],
        **PRIVATE,
        api_name="admin_ui_backup_status",
    )
    listen(
        ctx, backup_now.click, on_backup_now, None, [backup_info, message], **PRIVATE, api_name="admin_ui_backup_now"
    )


def audit_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    rows = admin.audit_log(ctx.database, me, limit=200)
    frame = pd.DataFrame(rows, columns=["at", "actor", "action", "target", "detail"])
    frame["detail"] = frame["detail"].map(lambda d: json.dumps(json.loads(d))[:200] if d else "")
    return frame


def _audit_panel(ctx: AppContext) -> gr.Dataframe:
    refresh_audit = gr.Button("Refresh")
    audit_table = gr.Dataframe(interactive=False, label="Audit log", elem_id="audit-table")

    @ui_errors
    def on_audit(request: gr.Request) -> pd.DataFrame:
        return audit_frame(ctx, caller(ctx, request))

    listen(ctx, refresh_audit.click, on_audit, None, audit_table, **PRIVATE, api_name="admin_ui_audit")
    return audit_table


def build_admin_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Admin", id="admin", visible=False) as tab:
        with gr.Accordion("Import ViLPAct", open=True):
            _import_panel(ctx)
        with gr.Accordion("Charades annotations: extract sequences into the intent pool", open=False):
            admin_charades.build_charades_panel(ctx)
        with gr.Accordion("Export intent annotations", open=False):
            _export_panel(ctx)
        with gr.Accordion("Accounts", open=False):
            accounts = _accounts_panel(ctx)
        with gr.Accordion("Crowd workers: report, payment CSV, blocking", open=False):
            build_workers_panel(ctx)
        with gr.Accordion("Invitation links", open=False):
            build_invitations_panel(ctx)
        with gr.Accordion("Webhooks: tell other systems as work happens", open=False):
            webhooks_panel.build_webhooks_panel(ctx)
        with gr.Accordion("Backups", open=False):
            _backup_panel(ctx)
        with gr.Accordion("Audit log (latest 200 writes)", open=False):
            audit_table = _audit_panel(ctx)
    outputs = [accounts.users, accounts.count, audit_table]

    def on_open(request: gr.Request) -> dict:
        """The accounts, their counts and the audit log as they are now (page load and each visit of the tab)."""
        try:
            me = caller(ctx, request)
            return {**accounts.fill(ctx, me), audit_table: audit_frame(ctx, me)}
        except PermissionDenied:  # not an admin: the tab is hidden; leave it empty (one unchanged output: an
            return {accounts.count: gr.update()}  # empty dict would read as a single value and log a traceback)

    listen(ctx, tab.select, on_open, None, outputs, show_progress="hidden", **PRIVATE, api_name="admin_ui_open")
    return TabHandle(tab=tab, on_load=(on_open, outputs), filled_on_select=True)


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

    for name, fn in {
        "admin_import_vilpact": admin_import_vilpact,
        "admin_export_intents": admin_export_intents,
        "admin_users": admin_users,
        "admin_user_add": admin_user_add,
        "admin_user_set_role": admin_user_set_role,
        "admin_user_disable": admin_user_disable,
    }.items():
        endpoint(ctx, fn, api_name=name)
