"""Database snapshots: taken with SQLite's online backup API, checked, kept as the last K, restorable.

* A snapshot is ``<data>/backups/compstudio-<UTC timestamp>Z.db``: a complete, self-contained SQLite file
  (rollback journal, no ``-wal`` beside it) written under a temporary name, checked with
  ``PRAGMA integrity_check`` and then renamed, so a file with the final name is always whole.
* The backup API copies a consistent state while other threads keep writing (WAL readers never block
  writers): a snapshot holds every transaction committed before it started and none half-done.
* :class:`backend.operations.service.BackupService` runs the loop in a daemon thread with a stop event, and
  pushes each new snapshot to the Hub when ``hub_backup_repo`` is set (see :mod:`backend.operations.hub`).
* Each attempt is a row in ``backup_runs``; :func:`backup_status` tells admins the last success.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import BackupError, StorageFull
from backend.storage import Database, audit, utcnow

if TYPE_CHECKING:
    from backend.settings import Settings

log = logging.getLogger(__name__)

BACKUP_DIR_NAME = "backups"
SNAPSHOT_PATTERN = re.compile(r"^compstudio-(\d{8}T\d{12})Z\.db$")
_COUNTED_TABLES = ("users", "annotations", "audit_log")


@dataclass(frozen=True)
class Snapshot:
    path: Path
    taken_at: str  # ISO-8601 UTC, from the file name
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "taken_at": self.taken_at, "bytes": self.bytes}


@dataclass(frozen=True)
class RestoreReport:
    """What a restore brought back. ``snapshot`` is None when nothing could be restored (see ``note``)."""

    snapshot: str | None
    taken_at: str | None
    rows: dict[str, int]
    previous_saved_as: str | None = None
    skipped: list[dict[str, str]] = field(default_factory=list)
    media_files: int = 0
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def message(self) -> str:
        """One line for the log and the admins' banner."""
        if self.snapshot is None:
            text = f"Nothing restored ({self.note or 'no snapshot'}); starting with an empty database"
        else:
            counts = ", ".join(f"{n} {table}" for table, n in self.rows.items())
            text = f"Restored {self.snapshot} (taken {self.taken_at or 'at an unknown time'}): {counts}"
        if self.media_files:
            text += f", {self.media_files} media files"
        if self.skipped:
            text += "; skipped " + ", ".join(f"{s['snapshot']} ({s['problem']})" for s in self.skipped)
        return text + "."


def backups_dir(settings: Settings) -> Path:
    return settings.data_dir / BACKUP_DIR_NAME


def snapshot_name(now: datetime) -> str:
    """
    >>> snapshot_name(datetime(2026, 11, 29, 15, 30, 1, 250000, tzinfo=UTC))
    'compstudio-20261129T153001250000Z.db'
    """
    return f"compstudio-{now.astimezone(UTC):%Y%m%dT%H%M%S%f}Z.db"


