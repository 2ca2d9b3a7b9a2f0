"""Server-side sign-in sessions, kept in SQLite so that a restart (a Space rebuild, a crash) signs nobody out.

A session is a random token in an HttpOnly cookie; the database keeps only its SHA-256, the user and an
expiry (``session_hours``). A session counts only while it has not expired and its account is enabled, so
disabling an account ends its sessions at once (:func:`end_all_in` also deletes them, so re-enabling the
account does not bring old sessions back). Expired rows are deleted whenever someone signs in.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

import sqlite_utils

from backend.storage import Database


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def token_digest(token: str) -> str:
    """What the database stores for a cookie token.

    >>> token_digest("abc")[:16]
    'ba7816bf8f01cfea'
    """
    return hashlib.sha256(token.encode()).hexdigest()


def cookie_name(database: Database) -> str:
    """The session cookie's name: fixed for this data folder (so it survives restarts), different between
    installations (so two servers on one host do not overwrite each other's cookie)."""
    suffix = database.scalar("SELECT value FROM installation WHERE name = 'cookie_suffix'")
    return f"compstudio-session-{suffix}"


def create_in(db: sqlite_utils.Database, username: str, hours: float, address: str | None = None) -> str:
    """A new session for ``username``; returns the token for the cookie. Inside ``write()``."""
    now = _now()
    token = secrets.token_urlsafe(32)
    db.conn.execute("DELETE FROM sessions WHERE expires_at <= ?", (_iso(now),))
    db.conn.execute(
        "INSERT INTO sessions (token_sha256, username, created_at, expires_at, address) VALUES (?, ?, ?, ?, ?)",
        (token_digest(token), username, _iso(now), _iso(now + timedelta(hours=hours)), address),
    )
    return token


def user_for(database: Database, token: str | None) -> str | None:
    """The user a cookie token signs in, or None (unknown, expired, or the account is disabled).

    A read on an indexed key (tens of microseconds): Gradio asks on every request."""
    if not token:
        return None
    return database.scalar(
        """SELECT s.username FROM sessions s JOIN users u ON u.username = s.username
           WHERE s.token_sha256 = ? AND s.expires_at > ? AND u.disabled = 0""",
        (token_digest(token), _iso(_now())),
    )


def end_in(db: sqlite_utils.Database, token: str) -> str | None:
    """Delete one session; returns its user (None when there was none). Inside ``write()``."""
    row = db.conn.execute(
        "DELETE FROM sessions WHERE token_sha256 = ? RETURNING username", (token_digest(token),)
    ).fetchone()
    return row[0] if row else None


def end_all_in(db: sqlite_utils.Database, username: str) -> int:
    """Delete every session of ``username`` (an account being disabled); returns how many. Inside ``write()``."""
    return db.conn.execute("DELETE FROM sessions WHERE username = ?", (username,)).rowcount


def live_sessions(database: Database, username: str) -> int:
    """How many unexpired sessions ``username`` has (whatever the account's state)."""
    return database.scalar(
        "SELECT count(*) FROM sessions WHERE username = ? AND expires_at > ?", (username, _iso(_now()))
    )
