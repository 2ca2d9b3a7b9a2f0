"""Signing in and out with a password: throttled, audited, and turned into a server-side session.

Failed sign-ins are counted per *account* (the typed user name, whether or not it exists, so the answer
never tells which names exist) and per client *address* (over all accounts: password spraying). For a key
with ``lock_after`` as its limit (``signin_lock_after`` per account, ``signin_address_lock_after`` per
address), the first ``lock_after // 2`` failures cost nothing; each further one makes the next attempt wait
1, 2, 4, 8 ... seconds (:func:`wait_seconds`); at ``lock_after`` failures the key is locked for
``signin_lock_minutes``. Failures older than that are forgotten, and a successful sign-in clears its
account's count. An attempt that arrives while a key must wait is refused without checking the password
(so a flood costs no hashing either) and counted in ``signin_throttle.refused``.

Every accepted attempt is *charged* as a failure before its password is checked, in the same transaction
that checks the wait, and refunded if the password was right: parallel attempts cannot slip past the
throttle between the check and the hash. Wrong passwords and locks go to the audit log
(``signin.failed``, ``signin.locked``), as do sign-ins and sign-outs.

A disabled account is told it is disabled only when the password was right (anyone else hears "wrong user
name or password"). All of this runs on a worker thread (scrypt takes ~50 ms): see web/signin.py.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlite_utils

from backend import assignment
from backend.accounts import sessions
from backend.accounts.auth import verify_password
from backend.settings import Settings
from backend.storage import Database, audit

# the hash of a random password nobody knows: unknown user names are checked against it, so they take as
# long as known ones
_NOBODY = "scrypt$16384$8$1$9002FF0O4rADmjy9EMeMiA==$gSU4HmzJhJORQByZyEuorvlZAGhHw1lV+fkNqL73qeE="
WRONG = "Wrong user name or password."


@dataclass(frozen=True)
class SignInResult:
    """The outcome of one attempt. ``status``: 200 signed in, 401 wrong, 403 disabled, 429 throttled."""

    status: int
    message: str = ""
    token: str | None = None  # the session cookie's value, when signed in
    username: str = ""
    retry_after: float = 0.0  # seconds before the next attempt will be checked

    @property
    def ok(self) -> bool:
        return self.status == 200


def wait_seconds(failures: int, since_last: float, lock_after: int, lock_seconds: float) -> float:
    """Seconds a key must still wait after ``failures`` failures, the last one ``since_last`` seconds ago.
    Delays stop growing at half the lock, so that they end before the failures are forgotten.

    >>> [wait_seconds(n, 0.0, 10, 900) for n in (4, 5, 6, 7, 8, 9)]  # free, then 1, 2, 4, ... seconds
    [0.0, 1.0, 2.0, 4.0, 8.0, 16.0]
    >>> wait_seconds(6, 0.5, 10, 900)
    1.5
    >>> wait_seconds(10, 60.0, 10, 900)  # locked: 15 minutes from the last failure
    840.0
    >>> wait_seconds(10, 900.0, 10, 900)  # forgotten
    0.0
    """
    free = lock_after // 2
    if failures < free or since_last >= lock_seconds:
        return 0.0
    delay = lock_seconds if failures >= lock_after else min(2.0 ** (failures - free), lock_seconds / 2)
    return max(0.0, delay - since_last)


def _keys(settings: Settings, username: str, address: str) -> dict[str, int]:
    """Throttle key -> its lock threshold."""
    return {
        f"account:{username.lower()[:64]}": settings.signin_lock_after,
        f"address:{address[:64]}": settings.signin_address_lock_after,
    }


def _counted(row: sqlite3.Row | dict | None, now: datetime, lock_seconds: float) -> tuple[int, float]:
    """(failures still counting, seconds since the last one) for a throttle row."""
    if row is None:
        return 0, lock_seconds
    since = (now - datetime.fromisoformat(row["last_failure_at"])).total_seconds()
    return (0 if since >= lock_seconds else row["failures"]), since


def _wait_message(key: str, wait: float, locked: bool) -> str:
    whose = "this account" if key.startswith("account:") else "your network address"
    if locked:
        until = (datetime.now(UTC) + timedelta(seconds=wait)).strftime("%H:%M:%S")
        left = f"{max(1, round(wait))} more seconds" if wait < 90 else f"{math.ceil(wait / 60)} more minutes"
        return (
            f"Too many failed sign-ins for {whose}: signing in is locked for {left} (until {until} UTC). "
            "Ask an admin if you forgot your password."
        )
    return f"Too many failed sign-ins for {whose}: wait {max(1, round(wait))} seconds before trying again."


def _admit(database: Database, settings: Settings, keys: dict[str, int]) -> SignInResult | None:
    """Refuse the attempt (a 429 result) while a key must wait; otherwise charge it to every key."""
    lock_s = settings.signin_lock_minutes * 60
    now = datetime.now(UTC)
    with database.write() as db:
        for key, lock_after in keys.items():
            row = db.conn.execute("SELECT * FROM signin_throttle WHERE key = ?", (key,)).fetchone()
            failures, since = _counted(row, now, lock_s)
            wait = wait_seconds(failures, since, lock_after, lock_s)
            if wait > 0:
                db.conn.execute("UPDATE signin_throttle SET refused = refused + 1 WHERE key = ?", (key,))
                return SignInResult(429, _wait_message(key, wait, failures >= lock_after), retry_after=wait)
        for key in keys:
            row = db.conn.execute("SELECT * FROM signin_throttle WHERE key = ?", (key,)).fetchone()
            failures, _ = _counted(row, now, lock_s)
            db.conn.execute(
                """INSERT INTO signin_throttle (key, failures, last_failure_at) VALUES (?, ?, ?)
                   ON CONFLICT (key) DO UPDATE SET failures = excluded.failures,
                       last_failure_at = excluded.last_failure_at""",
                (key, failures + 1, now.isoformat(timespec="microseconds")),
            )
    return None


def _refund(db: sqlite_utils.Database, keys: dict[str, int]) -> None:
    """The password was right: the account starts over, the address gets its charge back."""
    account, address = keys
    db.conn.execute("DELETE FROM signin_throttle WHERE key = ?", (account,))
    db.conn.execute("UPDATE signin_throttle SET failures = max(0, failures - 1) WHERE key = ?", (address,))


def _failed(
    database: Database, settings: Settings, username: str, address: str, keys: dict[str, int], reason: str
) -> SignInResult:
    """Record a wrong password (the charge stays) and say what the person can do next."""
    lock_s = settings.signin_lock_minutes * 60
    now = datetime.now(UTC)
    message, retry_after = WRONG, 0.0
    with database.write() as db:
        counts = {}
        for key, lock_after in keys.items():
            row = db.conn.execute("SELECT * FROM signin_throttle WHERE key = ?", (key,)).fetchone()
            failures, since = _counted(row, now, lock_s)
            counts[key] = failures
            wait = wait_seconds(failures, since, lock_after, lock_s)
            if failures == lock_after:
                audit(db, username or "-", "signin.locked", key, {"failures": failures, "minutes": lock_s / 60})
            if wait > retry_after:
                message, retry_after = f"{WRONG} {_wait_message(key, wait, failures >= lock_after)}", wait
        audit(db, username or "-", "signin.failed", username, {"address": address, "reason": reason, **counts})
    return SignInResult(401, message, retry_after=retry_after)


def sign_in(database: Database, settings: Settings, username: str, password: str, address: str) -> SignInResult:
    """Check a password sign-in and, when it is right, open a session (its token goes into the cookie)."""
    username, address = username.strip()[:200], address or "unknown"
    keys = _keys(settings, username, address)
    refused = _admit(database, settings, keys)
    if refused is not None:
        return refused
    row = database.query_one("SELECT password_hash, disabled FROM users WHERE username = ?", (username,))
    right = verify_password(password, row["password_hash"] if row else _NOBODY) and row is not None
    if not right:
        return _failed(database, settings, username, address, keys, "wrong password" if row else "unknown user")
    assert row is not None  # a right password needs an account
    with database.write() as db:
        _refund(db, keys)
        if row["disabled"]:
            audit(db, username, "signin.failed", username, {"address": address, "reason": "account disabled"})
            return SignInResult(403, "This account is disabled. Ask an admin to enable it again.")
        token = sessions.create_in(db, username, settings.session_hours, address)
        audit(db, username, "signin", username, {"address": address})
    return SignInResult(200, token=token, username=username)


def sign_out(database: Database, token: str | None) -> str | None:
    """End this browser's session and free every lease its user holds; returns the user (None if none)."""
    if not token:
        return None
    with database.write() as db:
        username = sessions.end_in(db, token)
        if username is not None:
            released = assignment.release_leases(db, username)
            audit(db, username, "signout", username, {"leases_released": released})
    return username


def sign_out_user(database: Database, username: str | None) -> int:
    """Free every lease ``username`` holds as they sign out of a Hugging Face (OAuth) sign-in; returns how many."""
    if not username:
        return 0
    with database.write() as db:
        released = assignment.release_leases(db, username)
        audit(db, username, "signout", username, {"leases_released": released, "via": "oauth"})
    return released


def throttle_state(database: Database, settings: Settings, key: str) -> dict:
    """A throttle key's counted failures, refusals, wait and lock (for admins and tests)."""
    lock_s = settings.signin_lock_minutes * 60
    lock_after = settings.signin_lock_after if key.startswith("account:") else settings.signin_address_lock_after
    row = database.query_one("SELECT * FROM signin_throttle WHERE key = ?", (key,))
    failures, since = _counted(row, datetime.now(UTC), lock_s)
    wait = wait_seconds(failures, since, lock_after, lock_s)
    return {
        "failures": failures,
        "refused": row["refused"] if row else 0,
        "wait_seconds": wait,
        "locked": failures >= lock_after and wait > 0,
    }
