"""The Admin tab's accounts panel: the accounts with their counts; add an account, set its role, disable or
enable it. Handlers only call ``backend.accounts.admin``, which checks the admin role every time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import admin
from backend.accounts.auth import ROLES
from backend.context import AppContext
from components.admin.shown import shown
from components.common import caller, esc
from components.events import Event, wire
from components.feedback import QUIET, Mistake

USER_COLUMNS = ["username", "role", "disabled", "source", "created_at"]


@dataclass(frozen=True)
class AccountsPanel:
    count: gr.Markdown
    users: gr.Dataframe
    name: gr.Textbox
    role: gr.Dropdown
    password: gr.Textbox
    add: gr.Button
    set_role: gr.Button
    disable: gr.Button
    enable: gr.Button
    message: gr.Markdown


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


def fill(ctx: AppContext, p: AccountsPanel, me: str | None) -> dict[Any, Any]:
    """The accounts table and its counts as they are now."""
    frame = users_frame(ctx, me)
    return {p.users: frame, p.count: accounts_count(frame)}


def layout() -> AccountsPanel:
    count = gr.Markdown(elem_id="users-count")
    users = gr.Dataframe(headers=USER_COLUMNS, interactive=False, label="Accounts", elem_id="users-table")
    with gr.Row():
        name = gr.Textbox(label="User name", elem_id="account-name")
        role = gr.Dropdown(list(ROLES), value="annotator", label="Role", elem_id="account-role")
        password = gr.Textbox(label="Password (8+ characters)", type="password", elem_id="account-password")
    with gr.Row():
        add = gr.Button("Add account")
        set_role = gr.Button("Set role")
        disable = gr.Button("Disable")
        enable = gr.Button("Enable")
    message = gr.Markdown(elem_id="account-message")
    return AccountsPanel(count, users, name, role, password, add, set_role, disable, enable, message)


def named(name: str) -> str:
    if not name.strip():
        raise Mistake("Enter the user name of the account.")
    return name.strip()


def on_add(ctx: AppContext, p: AccountsPanel, name: str, role: str, password: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    added = admin.add_account(ctx.database, me, named(name), role, password)
    return {
        **fill(ctx, p, me),
        p.password: "",
        p.message: f"Added **{esc(added['username'])}** ({esc(added['role'])}).",
    }


def _changed(ctx: AppContext, p: AccountsPanel, me: str | None, changed: dict, done: str) -> dict:
    return {**fill(ctx, p, me), p.message: done.format(name=esc(changed["username"]), role=changed["role"])}


def on_set_role(ctx: AppContext, p: AccountsPanel, name: str, role: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    changed = admin.change_role(ctx.database, me, named(name), role)
    return _changed(ctx, p, me, changed, "**{name}** is now {role}.")


def on_disable(ctx: AppContext, p: AccountsPanel, name: str, role: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    changed = admin.set_account_disabled(ctx.database, me, named(name), True)
    return _changed(ctx, p, me, changed, "Disabled **{name}**.")


def on_enable(ctx: AppContext, p: AccountsPanel, name: str, role: str, request: gr.Request) -> dict:
    me = caller(ctx, request)
    changed = admin.set_account_disabled(ctx.database, me, named(name), False)
    return _changed(ctx, p, me, changed, "Enabled **{name}**.")


def events(ctx: AppContext, p: AccountsPanel) -> list[Event]:
    typed, shown_after = [p.name, p.role], [p.users, p.count, p.message]
    return [
        Event(
            "admin_ui_user_add",
            "admin",
            shown(on_add, ctx, p),
            p.add.click,
            [p.name, p.role, p.password],
            [p.users, p.count, p.password, p.message],
            QUIET,
        ),
        Event("admin_ui_user_role", "admin", shown(on_set_role, ctx, p), p.set_role.click, typed, shown_after, QUIET),
        Event("admin_ui_user_disable", "admin", shown(on_disable, ctx, p), p.disable.click, typed, shown_after, QUIET),
        Event("admin_ui_user_enable", "admin", shown(on_enable, ctx, p), p.enable.click, typed, shown_after, QUIET),
    ]


def build_accounts_panel(ctx: AppContext) -> AccountsPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
