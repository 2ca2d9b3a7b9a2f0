"""The one path to the SQLite database.

* One ``sqlite_utils.Database`` per thread (Gradio runs handlers in a thread pool; a connection made in
  one thread cannot be used in another).
* WAL journal and a busy timeout, so readers never block writers and writers queue instead of failing.
* ``write()`` opens ``BEGIN IMMEDIATE``: every read-modify-write takes the write lock up front (a deferred
  transaction cannot upgrade to a write lock under contention and loses writes).
* Schema migrations are applied once, at start-up, by :meth:`Database.migrate`.
* In the app, WAL checkpoints run on a background thread (:meth:`Database.start_checkpointer`) instead
  of inside whichever commit crosses SQLite's 1,000-page mark: that commit took 13-17 ms (it fsyncs)
  and every writer queued behind it waited too.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from backend.errors import StorageFull
from backend.storage.migrations import MIGRATIONS

_log = logging.getLogger(__name__)
_log = logging.getLogger(__name__)
_SQLITE_FULL, _SQLITE_IOERR = 13, 10  # primary result codes (the low byte of an extended code)
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def disk_full(exc: BaseException) -> bool:
    """True for a failed write because the disk is full or a file hit its size limit: SQLite's
    SQLITE_FULL / SQLITE_IOERR (a short or refused write), or an ``OSError`` ENOSPC / EFBIG / EDQUOT."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and (code & 0xFF) in (_SQLITE_FULL, _SQLITE_IOERR)
    return isinstance(exc, OSError) and exc.errno in _NO_SPACE


def utcnow() -> str:
    """Timestamps are ISO-8601 UTC strings with microseconds; they sort as text."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Database:
    """A SQLite file shared by all threads of the process, one connection per thread."""

    def __init__(self, path: Path | str, busy_timeout_ms: int = 5000):
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        # Writers of this process queue here, in order, instead of polling SQLite's lock: the busy handler
        # sleeps in growing steps (up to 100 ms), which put whole seconds into the tail under 30 writers.
        # Other processes (the CLI beside the app) are still handled by the busy timeout.
        self._write_lock = threading.Lock()
        self._autocheckpoint = True
        self._stop_checkpointer = threading.Event()
        self._checkpointer: threading.Thread | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)

    # -- connections -----------------------------------------------------------------------------
    def _connect(self) -> sqlite_utils.Database:
        conn = sqlite3.connect(
            str(self.path),
            timeout=self.busy_timeout_ms / 1000,
            isolation_level=None,  # autocommit; transactions are opened explicitly below
            check_same_thread=True,
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if not self._autocheckpoint:
            conn.execute("PRAGMA wal_autocheckpoint = 0")
        return sqlite_utils.Database(conn)

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection (created on first use)."""
        current = getattr(self._local, "db", None)
        if current is None:
            current = self._connect()
            self._local.db = current
        return current

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    def close(self) -> None:
        current = getattr(self._local, "db", None)
        if current is not None:
            current.conn.close()
            self._local.db = None

    # -- checkpoints -----------------------------------------------------------------------------
    def start_checkpointer(self, interval_s: float = 1.0) -> None:
        """Checkpoint the WAL every ``interval_s`` on a daemon thread; connections made from now on never
        checkpoint inside a commit. Call before serving (connections made earlier keep SQLite's default).

        A PASSIVE checkpoint neither waits for nor blocks readers and writers; SQLite restarts the WAL
        from the start once a checkpoint has caught up, so the file stays small under steady load.
        """
        if self._checkpointer is not None:
            return
        self._autocheckpoint = False
        self._stop_checkpointer.clear()
        self._checkpointer = threading.Thread(
            target=self._checkpoint_loop, args=(interval_s,), name="sqlite-checkpointer", daemon=True
        )
        self._checkpointer.start()

    def _checkpoint_loop(self, interval_s: float) -> None:
        try:
            while not self._stop_checkpointer.wait(interval_s):
                with contextlib.suppress(sqlite3.Error):  # busy or locked: the next round catches up
                    self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            self.close()

    def stop_checkpointer(self) -> None:
        """Stop the checkpoint thread (it checkpoints once more on its way out via close)."""
        if self._checkpointer is None:
            return
        self._stop_checkpointer.set()
        self._checkpointer.join(timeout=10)
        self._checkpointer = None

    # -- transactions ----------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception). Not re-entrant.

        Keep the body short: it holds the process's write lock and SQLite's. A write that fails because the
        disk is full raises ``StorageFull`` (a message for the person) after the rollback."""
        db = self.db
        with self._write_lock:
            db.conn.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.conn.execute("COMMIT")
            except BaseException as exc:
                if db.conn.in_transaction:  # SQLite may already have rolled back (e.g. after SQLITE_FULL)
                    with contextlib.suppress(sqlite3.Error):
                        db.conn.execute("ROLLBACK")
                if disk_full(exc):
                    _log.error("a write to %s failed, nothing was saved: %s", self.path, exc)
                    raise StorageFull(str(exc)) from exc
                raise

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params).fetchall()]

    def query_one(self, sql: str, params: Any = ()) -> dict[str, Any] | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    # -- schema ----------------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply every migration not yet applied, each in its own immediate transaction.

        Returns the names applied now. Safe to call from several processes at once: the
        ``schema_migrations`` check runs inside the write lock.
        """
        applied_now: list[str] = []
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for migration in MIGRATIONS:
            with self.write() as db:
                done = db.conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)).fetchone()
                if done:
                    continue
                for statement in migration.statements:
                    db.conn.execute(statement)
                db.conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (migration.name, utcnow()),
                )
                applied_now.append(migration.name)
        return applied_now

    def integrity_ok(self) -> bool:
        return self.scalar("PRAGMA integrity_check") == "ok"

    def backup_to(self, target: Path | str) -> Path:
        """A consistent snapshot through SQLite's online backup API (safe while others write)."""
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        dest = sqlite3.connect(str(target))
        try:
            self.conn.backup(dest)
        finally:
            dest.close()
        return target


def audit(db: sqlite_utils.Database, actor: str, action: str, target: str, detail: Any = None) -> None:
    """Record who did what to what, and when. Call inside the same ``write()`` as the change."""
    db.conn.execute(
        "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)",
        (utcnow(), actor, action, target, json.dumps(detail, ensure_ascii=False, default=str)),
    )


def monotonic_ms() -> float:
    return time.monotonic() * 1000
