"""Local snapshots: backup API copies, integrity checks, retention, restore, the loop, status for admins."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.accounts import auth
from backend.cli import main as cli_main
from backend.context import build_context
from backend.errors import BackupError, PermissionDenied
from backend.operations import backup
from backend.operations.service import BackupService, stop_on_sigterm
from backend.storage import Database, audit, utcnow


def _add_annotation(database: Database, annotator: str, n: int) -> None:
    """One acknowledged write: a sequence, its annotation and the audit row, in one transaction."""
    sequence_id = f"{annotator}-{n}"
    with database.write() as db:
        db.conn.execute(
            "INSERT INTO sequences (id, video_id, actions, source, imported_at) VALUES (?, 'V', '[]', 'demo', ?)",
            (sequence_id, utcnow()),
        )
        db.conn.execute(
            "INSERT INTO annotations (sequence_id, annotator, concrete_intent, high_level_intent, source, submitted_at)"
            " VALUES (?, ?, ?, 'tidy up', 'live', ?)",
            (sequence_id, annotator, f"S/He wants to do thing {n}", utcnow()),
        )
        audit(db, annotator, "intent.submit", sequence_id, {"n": n})


def _wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_snapshot_is_a_checked_standalone_copy_and_only_the_last_k_stay(ctx):
    auth.add_user(ctx.database, "ada", "admin", "password1")
    directory = backup.backups_dir(ctx.settings)
    start = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    taken = [backup.take_snapshot(ctx.database, directory, now=start + timedelta(minutes=i)) for i in range(4)]

    assert backup.check_snapshot(taken[-1].path) is None
    assert backup.count_rows(taken[-1].path)["users"] == 1
    assert taken[0].taken_at == "2026-11-29T12:00:00.000000+00:00"
    assert sorted(p.name for p in directory.iterdir()) == [s.path.name for s in taken]  # no -wal, no .partial
    conn = sqlite3.connect(taken[-1].path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()

    removed = backup.prune_snapshots(directory, keep=2)
    assert removed == [taken[1].path, taken[0].path]
    assert [s.path for s in backup.list_snapshots(directory)] == [taken[3].path, taken[2].path]


def test_check_snapshot_names_what_is_wrong(tmp_path, ctx):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    assert "not a CompStudio database" in backup.check_snapshot(garbage)

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    assert "not a CompStudio database" in backup.check_snapshot(other)

    good = backup.take_snapshot(ctx.database, tmp_path / "snaps")
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.path.read_bytes()[: good.bytes // 2])
    assert backup.check_snapshot(truncated) is not None
    assert backup.check_snapshot(tmp_path / "missing.db") == "file missing"


def test_cli_backup_then_restore_brings_the_snapshot_back_and_keeps_the_current_one(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    assert cli_main(["users", "add", "ada", "--role", "admin", "--password", "password1", *data]) == 0
    assert cli_main(["backup", *data]) == 0
    capsys.readouterr()
    assert cli_main(["users", "add", "bob", "--role", "annotator", "--password", "password2", *data]) == 0
    snapshot = backup.list_snapshots(backup.backups_dir(settings))[0].path
    capsys.readouterr()

    assert cli_main(["restore", snapshot.name, *data]) == 0  # a bare name from `backup --list` works
    report = json.loads(capsys.readouterr().out)
    assert report["snapshot"] == snapshot.name
    database = Database(settings.db_path)
    assert [u.username for u in auth.list_users(database)] == ["ada"]
    assert database.integrity_ok()
    assert database.scalar("PRAGMA journal_mode") == "wal"
    assert database.scalar("SELECT count(*) FROM audit_log WHERE action = 'backup.restore'") == 1
    previous = Path(report["previous_saved_as"])
    assert backup.count_rows(previous)["users"] == 2  # the restore can be undone


def test_restore_refuses_a_corrupted_snapshot_and_changes_nothing(tmp_path, ctx):
    auth.add_user(ctx.database, "ada", "admin", "password1")
    bad = tmp_path / "compstudio-20261129T120000000000Z.db"
    bad.write_bytes(b"\0" * 4096)
    with pytest.raises(BackupError, match="cannot be restored"):
        backup.restore_snapshot(bad, ctx.settings)
    assert [u.username for u in auth.list_users(ctx.database)] == ["ada"]
    assert backup.list_snapshots(backup.backups_dir(ctx.settings)) == []


def test_snapshots_during_write_heavy_load_are_consistent_and_restore(tmp_path, ctx):
    """Writers commit annotation + audit pairs while snapshots are taken: each snapshot passes
    integrity_check, holds whole transactions only, and every write acknowledged before it started."""
    acknowledged: list[tuple[str, int]] = []
    ack_lock = threading.Lock()
    stop = threading.Event()

    def writer(name: str) -> None:
        database = ctx.database  # thread-local connection inside
        n = 0
        while not stop.is_set() and n < 5000:
            _add_annotation(database, name, n)
            with ack_lock:
                acknowledged.append((name, n))
            n += 1
        database.close()

    threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    directory = backup.backups_dir(ctx.settings)
    checked = 0
    try:
        _wait_for(lambda: len(acknowledged) > 20)
        for _ in range(6):
            with ack_lock:
                before = list(acknowledged)
            snapshot = backup.take_snapshot(ctx.database, directory)
            assert backup.check_snapshot(snapshot.path) is None
            conn = sqlite3.connect(snapshot.path)
            pairs = conn.execute(
                "SELECT (SELECT count(*) FROM annotations), "
                "(SELECT count(*) FROM audit_log WHERE action = 'intent.submit')"
            ).fetchone()
            stored = {
                (a, int(t.rsplit(" ", 1)[1]))
                for a, t in conn.execute("SELECT annotator, concrete_intent FROM annotations")
            }
            conn.close()
            assert pairs[0] == pairs[1]
            assert set(before) <= stored
            checked += 1
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert checked == 6

    fresh = ctx.settings.replace(data_dir=tmp_path / "fresh")
    report = backup.restore_snapshot(snapshot.path, fresh)
    restored = build_context(fresh).database
    assert restored.integrity_ok()
    assert report.rows["annotations"] == restored.scalar("SELECT count(*) FROM annotations") >= len(before)


def test_service_loop_snapshots_changes_stops_cleanly_and_admins_see_the_time(ctx):
    auth.add_user(ctx.database, "ada", "admin", "password1")
    auth.add_user(ctx.database, "ann", "annotator", "password2")
    settings = ctx.settings.replace(backup_every_minutes=0.0005, backup_keep=3)  # every 30 ms
    service = BackupService(settings, ctx.database).start()
    directory = backup.backups_dir(settings)
    try:
        _wait_for(lambda: backup.list_snapshots(directory))
        first = backup.list_snapshots(directory)[0]
        auth.add_user(ctx.database, "bob", "annotator", "password3")  # a change: the loop snapshots again
        _wait_for(lambda: backup.list_snapshots(directory)[0].path != first.path)
    finally:
        service.stop()
    assert service._thread is None
    snapshots = backup.list_snapshots(directory)
    assert 2 <= len(snapshots) <= 3
    assert backup.count_rows(snapshots[0].path)["users"] == 3

    status = service.status("ada")
    assert status["last_local_ok_at"] is not None
    assert status["last_failure"] is None
    assert status["keep"] == 3 and len(status["snapshots"]) == len(snapshots)
    with pytest.raises(PermissionDenied):
        service.status("ann")


def test_idle_database_is_not_snapshotted_again(ctx):
    service = BackupService(ctx.settings, ctx.database)
    assert service.run_once(skip_unchanged=True) is not None
    assert service.run_once(skip_unchanged=True) is None
    auth.add_user(ctx.database, "ada", "admin", "password1")
    other = threading.Thread(target=lambda: auth.add_user(ctx.database, "bob", "admin", "password1"))
    other.start()
    other.join()  # a commit by another connection changes PRAGMA data_version
    assert service.run_once(skip_unchanged=True) is not None


def test_a_failing_backup_is_recorded_not_raised(ctx):
    auth.add_user(ctx.database, "ada", "admin", "password1")
    backup.backups_dir(ctx.settings).parent.mkdir(parents=True, exist_ok=True)
    backup.backups_dir(ctx.settings).write_text("a file where the folder should be")
    service = BackupService(ctx.settings, ctx.database)
    assert service.run_once() is None
    status = service.status("ada")
    assert status["last_local_ok_at"] is None
    assert status["last_failure"]["kind"] == "local"
    with pytest.raises(PermissionDenied):
        service.back_up_now("nobody")


def test_sigterm_takes_a_last_snapshot_before_exiting(ctx):
    previous = signal.getsignal(signal.SIGTERM)
    service = BackupService(ctx.settings.replace(backup_every_minutes=60), ctx.database).start()
    try:
        handler = stop_on_sigterm(service)
        assert signal.getsignal(signal.SIGTERM) is handler
        auth.add_user(ctx.database, "ada", "admin", "password1")
        with pytest.raises(SystemExit):
            handler(signal.SIGTERM, None)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert service._thread is None
    assert backup.count_rows(backup.list_snapshots(backup.backups_dir(ctx.settings))[0].path)["users"] == 1


def test_the_context_carries_a_stopped_backup_service_and_only_admins_use_it(ctx):
    auth.add_user(ctx.database, "ada", "admin", "password1")
    auth.add_user(ctx.database, "ann", "annotator", "password2")
    assert ctx.backup._thread is None  # commands and tests never start it; app.py does
    with pytest.raises(PermissionDenied):
        ctx.backup.back_up_now("ann")
    taken = ctx.backup.back_up_now("ada")
    assert Path(taken["path"]).exists()
    assert ctx.backup.status("ada")["snapshots"][0]["path"] == taken["path"]
