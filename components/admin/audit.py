"""The Admin tab's audit log: the latest 200 writes (``backend.accounts.admin.audit_log``, admins only)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from backend.accounts import admin
from backend.context import AppContext
from components.common import caller
from components.events import Event, bind, wire


@dataclass(frozen=True)
class AuditPanel:
    refresh: gr.Button
    table: gr.Dataframe


def audit_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    rows = admin.audit_log(ctx.database, me, limit=200)
    frame = pd.DataFrame(rows, columns=["at", "actor", "action", "target", "detail"])
    frame["detail"] = frame["detail"].map(lambda d: json.dumps(json.loads(d))[:200] if d else "")
    return frame


def layout() -> AuditPanel:
    refresh = gr.Button("Refresh")
    table = gr.Dataframe(interactive=False, label="Audit log", elem_id="audit-table")
    return AuditPanel(refresh, table)


def on_audit(ctx: AppContext, request: gr.Request) -> pd.DataFrame:
    return audit_frame(ctx, caller(ctx, request))


def events(ctx: AppContext, p: AuditPanel) -> list[Event]:
    return [Event("admin_ui_audit", "admin", bind(on_audit, ctx), p.refresh.click, None, p.table)]


def build_audit_panel(ctx: AppContext) -> AuditPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
