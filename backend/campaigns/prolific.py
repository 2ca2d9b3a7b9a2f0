"""Prolific's submission events (issue 26 §6): ``POST /webhooks/prolific`` takes Prolific's
``submission.status.change`` webhooks, checked as Prolific documents it, and applies them to the study worker.

Checked as https://docs.prolific.com/api-reference/webhooks/verifying says: a request carries
``X-Prolific-Request-Signature`` and ``X-Prolific-Request-Timestamp`` (UNIX seconds); the signature is the base64
of HMAC-SHA256, under the workspace's secret (``prolific_webhook_secret``), of the timestamp followed by the body.
We sign the raw body as received, and also accept the signature over ``json.dumps`` of the parsed body, which is
what Prolific's own Python example computes (docs/decisions.md, "Prolific's webhooks").

* a request without a valid signature is **forged** and refused (401); one whose timestamp is further than
  ``prolific_webhook_tolerance_seconds`` from our clock is a **replay** (or badly delayed) and refused (401).
  Every refusal is logged and written to the audit log (``prolific.refused``);
* the same event twice (Prolific delivers at least once and keeps ``X-Event-ID`` across retries) changes nothing:
  each handled event is kept in ``platform_events`` and a second one is acknowledged as a duplicate;
* the worker is found by the submission id (``resource_id``, which Prolific passes to the study link as
  ``SESSION_ID``), else by the participant id when that participant is in one study only;
* ``RETURNED``, ``TIMED-OUT`` and ``REJECTED`` end an active worker at once (status returned: account closed,
  leases freed, so the pool hands the item to someone else now, not when the lease would have run out);
  ``REJECTED`` also moves their unreviewed answers aside, as "return to pool" does (exact N kept). Any status is
  recorded as the worker's ``platform_status`` and shown in the report.

Mechanical Turk sends nothing comparable to a web app: a worker who returns or abandons a HIT is handled by the
lease running out and, for answers to take back, by blocking and "return to pool", as before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

import sqlite_utils

from backend.campaigns import quality
from backend.campaigns.workers import ACTIVE, StudyWorker, row_by_user, set_status
from backend.errors import WebhookRefused
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

_log = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
EVENT_TYPE = "submission.status.change"
ENDING = ("RETURNED", "TIMED-OUT", "REJECTED")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's signature of a request: base64(HMAC-SHA256(secret, timestamp + body)).

    Checked by hand with ``printf '1700000000{"a": 1}' | openssl dgst -sha256 -hmac s3cret -binary | base64``:

    >>> signature("s3cret", "1700000000", b'{"a": 1}')
    '1KA5kXz9h5/Tao0Q/+xGRZC8JTeq/LXjx/ZKntI1KZM='
    """
    mac = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(mac).decode()


def _header(headers: Mapping[str, str], name: str) -> str:
    lowered = {k.lower(): v for k, v in headers.items()}
    return str(lowered.get(name.lower(), "")).strip()


def verify(settings: Settings, headers: Mapping[str, str], body: bytes, now: float | None = None) -> None:
    """Raise :class:`WebhookRefused` unless the request is signed by Prolific and fresh."""
    secret = settings.prolific_webhook_secret
    if not secret:
        raise WebhookRefused("Prolific webhooks are not set up here: set prolific_webhook_secret", status=503)
    given, timestamp = _header(headers, SIGNATURE_HEADER), _header(headers, TIMESTAMP_HEADER)
    if not given or not timestamp:
        raise WebhookRefused(f"unsigned: {SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required")
    try:
        moment = float(timestamp)
    except ValueError as exc:
        raise WebhookRefused(f"{TIMESTAMP_HEADER} is not a UNIX time") from exc
    candidates = [body]
    try:  # what Prolific's example signs: json.dumps of the parsed body
        candidates.append(json.dumps(json.loads(body)).encode())
    except (ValueError, UnicodeDecodeError):
        pass
    if not any(hmac.compare_digest(signature(secret, timestamp, c).encode(), given.encode()) for c in candidates):
        raise WebhookRefused("forged: the signature does not match this body and timestamp")
    skew = abs((time.time() if now is None else now) - moment)
    if skew > settings.prolific_webhook_tolerance_seconds:
        raise WebhookRefused(f"replayed or delayed: signed {skew:.0f} s away from this server's clock")