def snapshot_time(name: str) -> str | None:
    """The ISO time a snapshot file name encodes, or None for a name that is not a snapshot.

    >>> snapshot_time("compstudio-20261129T153001250000Z.db")
    '2026-11-29T15:30:01.250000+00:00'
    >>> snapshot_time("compstudio.db") is None
    True
    """
    match = SNAPSHOT_PATTERN.match(name)
    if not match:
        return None
    moment = datetime.strptime(match.group(1), "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC)
    return moment.isoformat(timespec="microseconds")


def check_snapshot(path: Path) -> str | None:
    """Why ``path`` is not a usable CompStudio snapshot, or None when it passes ``PRAGMA integrity_check``."""
    if not path.is_file():
        return "file missing"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return f"cannot open: {exc}"
    try:
        rows = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
        if rows != ["ok"]:
            return "integrity_check failed: " + "; ".join(str(r) for r in rows[:3])
        conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    except sqlite3.DatabaseError as exc:
        return f"not a CompStudio database ({exc})"
    finally:
        conn.close()
    return None


def count_rows(path: Path) -> dict[str, int]:
    """Row counts of the main tables of a database file (tables it lacks are left out)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _COUNTED_TABLES if t in present}
    finally:
        conn.close()


def take_snapshot(database: Database, directory: Path, *, now: datetime | None = None) -> Snapshot:
    """Copy the live database into ``directory`` with the backup API; check it; return it.

    Raises BackupError (and leaves no file behind) when the copy fails its integrity check.
    """
    now = now or datetime.now(UTC)
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / snapshot_name(now)
    partial = directory / f".{final.name}.partial"
    try:
        database.backup_to(partial)
        conn = sqlite3.connect(str(partial))
        try:  # a standalone file: no -wal/-shm beside it, nothing to upload but the one file
            conn.execute("PRAGMA journal_mode = DELETE")
        finally:
            conn.close()
        problem = check_snapshot(partial)
        if problem:
            raise BackupError(f"the snapshot of {database.path} is not usable: {problem}")
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return Snapshot(final, snapshot_time(final.name) or "", final.stat().st_size)


def list_snapshots(directory: Path) -> list[Snapshot]:
    """Snapshots in ``directory``, newest first."""
    if not directory.is_dir():
        return []
    found = [
        Snapshot(p, taken_at, p.stat().st_size)
        for p in directory.iterdir()
        if (taken_at := snapshot_time(p.name)) is not None and p.is_file()
    ]
    return sorted(found, key=lambda s: s.path.name, reverse=True)


def prune_snapshots(directory: Path, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` snapshots; return the deleted paths."""
    removed = [s.path for s in list_snapshots(directory)[max(keep, 1) :]]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def copy_into(snapshot: Path, db_path: Path, busy_timeout_ms: int = 5000) -> None:
    """Overwrite the database at ``db_path`` with ``snapshot`` through the backup API.

    The API takes the destination's write lock and rewrites it page by page, so this is also correct for
    a database in WAL mode with its ``-wal`` file present (a plain file copy would not be).
    """
    db_path.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"{snapshot.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(str(db_path), timeout=busy_timeout_ms / 1000)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


def restore_snapshot(
    snapshot: Path, settings: Settings, *, actor: str = "cli", save_current: bool = True
) -> RestoreReport:
    """Bring ``snapshot`` back as the live database of ``settings.data_dir``.

    The snapshot must pass ``PRAGMA integrity_check``. The current database, when there is one, is first
    saved as a new snapshot (``previous_saved_as``) so the restore itself can be undone. Migrations newer
    than the snapshot are applied afterwards. Stop the app before restoring.
    """
    snapshot = Path(snapshot)
    problem = check_snapshot(snapshot)
    if problem:
        raise BackupError(f"{snapshot} cannot be restored: {problem}. Nothing was changed.")
    previous = None
    if save_current and settings.db_path.exists():
        current = Database(settings.db_path, busy_timeout_ms=settings.busy_timeout_ms)
        try:
            previous = str(take_snapshot(current, backups_dir(settings)).path)
        finally:
            current.close()
    copy_into(snapshot, settings.db_path, settings.busy_timeout_ms)
    database = Database(settings.db_path, busy_timeout_ms=settings.busy_timeout_ms)
    try:
        database.migrate()
        with database.write() as db:
            audit(db, actor, "backup.restore", snapshot.name, {"previous_saved_as": previous})
            _insert_run(db, "restore", True, snapshot.name, snapshot.stat().st_size, None)
    finally:
        database.close()
    return RestoreReport(
        snapshot=snapshot.name,
        taken_at=snapshot_time(snapshot.name),
        rows=count_rows(settings.db_path),
        previous_saved_as=previous,
    )


def _insert_run(db: Any, kind: str, ok: bool, file: str | None, size: int | None, detail: str | None) -> None:
    db.conn.execute(
        "INSERT INTO backup_runs (kind, at, ok, file, bytes, detail) VALUES (?, ?, ?, ?, ?, ?)",
        (kind, utcnow(), int(ok), file, size, detail),
    )


def record_run(
    database: Database, kind: str, ok: bool, file: str | None = None, size: int | None = None, detail: str | None = None
) -> None:
    """Note a backup attempt; never raises (a failing record must not stop the backup loop)."""
    try:
        with database.write() as db:
            _insert_run(db, kind, ok, file, size, detail)
    except (sqlite3.Error, StorageFull):
        log.exception("could not record the %s backup run", kind)


@dataclass(frozen=True)
class BackupStatus:
    last_local_ok_at: str | None
    last_hub_ok_at: str | None
    last_failure: dict[str, Any] | None  # the newest failed attempt, when newer than that kind's last success
    snapshots: list[dict[str, Any]]
    every_minutes: float
    keep: int
    hub_repo: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def backup_status(database: Database, settings: Settings) -> BackupStatus:
    def last(kind: str, ok: int) -> dict[str, Any] | None:
        return database.query_one(
            "SELECT kind, at, file, detail FROM backup_runs WHERE kind = ? AND ok = ? ORDER BY id DESC LIMIT 1",
            (kind, ok),
        )

    local_ok, hub_ok = last("local", 1), last("hub", 1)
    failures = [
        failed
        for kind, ok_row in (("local", local_ok), ("hub", hub_ok))
        if (failed := last(kind, 0)) and (ok_row is None or failed["at"] > ok_row["at"])
    ]
    return BackupStatus(
        last_local_ok_at=local_ok["at"] if local_ok else None,
        last_hub_ok_at=hub_ok["at"] if hub_ok else None,
        last_failure=max(failures, key=lambda f: f["at"]) if failures else None,
        snapshots=[s.as_dict() for s in list_snapshots(backups_dir(settings))],
        every_minutes=settings.backup_every_minutes,
        keep=settings.backup_keep,
        hub_repo=settings.hub_backup_repo or None,
    )
