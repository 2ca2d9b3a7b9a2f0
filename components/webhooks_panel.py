"""The Admin tab's webhooks panel (issue 26 §7): register an endpoint (name, URL, events, secret), see the
endpoints and their last deliveries with status, send a test event, resend a delivery, remove an endpoint; and
the named endpoints webhook_add / webhook_list / webhook_remove / webhook_test / webhook_deliveries /
webhook_resend for scripts. Handlers only call backend/webhooks, which checks the admin role every time."""

from __future__ import annotations

from dataclasses import asdict

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.webhooks import EVENTS, registry
from backend.webhooks.sender import WebhookSender
from components.access import endpoint, listen
from components.common import EventOptions, caller, esc, ui_errors
from components.feedback import QUIET, Mistake, shown_in

PRIVATE: EventOptions = {"api_visibility": "private"}
HOOK_COLUMNS = ["name", "url", "events", "pending", "delivered", "failed", "created_by", "created_at"]
HELP = (
    "Other systems hear about the work as it happens. Each delivery is a JSON POST signed with the endpoint's "
    'secret (`X-CompStudio-Signature: sha256=HMAC-SHA256(secret, timestamp + "." + body)`, with '
    "`X-CompStudio-Timestamp` and the event id `X-CompStudio-Event-Id` to de-duplicate by); failures are retried "
    "with growing waits, across restarts. Only http(s) addresses, and no loopback or private ones unless the "
    "setting `webhooks_allow_private` is on. docs/crowd.md shows every event's payload."
)


def hooks_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    rows = [{**row, "events": ", ".join(row["events"])} for row in registry.list_webhooks(ctx.database, me)]
    return pd.DataFrame(rows, columns=HOOK_COLUMNS)


def deliveries_frame(ctx: AppContext, me: str | None) -> pd.DataFrame:
    return pd.DataFrame(registry.deliveries(ctx.database, me), columns=list(registry.DELIVERY_COLUMNS))


def _named(name: str) -> str:
    if not (name or "").strip():
        raise Mistake("Enter the webhook's name (the name column of the table).")
    return name.strip()