def _find_worker(db: sqlite_utils.Database, submission_id: str, participant_id: str) -> StudyWorker | None:
    rows = db.conn.execute(
        """SELECT w.username, json_extract(w.params, '$.SESSION_ID') = :submission AS by_submission
           FROM study_workers w JOIN studies s ON s.id = w.study_id
           WHERE s.platform = 'prolific'
             AND (json_extract(w.params, '$.SESSION_ID') = :submission OR w.platform_worker_id = :participant)
           ORDER BY by_submission DESC, w.id DESC""",
        {"submission": submission_id, "participant": participant_id.lower()},
    ).fetchall()
    if rows and (rows[0]["by_submission"] or len(rows) == 1):
        return row_by_user(db, rows[0]["username"])
    return None


def _apply(db: sqlite_utils.Database, worker: StudyWorker, status: str) -> str:
    db.conn.execute(
        "UPDATE study_workers SET platform_status = ?, platform_status_at = ? WHERE id = ?",
        (status, utcnow(), worker.id),
    )
    outcome = f"recorded {status}"
    if status in ENDING and worker.status in ACTIVE:
        set_status(db, worker, "returned", f"Prolific: {status}")  # leases freed, account closed, now
        outcome = f"returned ({status})"
    if status == "REJECTED":
        moved = quality.move_answers_aside(db, worker.username, "prolific", "submission rejected on Prolific")
        outcome += f"; {len(moved['returned'])} answer(s) moved aside"
    return outcome


def handle(database: Database, settings: Settings, headers: Mapping[str, str], body: bytes, address: str) -> dict:
    """Check and apply one webhook request; returns what was done. Raises :class:`WebhookRefused` (refusals are
    logged and audited here)."""
    try:
        verify(settings, headers, body)
        event = json.loads(body)
        if not isinstance(event, dict):
            raise WebhookRefused("malformed: the body is not a JSON object", status=400)
    except (ValueError, UnicodeDecodeError):
        _refused(database, "malformed: the body is not JSON", address, headers)
        raise WebhookRefused("malformed: the body is not JSON", status=400) from None
    except WebhookRefused as exc:
        _refused(database, str(exc), address, headers)
        raise
    event_type = str(event.get("event_type") or "")
    submission, participant = str(event.get("resource_id") or ""), str(event.get("participant_id") or "")
    status = str(event.get("status") or "").strip().upper()
    key = _header(headers, EVENT_ID_HEADER) or f"{event_type}:{submission}:{status}"
    with database.write() as db:
        if db.conn.execute("SELECT 1 FROM platform_events WHERE event_key = ?", (key,)).fetchone():
            return {"event": key, "duplicate": True, "outcome": "already handled"}
        worker = _find_worker(db, submission, participant) if event_type == EVENT_TYPE else None
        if event_type != EVENT_TYPE:
            outcome = f"ignored: event type {event_type[:60]!r}"
        elif worker is None:
            outcome = "ignored: no study worker with this submission"
        else:
            outcome = _apply(db, worker, status)
        db.conn.execute(
            """INSERT INTO platform_events (event_key, platform, event_type, resource_id, status, outcome, received_at)
               VALUES (?, 'prolific', ?, ?, ?, ?, ?)""",
            (key[:200], event_type[:100], submission[:100], status[:40], outcome, utcnow()),
        )
        audit(
            db,
            worker.username if worker else "prolific",
            "prolific.event",
            submission[:100],
            {"event_id": key[:200], "status": status[:40], "outcome": outcome},
        )
    return {"event": key, "duplicate": False, "outcome": outcome, "worker": worker.username if worker else None}


def _refused(database: Database, reason: str, address: str, headers: Mapping[str, str]) -> None:
    _log.warning("Prolific webhook refused from %s: %s", address, reason)
    detail: dict[str, Any] = {"reason": reason, "address": address, "event_id": _header(headers, EVENT_ID_HEADER)[:200]}
    with database.write() as db:
        audit(db, "prolific", "prolific.refused", address[:100], detail)
