"""The backup service the app runs: a snapshot every ``backup_every_minutes`` in a daemon thread, the Hub
push when ``hub_backup_repo`` is set, and the admin's "back up now"."""

from __future__ import annotations

import logging
import signal
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from backend.accounts import auth
from backend.errors import BackupError, StorageFull
from backend.operations.backup import (
    Snapshot,
    backup_status,
    backups_dir,
    list_snapshots,
    prune_snapshots,
    record_run,
    take_snapshot,
)
from backend.operations.hub import HubBackup
from backend.settings import Settings
from backend.storage import Database

log = logging.getLogger(__name__)


class BackupService:
    """Snapshots every ``backup_every_minutes`` in a daemon thread; the last ``backup_keep`` are kept.

    ``start()`` also starts the Hub push when ``hub_backup_repo`` is set (``hf_api`` stands in for the Hub
    in tests). ``stop()`` ends the loop, takes a last snapshot and pushes it.
    """

    def __init__(self, settings: Settings, database: Database, *, hf_api: Any = None):
        self.settings = settings
        self.database = database
        self.hf_api = hf_api
        self.hub: HubBackup | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._seen_version: tuple[int, int] | None = None  # (connection id, PRAGMA data_version)

    @property
    def directory(self) -> Path:
        return backups_dir(self.settings)

    def start(self) -> BackupService:
        for stale in self.directory.glob(".*.partial"):  # a snapshot cut short by a crash (kill -9)
            stale.unlink(missing_ok=True)
        if self.settings.hub_backup_repo and self.hub is None:
            try:
                self.hub = HubBackup(self.settings, self.database, api=self.hf_api)
            except Exception as exc:  # bad token, Hub down: keep the local snapshots going, tell the admins
                log.exception("Hub backup to %s could not start", self.settings.hub_backup_repo)
                detail = f"could not start: {type(exc).__name__}: {exc}"
                record_run(self.database, "hub", False, self.settings.hub_backup_repo, detail=detail)
        if self.settings.backup_every_minutes > 0 and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="compstudio-backup", daemon=True)
            self._thread.start()
        return self

    def status(self, actor: str | None) -> dict[str, Any]:
        """What the admin tab shows: when the last local snapshot and Hub push succeeded, and any failure since."""
        auth.require_role(self.database, actor, "admin")
        return backup_status(self.database, self.settings).as_dict()

    def back_up_now(self, actor: str | None) -> dict[str, Any]:
        """An admin's "back up now" button: a snapshot (and Hub push) right away."""
        auth.require_role(self.database, actor, "admin")
        return self.snapshot_now().as_dict()

    def _loop(self) -> None:
        interval = self.settings.backup_every_minutes * 60
        while not self._stop.wait(interval):
            self.run_once(skip_unchanged=True)

    def stop(self, *, final_snapshot: bool = True, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if final_snapshot:
            self.run_once(skip_unchanged=False)
        if self.hub is not None:
            self.hub.stop()

    def _unchanged(self) -> bool:
        """True when no other connection committed since this thread's last snapshot (PRAGMA data_version)."""
        conn = self.database.conn
        version = (id(conn), self.database.scalar("PRAGMA data_version"))
        unchanged = version == self._seen_version
        self._seen_version = version
        return unchanged

    def snapshot_now(self) -> Snapshot:
        """Take, prune, record and push one snapshot (waits for the Hub commit). Raises BackupError or
        sqlite3.Error when the snapshot fails; a failed push is recorded, not raised."""
        with self._lock:
            snapshot = take_snapshot(self.database, self.directory)
            prune_snapshots(self.directory, self.settings.backup_keep)
            record_run(self.database, "local", True, snapshot.path.name, snapshot.bytes)
            if self.hub is not None:
                self.hub.push_and_wait()
        return snapshot

    def run_once(self, *, skip_unchanged: bool = False) -> Snapshot | None:
        """One loop step; failures are logged and recorded, never raised (the loop must go on)."""
        try:
            if self.hub is not None:
                self.hub.flush_records()  # outcomes of the scheduler's own periodic pushes
            if skip_unchanged and self._unchanged() and list_snapshots(self.directory):
                return None
            return self.snapshot_now()
        except (BackupError, StorageFull, sqlite3.Error, OSError) as exc:
            log.exception("backup failed")
            record_run(self.database, "local", False, detail=str(exc))
            return None


def stop_on_sigterm(service: BackupService) -> Callable[[int, Any], None]:
    """Make SIGTERM (what a Space sends on restart) stop ``service`` cleanly, then exit.

    Python's default SIGTERM ends the process without ``finally`` blocks or ``atexit``, so the last
    snapshot and Hub push would be lost. Call from the main thread; returns the installed handler.
    """
    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum: int, frame: Any) -> None:
        service.stop()
        if callable(previous):
            previous(signum, frame)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, handler)
    return handler
