"""What admins do with webhooks (issue 26 §7): register an endpoint (URL, events, secret), list, remove, see the
last deliveries with their status, resend one, queue a test event. Every function checks the admin role unless
called from the operator's shell (``operator=True``: ``compstudio webhooks ...``)."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from backend.accounts.admin import acting_admin
from backend.errors import NotFound, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.webhooks import EVENTS, TEST_EVENT, queue
from backend.webhooks.urls import check_url

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DELIVERY_COLUMNS = (
    "id",
    "webhook",
    "event",
    "event_id",
    "status",
    "attempts",
    "last_status",
    "last_error",
    "created_at",
    "last_attempt_at",
    "next_attempt_at",
    "delivered_at",
)


def _events(events: list[str] | str | None) -> list[str]:
    chosen = [e.strip() for e in (events.split(",") if isinstance(events, str) else events or []) if e.strip()]
    if not chosen:
        return list(EVENTS)  # none named: every event
    unknown = sorted(set(chosen) - set(EVENTS))
    if unknown:
        raise ValidationError(f"unknown webhook event(s) {', '.join(unknown)}; choose from {', '.join(EVENTS)}")
    return [e for e in EVENTS if e in chosen]


def add_webhook(
    database: Database,
    settings: Settings,
    username: str | None,
    *,
    name: str,
    url: str,
    events: list[str] | str | None = None,
    secret: str = "",
    operator: bool = False,
) -> dict[str, Any]:
    """Register an endpoint. ``secret`` empty: a new one is made. The secret is returned here only."""
    admin = acting_admin(database, username, operator)
    name = (name or "").strip()
    if not _NAME.match(name):
        raise ValidationError("name the webhook with 1-64 letters, digits, '.', '-' or '_' (e.g. 'lab-pipeline')")
    url = check_url(url, settings.webhooks_allow_private)
    chosen = _events(events)
    secret = (secret or "").strip() or secrets.token_urlsafe(32)
    if len(secret) < 16:
        raise ValidationError("a webhook secret needs at least 16 characters (leave it empty to get a random one)")
    with database.write() as db:
        if db.conn.execute("SELECT 1 FROM webhooks WHERE name = ?", (name,)).fetchone():
            raise ValidationError(f"there is already a webhook named {name!r}; remove it first or choose another name")
        webhook_id = db.conn.execute(
            "INSERT INTO webhooks (name, url, events, secret, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?) "
            "RETURNING id",
            (name, url, json.dumps(chosen), secret, admin, utcnow()),
        ).fetchone()[0]
        audit(db, admin, "webhook.add", name, {"url": url, "events": chosen})
    return {"id": webhook_id, "name": name, "url": url, "events": chosen, "secret": secret}


def list_webhooks(database: Database, username: str | None, operator: bool = False) -> list[dict[str, Any]]:
    """Every endpoint (never its secret) with its delivery counts."""
    acting_admin(database, username, operator)
    rows = database.query(
        """SELECT w.id, w.name, w.url, w.events, w.created_by, w.created_at,
                  coalesce(sum(d.status = 'pending'), 0) AS pending, coalesce(sum(d.status = 'delivered'), 0) AS delivered,
                  coalesce(sum(d.status = 'failed'), 0) AS failed
           FROM webhooks w LEFT JOIN webhook_deliveries d ON d.webhook_id = w.id GROUP BY w.id ORDER BY w.name"""
    )
    for row in rows:
        row["events"] = json.loads(row["events"])
    return rows


def _by_name(database: Database, name: str) -> dict[str, Any]:
    row = database.query_one("SELECT * FROM webhooks WHERE name = ?", ((name or "").strip(),))
    if row is None:
        raise NotFound(f"there is no webhook named {name!r}; `compstudio webhooks list` shows them")
    return row


def remove_webhook(database: Database, username: str | None, name: str, operator: bool = False) -> dict[str, Any]:
    """Remove an endpoint and its queued deliveries (nothing more is sent to it)."""
    admin = acting_admin(database, username, operator)
    webhook = _by_name(database, name)
    with database.write() as db:
        dropped = db.conn.execute("DELETE FROM webhook_deliveries WHERE webhook_id = ?", (webhook["id"],)).rowcount
        db.conn.execute("DELETE FROM webhooks WHERE id = ?", (webhook["id"],))
        audit(db, admin, "webhook.remove", webhook["name"], {"deliveries_dropped": dropped})
    return {"removed": webhook["name"], "deliveries_dropped": dropped}


def deliveries(
    database: Database, username: str | None, name: str | None = None, limit: int = 50, operator: bool = False
) -> list[dict[str, Any]]:
    """The last deliveries, newest first (of one endpoint when ``name`` is given)."""
    acting_admin(database, username, operator)
    where, params = ("WHERE w.name = ?", [name.strip()]) if name and name.strip() else ("", [])
    return database.query(
        f"""SELECT d.id, w.name AS webhook, d.event, d.event_id, d.status, d.attempts, d.last_status, d.last_error,
                   d.created_at, d.last_attempt_at, d.next_attempt_at, d.delivered_at
            FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id {where}
            ORDER BY d.id DESC LIMIT ?""",
        (*params, max(1, min(int(limit), 500))),
    )


def resend(database: Database, username: str | None, delivery_id: int, operator: bool = False) -> dict[str, Any]:
    """Queue a delivery again now, with a fresh retry budget (same event id and body: receivers de-duplicate)."""
    admin = acting_admin(database, username, operator)
    with database.write() as db:
        changed = db.conn.execute(
            """UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, delivered_at = NULL
               WHERE id = ?""",
            (utcnow(), int(delivery_id)),
        ).rowcount
        if not changed:
            raise NotFound(f"there is no webhook delivery {delivery_id}")
        audit(db, admin, "webhook.resend", str(delivery_id))
    return {"delivery_id": int(delivery_id), "status": "pending"}


def queue_test(database: Database, username: str | None, name: str, operator: bool = False) -> dict[str, Any]:
    """Queue a ``webhook.test`` event for one endpoint; returns the delivery to watch (or send at once)."""
    admin = acting_admin(database, username, operator)
    webhook = _by_name(database, name)
    with database.write() as db:
        event_id = queue(db, TEST_EVENT, {"webhook": webhook["name"], "by": admin}, [webhook["id"]])
        delivery_id = db.conn.execute("SELECT id FROM webhook_deliveries WHERE event_id = ?", (event_id,)).fetchone()[0]
    return {"delivery_id": delivery_id, "event_id": event_id, "webhook": webhook["name"]}
