"""The Admin tab's webhooks panel (issue 26 §7): register an endpoint (name, URL, events, secret), see the
endpoints and their last deliveries with status, send a test event, resend a delivery, remove an endpoint (the
named endpoints for scripts, webhook_add ... webhook_resend, are in components/admin/api.py). Handlers only call
backend/webhooks, which checks the admin role every time."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.webhooks import EVENTS, registry
from backend.webhooks.sender import WebhookSender
from components.admin.shown import shown
from components.common import caller, esc
from components.events import Event, wire
from components.feedback import QUIET, Mistake
from components.readable import ZONE_LAST_JS, local_time

#: the tables' columns (the registry's keys) with the headers a person reads (issue 44 §11: headers in words)
HOOK_HEADERS = {"name": "Name", "url": "Address", "events": "Events", "pending": "Waiting", "delivered": "Delivered",
                "failed": "Failed", "created_by": "Added by", "created_at": "Added"}  # fmt: skip
DELIVERY_HEADERS = {"id": "Delivery id", "webhook": "Webhook", "event": "Event", "event_id": "Event id",
                    "status": "Status", "attempts": "Tries", "last_status": "Last HTTP status",
                    "last_error": "Last error", "created_at": "Queued", "last_attempt_at": "Last try",
                    "next_attempt_at": "Next try", "delivered_at": "Delivered"}  # fmt: skip
TIMES = ("created_at", "last_attempt_at", "next_attempt_at", "delivered_at")
HELP = (
    "Other systems hear about the work as it happens. Each delivery is a JSON POST signed with the endpoint's "
    'secret (`X-CompStudio-Signature: sha256=HMAC-SHA256(secret, timestamp + "." + body)`, with '
    "`X-CompStudio-Timestamp` and the event id `X-CompStudio-Event-Id` to de-duplicate by); failures are retried "
    "with growing waits, across restarts. Only http(s) addresses, and no loopback or private ones unless the "
    "setting `webhooks_allow_private` is on. docs/crowd.md shows every event's payload."
)


def readable(rows: list[dict[str, Any]], headers: dict[str, str], zone: str | None) -> pd.DataFrame:
    """``rows`` as the table a person reads: headers in words, times in their own time zone.

    >>> readable([{"name": "lab", "created_at": "2026-12-04T20:35:01+00:00"}], {"name": "Name", "created_at": "Added"},
    ...          "Europe/Paris").to_dict("records")
    [{'Name': 'lab', 'Added': '2026-12-04 21:35 CET'}]
    """
    shown = [{k: local_time(v, zone) if k in TIMES else v for k, v in row.items()} for row in rows]
    return pd.DataFrame(shown, columns=list(headers)).rename(columns=headers)


def hooks_frame(ctx: AppContext, me: str | None, zone: str | None = None) -> pd.DataFrame:
    rows = [{**row, "events": ", ".join(row["events"])} for row in registry.list_webhooks(ctx.database, me)]
    return readable(rows, HOOK_HEADERS, zone)


def deliveries_frame(ctx: AppContext, me: str | None, zone: str | None = None) -> pd.DataFrame:
    return readable(registry.deliveries(ctx.database, me), DELIVERY_HEADERS, zone)


def _named(name: str) -> str:
    if not (name or "").strip():
        raise Mistake("Enter the webhook's name (the name column of the table).")
    return name.strip()


@dataclass(frozen=True)
class WebhooksPanel:
    name: gr.Textbox
    url: gr.Textbox
    secret: gr.Textbox
    events: gr.CheckboxGroup
    add: gr.Button
    refresh: gr.Button
    test: gr.Button
    remove: gr.Button
    shown_secret: gr.Textbox  # a new webhook's secret, shown once
    hooks: gr.Dataframe
    sent: gr.Dataframe  # the last deliveries
    delivery: gr.Number
    resend: gr.Button
    message: gr.Markdown
    zone: gr.Textbox  # the browser's time zone, set by each event's js (ZONE_LAST_JS)

    @property
    def outputs(self) -> list[Any]:
        return [self.hooks, self.sent, self.message]


def layout() -> WebhooksPanel:
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
    hooks = gr.Dataframe(
        headers=list(HOOK_HEADERS.values()), interactive=False, label="Webhooks", elem_id="webhook-table"
    )
    sent = gr.Dataframe(
        headers=list(DELIVERY_HEADERS.values()),
        interactive=False,
        label="Last deliveries",
        elem_id="webhook-deliveries",
    )
    with gr.Row():
        delivery = gr.Number(label="Delivery id", precision=0, value=None, elem_id="webhook-delivery-id")
        resend = gr.Button("Resend", elem_id="webhook-resend")
    message = gr.Markdown(elem_id="webhook-message")
    zone = gr.Textbox(visible=False)
    return WebhooksPanel(
        name, url, secret, events, add, refresh, test, remove, shown_secret, hooks, sent, delivery, resend, message,
        zone,
    )  # fmt: skip


def tables(ctx: AppContext, p: WebhooksPanel, me: str | None, zone: str | None) -> dict[Any, Any]:
    return {p.hooks: hooks_frame(ctx, me, zone), p.sent: deliveries_frame(ctx, me, zone)}


def on_add(
    ctx: AppContext,
    p: WebhooksPanel,
    hook_name: str,
    hook_url: str,
    chosen: list[str],
    hook_secret: str,
    zone: str | None,
    request: gr.Request,
) -> dict:
    me = caller(ctx, request)
    if not chosen:
        raise Mistake("Choose at least one event.")
    made = registry.add_webhook(
        ctx.database, ctx.settings, me, name=hook_name, url=hook_url, events=chosen, secret=hook_secret
    )
    return {
        **tables(ctx, p, me, zone),
        p.shown_secret: gr.Textbox(value=made["secret"], visible=True),
        p.message: f"Added **{esc(made['name'])}** for {len(made['events'])} event(s).",
    }


def on_refresh(ctx: AppContext, p: WebhooksPanel, zone: str | None, request: gr.Request) -> dict:
    return {**tables(ctx, p, caller(ctx, request), zone), p.message: ""}


def on_test(ctx: AppContext, p: WebhooksPanel, hook_name: str, zone: str | None, request: gr.Request) -> dict:
    me = caller(ctx, request)
    queued = registry.queue_test(ctx.database, me, _named(hook_name))
    outcome = WebhookSender(ctx.settings, ctx.database).send(queued["delivery_id"])
    done = asdict(outcome) if outcome else {"status": "queued", "error": None}
    words = (
        "delivered"
        if done["status"] == "delivered"
        else f"not delivered ({esc(done['error'] or '')}); it will be retried"
    )
    return {**tables(ctx, p, me, zone), p.message: f"Test event to **{esc(queued['webhook'])}**: {words}."}


def on_remove(ctx: AppContext, p: WebhooksPanel, hook_name: str, zone: str | None, request: gr.Request) -> dict:
    me = caller(ctx, request)
    done = registry.remove_webhook(ctx.database, me, _named(hook_name))
    return {
        **tables(ctx, p, me, zone),
        p.message: f"Removed **{esc(done['removed'])}** ({done['deliveries_dropped']} deliveries dropped).",
    }


def on_resend(
    ctx: AppContext, p: WebhooksPanel, delivery_id: float | None, zone: str | None, request: gr.Request
) -> dict:
    if delivery_id is None:
        raise Mistake("Enter the id of the delivery to resend (the id column of the deliveries).")
    me = caller(ctx, request)
    registry.resend(ctx.database, me, int(delivery_id))
    return {**tables(ctx, p, me, zone), p.message: f"Delivery {int(delivery_id)} is queued again."}


def events(ctx: AppContext, p: WebhooksPanel) -> list[Event]:
    """Every event shows the tables in the person's own time zone: its last input is the browser's (ZONE_LAST_JS)."""
    typed = [p.name, p.url, p.events, p.secret, p.zone]
    quiet = {**QUIET, "js": ZONE_LAST_JS}
    return [
        Event("admin_webhook_add", "admin", shown(on_add, ctx, p), p.add.click, typed, [*p.outputs, p.shown_secret],
              quiet),
        Event("admin_webhook_refresh", "admin", shown(on_refresh, ctx, p), p.refresh.click, [p.zone], p.outputs,
              {"js": ZONE_LAST_JS}),
        Event("admin_webhook_test", "admin", shown(on_test, ctx, p), p.test.click, [p.name, p.zone], p.outputs, quiet),
        Event("admin_webhook_remove", "admin", shown(on_remove, ctx, p), p.remove.click, [p.name, p.zone], p.outputs,
              quiet),
        Event("admin_webhook_resend", "admin", shown(on_resend, ctx, p), p.resend.click, [p.delivery, p.zone],
              p.outputs, quiet),
    ]  # fmt: skip


def build_webhooks_panel(ctx: AppContext) -> WebhooksPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