def build_webhooks_panel(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings
    gr.Markdown(HELP)
    with gr.Row():
        name = gr.Textbox(label="Name", elem_id="webhook-name", max_length=64)
        url = gr.Textbox(label="URL (http or https)", elem_id="webhook-url", max_length=2000)
        secret = gr.Textbox(label="Secret (empty: a random one)", type="password", elem_id="webhook-secret")
    events = gr.CheckboxGroup(list(EVENTS), value=list(EVENTS), label="Events", elem_id="webhook-events")
    with gr.Row():
        add = gr.Button("Add webhook", variant="primary", elem_id="webhook-add")
        refresh = gr.Button("Show webhooks and deliveries", elem_id="webhook-refresh")
        test = gr.Button("Send a test event", elem_id="webhook-test")
        remove = gr.Button("Remove webhook", variant="stop", elem_id="webhook-remove")
    shown_secret = gr.Textbox(
        label="The webhook's secret (shown once: copy it into the receiver)",
        buttons=["copy"],
        interactive=False,
        visible=False,
        elem_id="webhook-shown-secret",
    )
    hooks = gr.Dataframe(headers=HOOK_COLUMNS, interactive=False, label="Webhooks", elem_id="webhook-table")
    sent = gr.Dataframe(
        headers=list(registry.DELIVERY_COLUMNS),
        interactive=False,
        label="Last deliveries",
        elem_id="webhook-deliveries",
    )
    with gr.Row():
        delivery = gr.Number(label="Delivery id", precision=0, value=None, elem_id="webhook-delivery-id")
        resend = gr.Button("Resend", elem_id="webhook-resend")
    message = gr.Markdown(elem_id="webhook-message")

    def tables(me: str | None) -> dict:
        return {hooks: hooks_frame(ctx, me), sent: deliveries_frame(ctx, me)}

    @shown_in(message)
    def on_add(hook_name: str, hook_url: str, chosen: list[str], hook_secret: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        if not chosen:
            raise Mistake("Choose at least one event.")
        made = registry.add_webhook(db, settings, me, name=hook_name, url=hook_url, events=chosen, secret=hook_secret)
        return {
            **tables(me),
            shown_secret: gr.Textbox(value=made["secret"], visible=True),
            message: f"Added **{esc(made['name'])}** for {len(made['events'])} event(s).",
        }

    @shown_in(message)
    def on_refresh(request: gr.Request) -> dict:
        return {**tables(caller(ctx, request)), message: ""}

    @shown_in(message)
    def on_test(hook_name: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        queued = registry.queue_test(db, me, _named(hook_name))
        outcome = WebhookSender(settings, db).send(queued["delivery_id"])
        done = asdict(outcome) if outcome else {"status": "queued", "error": None}
        words = (
            "delivered"
            if done["status"] == "delivered"
            else f"not delivered ({esc(done['error'] or '')}); it will be retried"
        )
        return {**tables(me), message: f"Test event to **{esc(queued['webhook'])}**: {words}."}

    @shown_in(message)
    def on_remove(hook_name: str, request: gr.Request) -> dict:
        me = caller(ctx, request)
        done = registry.remove_webhook(db, me, _named(hook_name))
        return {
            **tables(me),
            message: f"Removed **{esc(done['removed'])}** ({done['deliveries_dropped']} deliveries dropped).",
        }

    @shown_in(message)
    def on_resend(delivery_id: float | None, request: gr.Request) -> dict:
        if delivery_id is None:
            raise Mistake("Enter the id of the delivery to resend (the id column of the deliveries).")
        me = caller(ctx, request)
        registry.resend(db, me, int(delivery_id))
        return {**tables(me), message: f"Delivery {int(delivery_id)} is queued again."}

    outputs = [hooks, sent, message]
    listen(
        ctx,
        add.click,
        on_add,
        [name, url, events, secret],
        [*outputs, shown_secret],
        api_name="admin_webhook_add",
        **QUIET,
        **PRIVATE,
    )
    listen(ctx, refresh.click, on_refresh, None, outputs, api_name="admin_webhook_refresh", **PRIVATE)
    listen(ctx, test.click, on_test, [name], outputs, api_name="admin_webhook_test", **QUIET, **PRIVATE)
    listen(ctx, remove.click, on_remove, [name], outputs, api_name="admin_webhook_remove", **QUIET, **PRIVATE)
    listen(ctx, resend.click, on_resend, [delivery], outputs, api_name="admin_webhook_resend", **QUIET, **PRIVATE)


def register_api(ctx: AppContext) -> None:
    """Named webhook endpoints for scripts (admins)."""
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def webhook_add(name: str, url: str, events: list[str], secret: str, request: gr.Request) -> dict:
        """Register an endpoint for these events (empty: all); secret "" makes one. Returns it, with the secret."""
        return registry.add_webhook(
            db, settings, caller(ctx, request), name=name, url=url, events=events, secret=secret
        )

    @ui_errors
    def webhook_list(request: gr.Request) -> list:
        """Every endpoint (without its secret) and its delivery counts."""
        return registry.list_webhooks(db, caller(ctx, request))

    @ui_errors
    def webhook_remove(name: str, request: gr.Request) -> dict:
        """Remove an endpoint and its queued deliveries."""
        return registry.remove_webhook(db, caller(ctx, request), name)

    @ui_errors
    def webhook_test(name: str, request: gr.Request) -> dict:
        """Send a webhook.test event to one endpoint now; returns the outcome."""
        queued = registry.queue_test(db, caller(ctx, request), name)
        outcome = WebhookSender(settings, db).send(queued["delivery_id"])
        return {**queued, **(asdict(outcome) if outcome else {"status": "queued"})}

    @ui_errors
    def webhook_deliveries(name: str | None, limit: int, request: gr.Request) -> list:
        """The last deliveries, newest first (of one endpoint when name is given)."""
        return registry.deliveries(db, caller(ctx, request), name or None, int(limit or 50))

    @ui_errors
    def webhook_resend(delivery_id: int, request: gr.Request) -> dict:
        """Queue one delivery again now."""
        return registry.resend(db, caller(ctx, request), int(delivery_id))

    for name, fn in {
        "webhook_add": webhook_add,
        "webhook_list": webhook_list,
        "webhook_remove": webhook_remove,
        "webhook_test": webhook_test,
        "webhook_deliveries": webhook_deliveries,
        "webhook_resend": webhook_resend,
    }.items():
        endpoint(ctx, fn, api_name=name)
