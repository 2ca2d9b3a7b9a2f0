"""Outgoing webhooks (issue 26 §7): the endpoints admins register and the delivery queue.

A change that other systems hear about writes one ``webhook_deliveries`` row per subscribed endpoint in the
same transaction as the change (an outbox: the event exists exactly when the change does); the background
sender (backend/webhooks/sender.py) posts them later, outside every request's transaction.
"""

from backend.storage.migration import Migration

MIGRATIONS = [
    Migration(
        "webhooks_0001_endpoints_deliveries",
        (
            # events: JSON list of event names; secret: signs every delivery (HMAC-SHA256), kept to sign
            """CREATE TABLE webhooks (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                url TEXT NOT NULL,
                events TEXT NOT NULL,
                secret TEXT NOT NULL,
                created_by TEXT NOT NULL,
                created_at TEXT NOT NULL
            )""",
            # One event for one endpoint. event_id is the same for every endpoint that hears the event and across
            # retries (the receiver de-duplicates by it); body: the exact JSON posted (what the signature covers).
            """CREATE TABLE webhook_deliveries (
                id INTEGER PRIMARY KEY,
                webhook_id INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
                event_id TEXT NOT NULL,
                event TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at TEXT NOT NULL,
                status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at TEXT NOT NULL,
                last_attempt_at TEXT,
                last_status INTEGER,
                last_error TEXT,
                delivered_at TEXT,
                UNIQUE (webhook_id, event_id)
            )""",
            "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)",
            "CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (webhook_id, id)",
        ),
    ),
]
