"""The background sender of webhook deliveries (issue 26 §7).

One daemon thread per app process wakes every ``poll_s``, takes the deliveries that are due, posts each
(``webhook_timeout_seconds`` for connecting and answering, no redirects), and records the outcome in its own
short ``write()``:

* 2xx: delivered;
* anything else (an error status, a timeout, a refused connection, a URL that now resolves to a non-public
  address): another try after ``webhook_retry_base_seconds * 2**(tries - 1)``, at most
  ``webhook_retry_max_seconds``, until ``webhook_max_attempts`` tries: then failed (an admin may resend).

A delivery is marked only after its post returned, so one in flight when the process dies stays due and is
posted again after the restart (at-least-once). The post itself never runs inside a transaction.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from backend.errors import ValidationError
from backend.settings import Settings
from backend.storage import Database, utcnow
from backend.webhooks.signing import headers
from backend.webhooks.urls import check_url

_log = logging.getLogger(__name__)


def backoff_seconds(tries: int, base: float, cap: float) -> float:
    """The wait after the ``tries``-th failed try.

    >>> [backoff_seconds(n, 10, 60) for n in (1, 2, 3, 4, 5)]
    [10, 20, 40, 60, 60]
    """
    return min(base * 2 ** (max(tries, 1) - 1), cap)


@dataclass(frozen=True)
class Outcome:
    delivery_id: int
    status: str  # delivered | pending (a retry is due later) | failed
    http_status: int | None
    error: str | None


class WebhookSender:
    """Posts due deliveries on a daemon thread (:meth:`start`); :meth:`send_due` and :meth:`send` work without it."""

    def __init__(self, settings: Settings, database: Database, poll_s: float = 0.5):
        self.settings = settings
        self.database = database
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- one delivery ------------------------------------------------------------------------------
    def _post(self, row: dict[str, Any]) -> tuple[int | None, str | None]:
        try:
            url = check_url(row["url"], self.settings.webhooks_allow_private)
        except ValidationError as exc:
            return None, str(exc)[:500]
        body = row["body"].encode()
        sent = headers(row["secret"], row["event"], row["event_id"], body, int(row["attempts"]) + 1)
        import httpx  # here, not at the top: the command line and the inference layer import no HTTP client

        timeout = httpx.Timeout(self.settings.webhook_timeout_seconds)
        try:
            with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
                response = client.post(url, content=body, headers=sent)
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}"[:500]
        if 200 <= response.status_code < 300:
            return response.status_code, None
        return response.status_code, f"HTTP {response.status_code}: {response.text[:200]}"

    def _record(self, row: dict[str, Any], http_status: int | None, error: str | None) -> Outcome:
        now = datetime.now(UTC)
        tries = int(row["attempts"]) + 1
        if error is None:
            status, next_at = "delivered", row["next_attempt_at"]
        elif tries >= self.settings.webhook_max_attempts:
            status, next_at = "failed", row["next_attempt_at"]
        else:
            wait = backoff_seconds(
                tries, self.settings.webhook_retry_base_seconds, self.settings.webhook_retry_max_seconds
            )
            status, next_at = "pending", (now + timedelta(seconds=wait)).isoformat(timespec="microseconds")
        with self.database.write() as db:
            db.conn.execute(
                """UPDATE webhook_deliveries SET status = ?, attempts = ?, last_attempt_at = ?, last_status = ?,
                       last_error = ?, next_attempt_at = ?, delivered_at = ?
                   WHERE id = ? AND status = 'pending'""",
                (
                    status,
                    tries,
                    utcnow(),
                    http_status,
                    error,
                    next_at,
                    utcnow() if status == "delivered" else None,
                    row["id"],
                ),
            )
        if error is not None:
            _log.warning("webhook delivery %s (%s) try %s: %s", row["id"], row["event"], tries, error)
        return Outcome(int(row["id"]), status, http_status, error)

    def _rows(self, where: str, params: tuple) -> list[dict[str, Any]]:
        return self.database.query(
            f"""SELECT d.*, w.url, w.secret FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                WHERE d.status = 'pending' AND {where} ORDER BY d.next_attempt_at, d.id LIMIT 50""",
            params,
        )

    def send(self, delivery_id: int) -> Outcome | None:
        """Post one pending delivery now, due or not (the Test button); None when it is not pending."""
        rows = self._rows("d.id = ?", (int(delivery_id),))
        return self._record(rows[0], *self._post(rows[0])) if rows else None

    def send_due(self) -> list[Outcome]:
        """Post every delivery that is due now (one pass)."""
        return [self._record(row, *self._post(row)) for row in self._rows("d.next_attempt_at <= ?", (utcnow(),))]

    # -- the thread --------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="webhook-sender", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    sent = self.send_due()
                except Exception:  # a database hiccup must not end deliveries for the process
                    _log.exception("webhook sender pass failed; trying again")
                    sent = []
                if len(sent) < 50:  # a full batch: more are due, go on at once
                    self._stop.wait(self.poll_s)
        finally:
            self.database.close()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=self.settings.webhook_timeout_seconds + 5)
        self._thread = None
