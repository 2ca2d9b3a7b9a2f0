"""Signing outgoing webhooks, and checking such a signature (what a receiver does; tests/ use it too).

The signed text is the timestamp, a dot and the exact body, so a body cannot be replayed under a new
timestamp; HMAC-SHA256 under the endpoint's secret, hex, prefixed ``sha256=`` (the form GitHub and Stripe use).
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "X-CompStudio-Signature"
TIMESTAMP_HEADER = "X-CompStudio-Timestamp"
EVENT_HEADER = "X-CompStudio-Event"
EVENT_ID_HEADER = "X-CompStudio-Event-Id"
ATTEMPT_HEADER = "X-CompStudio-Attempt"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value (checked against `printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac s3cret`).

    >>> sign("s3cret", 1700000000, b'{"a":1}')
    'sha256=1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940'
    """
    mac = hmac.new(secret.encode(), f"{int(timestamp)}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str, tolerance_s: float = 300.0) -> bool:
    """Whether ``signature`` is ours over ``timestamp`` and ``body``, and the timestamp within ``tolerance_s`` of now.

    >>> verify("s3cret", str(int(time.time())), b"{}", sign("s3cret", int(time.time()), b"{}"))
    True
    >>> verify("s3cret", "1700000000", b'{"a":1}', sign("s3cret", 1700000000, b'{"a":1}'))  # too old: a replay
    False
    """
    try:
        moment = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs(time.time() - moment) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, moment, body).encode(), (signature or "").encode())


def headers(secret: str, event: str, event_id: str, body: bytes, attempt: int, now: float | None = None) -> dict:
    """Every header of one delivery."""
    timestamp = int(time.time() if now is None else now)
    return {
        "Content-Type": "application/json",
        "User-Agent": "CompStudio-Webhooks/1",
        EVENT_HEADER: event,
        EVENT_ID_HEADER: event_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: sign(secret, timestamp, body),
        ATTEMPT_HEADER: str(attempt),
    }
