"""The Admin tab (admins), one panel module per accordion: import ViLPAct (vilpact_import.py), Charades
annotations into the intent pool (charades.py), export intent annotations (export.py), accounts (accounts.py),
crowd workers and invitation links (components/studies/workers.py, invitations.py), webhooks (webhooks.py), backups
(backups.py) and the audit log (audit.py). Named endpoints for scripts: components/admin/api.py. Handlers only
call the backend, which checks the admin role on every call."""

from __future__ import annotations

import gradio as gr

from backend.context import AppContext
from backend.errors import PermissionDenied
from components.admin.accounts import AccountsPanel, build_accounts_panel, fill
from components.admin.audit import AuditPanel, audit_frame, build_audit_panel
from components.admin.backups import build_backup_panel
from components.admin.charades import build_charades_panel
from components.admin.export import build_export_panel
from components.admin.vilpact_import import build_import_panel
from components.admin.webhooks import build_webhooks_panel
from components.common import TabHandle, caller
from components.events import Event, bind, wire
from components.opening import tab_frame
from components.studies.invitations import build_invitations_panel
from components.studies.workers import build_workers_panel


def build_admin_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("admin", visible=False) as tab:
        with gr.Accordion("Import ViLPAct", open=True):
            build_import_panel(ctx)
        with gr.Accordion("Charades annotations: extract sequences into the intent pool", open=False):
            build_charades_panel(ctx)
        with gr.Accordion("Export intent annotations", open=False):
            build_export_panel(ctx)
        with gr.Accordion("Accounts", open=False):
            accounts = build_accounts_panel(ctx)
        with gr.Accordion("Crowd workers: report, payment CSV, blocking", open=False):
            build_workers_panel(ctx)
        with gr.Accordion("Invitation links", open=False):
            build_invitations_panel(ctx)
        with gr.Accordion("Webhooks: tell other systems as work happens", open=False):
            build_webhooks_panel(ctx)
        with gr.Accordion("Backups", open=False):
            build_backup_panel(ctx)
        with gr.Accordion("Audit log (latest 200 writes)", open=False):
            audit = build_audit_panel(ctx)
    outputs = [accounts.users, accounts.count, audit.table]
    opened = bind(on_open, ctx, accounts, audit)
    wire(ctx, [Event("admin_ui_open", "admin", opened, tab.select, None, outputs, {"show_progress": "hidden"})])
    return TabHandle(tab=tab, on_load=(opened, outputs), filled_on_select=True)


def on_open(ctx: AppContext, accounts: AccountsPanel, audit: AuditPanel, request: gr.Request) -> dict:
    """The accounts, their counts and the audit log as they are now (page load and each visit of the tab)."""
    try:
        me = caller(ctx, request)
        return {**fill(ctx, accounts, me), audit.table: audit_frame(ctx, me)}
    except PermissionDenied:  # not an admin: the tab is hidden; leave it empty (one unchanged output: an
        return {accounts.count: gr.update()}  # empty dict would read as a single value and log a traceback)
