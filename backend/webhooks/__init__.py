"""Outgoing webhooks (issue 26 §7): other systems hear about annotations, completed items, finished reviews,
study workers, studies and model runs without polling.

* **Outbox.** :func:`emit` runs inside the ``write()`` of the change it reports and queues one
  ``webhook_deliveries`` row per endpoint subscribed to the event: the event exists exactly when the change
  was committed, and a crash can neither lose it nor report a change that was rolled back. Nothing is sent
  there: with no endpoint subscribed it is one indexed read, with some a few inserts.
* **Delivery.** A background thread (:class:`backend.webhooks.sender.WebhookSender`, started by ``app.py``)
  posts what is due, outside every request's transaction, and retries with exponential backoff. A delivery
  is marked done only after the receiver answered 2xx, so a restart or ``kill -9`` in between sends it again:
  at-least-once. Receivers de-duplicate by the event id (the same for every try and every endpoint).
* **Signature.** Each post carries ``X-CompStudio-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." +
  body)>`` with the ``X-CompStudio-Timestamp`` it covers (:func:`backend.webhooks.signing.sign`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import sqlite_utils

from backend.storage import utcnow

if TYPE_CHECKING:  # only the type: webhooks sits beside assignment, and neither needs the other at run time
    from backend.assignment import Completion

#: every event an endpoint may subscribe to, with what it means (docs/crowd.md shows a payload of each)
EVENTS: dict[str, str] = {
    "annotation.created": "a worker's answer was stored (intents, a planning check or a VQA answer)",
    "item.completed": "an item's round reached its N submissions",
    "review.finished": "a sequence's review decided it (accepted, or discarded after the last round)",
    "study.worker_finished": "a study worker finished their part (quota done, or the study closed)",
    "study.completed": "a study was closed",
    "run.finished": "a batch model run ended (finished or failed)",
}
TEST_EVENT = "webhook.test"  # sent by `compstudio webhooks test` and the Admin panel's Test button only


def envelope(event_id: str, event: str, created_at: str, data: dict[str, Any]) -> str:
    """The body posted: compact JSON, the same bytes on every try (the signature covers them).

    >>> envelope("evt_1", "study.completed", "2026-01-01T00:00:00+00:00", {"study_id": 3})
    '{"id":"evt_1","event":"study.completed","created_at":"2026-01-01T00:00:00+00:00","data":{"study_id":3}}'
    """
    payload = {"id": event_id, "event": event, "created_at": created_at, "data": data}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str)


def queue(db: sqlite_utils.Database, event: str, data: dict[str, Any], webhook_ids: list[int]) -> str:
    """Queue one event for these endpoints; returns its id. Inside ``write()``."""
    event_id, now = f"evt_{uuid.uuid4().hex}", utcnow()
    body = envelope(event_id, event, now, data)
    db.conn.executemany(
        """INSERT INTO webhook_deliveries (webhook_id, event_id, event, body, created_at, next_attempt_at)
           VALUES (?, ?, ?, ?, ?, ?)""",
        [(webhook_id, event_id, event, body, now, now) for webhook_id in webhook_ids],
    )
    return event_id


def emit(db: sqlite_utils.Database, event: str, data: dict[str, Any] | Callable[[], dict[str, Any]]) -> str | None:
    """Queue ``event`` for every endpoint subscribed to it, in the caller's transaction (inside ``write()``).
    ``data`` may be a function, called only when some endpoint listens. Returns the event id, or None when no
    endpoint listens (nothing written)."""
    if event not in EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    rows = db.conn.execute(
        "SELECT id FROM webhooks WHERE EXISTS (SELECT 1 FROM json_each(webhooks.events) WHERE value = ?)", (event,)
    ).fetchall()
    if not rows:
        return None
    return queue(db, event, data() if callable(data) else data, [row[0] for row in rows])


def annotation_created(
    db: sqlite_utils.Database, assignment_id: int, answer: dict[str, Any]
) -> Callable[[], dict[str, Any]]:
    """The data of ``annotation.created`` for one submitted assignment (worked out only when someone listens)."""

    def data() -> dict[str, Any]:
        row = db.conn.execute(
            """SELECT a.kind, a.item_id, a.round, a.annotator, a.finished_at,
                      EXISTS (SELECT 1 FROM gold_answers g WHERE g.assignment_id = a.id) AS gold,
                      (SELECT w.study_id FROM study_workers w WHERE w.username = a.annotator) AS study_id
               FROM assignments a WHERE a.id = ?""",
            (int(assignment_id),),
        ).fetchone()
        return {
            "kind": row["kind"],
            "item_id": row["item_id"],
            "round": row["round"],
            "annotator": row["annotator"],
            "study_id": row["study_id"],
            "gold": bool(row["gold"]),
            "submitted_at": row["finished_at"],
            "answer": answer,
        }

    return data


def item_completed(db: sqlite_utils.Database, completion: Completion) -> Callable[[], dict[str, Any]]:
    """The data of ``item.completed`` for a task whose round just reached its N submissions (``assignment.finish``
    returned ``completion``); worked out only when someone listens. A review task is never reported: a review
    decides by ``review.finished`` instead."""

    def data() -> dict[str, Any]:
        annotators = db.conn.execute(
            "SELECT annotator FROM assignments WHERE kind = ? AND item_id = ? AND round = ? AND status = 'submitted' "
            "ORDER BY finished_at",
            (completion.kind, completion.item_id, completion.review_round),
        ).fetchall()
        return {
            "kind": completion.kind,
            "item_id": completion.item_id,
            "round": completion.review_round,
            "needed": completion.needed,
            "annotators": [r[0] for r in annotators],
        }

    return data
