from __future__ import annotations

import threading

from backend.storage import Database, audit


def test_migrations_apply_once(tmp_path):
    database = Database(tmp_path / "x.db")
    first = database.migrate()
    assert "core_0001_accounts_audit" in first
    assert database.migrate() == []
    assert database.scalar("PRAGMA journal_mode") == "wal"
    assert database.integrity_ok()


def test_write_rolls_back_on_error(database):
    try:
        with database.write() as db:
            audit(db, "alice", "test", "x")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert database.scalar("SELECT count(*) FROM audit_log") == 0


def test_one_connection_per_thread_and_no_lost_writes(database):
    """Read-modify-write under contention: a counter incremented by 4 threads x 50 loses nothing."""
    with database.write() as db:
        db.conn.execute("CREATE TABLE counter (n INTEGER)")
        db.conn.execute("INSERT INTO counter VALUES (0)")

    def work():
        for _ in range(50):
            with database.write() as db:
                n = db.conn.execute("SELECT n FROM counter").fetchone()[0]
                db.conn.execute("UPDATE counter SET n = ?", (n + 1,))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert database.scalar("SELECT n FROM counter") == 200


def test_backup_is_consistent(database, tmp_path):
    with database.write() as db:
        audit(db, "alice", "x", "y")
    target = database.backup_to(tmp_path / "snap.db")
    copy = Database(target)
    assert copy.scalar("SELECT count(*) FROM audit_log") == 1
    assert copy.integrity_ok()
