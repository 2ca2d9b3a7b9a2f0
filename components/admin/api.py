"""The Admin tab's named endpoints for scripts (admins): admin_import_vilpact, admin_export_intents, admin_users,
admin_user_add, admin_user_set_role, admin_user_disable, and the webhooks' webhook_add, webhook_list,
webhook_remove, webhook_test, webhook_deliveries, webhook_resend. Every backend function checks the admin role."""

from __future__ import annotations

from dataclasses import asdict

import gradio as gr

from backend.accounts import admin
from backend.context import AppContext
from backend.intents.export import export_for_download
from backend.vilpact.importer import import_release
from backend.webhooks import registry
from backend.webhooks.sender import WebhookSender
from components.common import caller
from components.events import Event, bind, wire


def admin_import_vilpact(ctx: AppContext, folder: str, video_folder: str, request: gr.Request) -> dict:
    """Import ViLPAct's released data/ folder (on the server); video_folder may be empty."""
    return import_release(ctx.database, ctx.settings, caller(ctx, request), folder, video_folder or None)


def admin_export_intents(ctx: AppContext, fmt: str, request: gr.Request) -> dict:
    """Export intent annotations (jsonl, csv or parquet); returns the row count and the file name."""
    return export_for_download(ctx.database, ctx.settings, caller(ctx, request), fmt)


def admin_users(ctx: AppContext, request: gr.Request) -> list:
    """All accounts."""
    return admin.list_accounts(ctx.database, caller(ctx, request))


def admin_user_add(ctx: AppContext, name: str, role: str, password: str, request: gr.Request) -> dict:
    """Create an account."""
    return admin.add_account(ctx.database, caller(ctx, request), name, role, password)


def admin_user_set_role(ctx: AppContext, name: str, role: str, request: gr.Request) -> dict:
    """Change an account's role."""
    return admin.change_role(ctx.database, caller(ctx, request), name, role)


def admin_user_disable(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Disable an account (it can no longer sign in or call anything)."""
    return admin.set_account_disabled(ctx.database, caller(ctx, request), name, True)


def webhook_add(ctx: AppContext, name: str, url: str, events: list[str], secret: str, request: gr.Request) -> dict:
    """Register an endpoint for these events (empty: all); secret "" makes one. Returns it, with the secret."""
    return registry.add_webhook(
        ctx.database, ctx.settings, caller(ctx, request), name=name, url=url, events=events, secret=secret
    )


def webhook_list(ctx: AppContext, request: gr.Request) -> list:
    """Every endpoint (without its secret) and its delivery counts."""
    return registry.list_webhooks(ctx.database, caller(ctx, request))


def webhook_remove(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Remove an endpoint and its queued deliveries."""
    return registry.remove_webhook(ctx.database, caller(ctx, request), name)


def webhook_test(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Send a webhook.test event to one endpoint now; returns the outcome."""
    queued = registry.queue_test(ctx.database, caller(ctx, request), name)
    outcome = WebhookSender(ctx.settings, ctx.database).send(queued["delivery_id"])
    return {**queued, **(asdict(outcome) if outcome else {"status": "queued"})}


def webhook_deliveries(ctx: AppContext, name: str | None, limit: int, request: gr.Request) -> list:
    """The last deliveries, newest first (of one endpoint when name is given)."""
    return registry.deliveries(ctx.database, caller(ctx, request), name or None, int(limit or 50))


def webhook_resend(ctx: AppContext, delivery_id: int, request: gr.Request) -> dict:
    """Queue one delivery again now."""
    return registry.resend(ctx.database, caller(ctx, request), int(delivery_id))


ENDPOINTS = (
    admin_import_vilpact,
    admin_export_intents,
    admin_users,
    admin_user_add,
    admin_user_set_role,
    admin_user_disable,
    webhook_add,
    webhook_list,
    webhook_remove,
    webhook_test,
    webhook_deliveries,
    webhook_resend,
)


def endpoints(ctx: AppContext) -> list[Event]:
    """Each endpoint is named as its function (the api_name scripts call), admins only."""
    return [Event(fn.__name__, "admin", bind(fn, ctx)) for fn in ENDPOINTS]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
