from __future__ import annotations

import threading
import time

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


def test_checkpointer_takes_wal_checkpoints_off_the_commit_path(tmp_path):
    database = Database(tmp_path / "c.db")
    database.migrate()
    database.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # start from an empty WAL
    database.start_checkpointer(interval_s=0.02)
    seen: dict[str, int] = {}

    def writer() -> None:  # a request thread: its connection is made after the checkpointer started
        seen["autocheckpoint"] = database.scalar("PRAGMA wal_autocheckpoint")
        for i in range(300):
            with database.write() as db:
                audit(db, "someone", "test.write", str(i), {"padding": "x" * 5000})
            if i % 25 == 24:
                time.sleep(0.1)  # room for the background checkpoint
        database.close()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    # commits never checkpoint (nor fsync) inline ...
    assert seen["autocheckpoint"] == 0
    # ... yet the WAL was checkpointed and restarted from its start: 300 commits of two or more 4 KiB pages
    # each would have made it over 2.4 MB without a checkpoint, and only the background thread makes one
    wal_bytes = (tmp_path / "c.db-wal").stat().st_size
    assert 0 < wal_bytes < 300 * 2 * 4096 / 2
    database.stop_checkpointer()
    assert database.scalar("SELECT count(*) FROM audit_log") == 300


def test_task_counts_follow_every_change_to_tasks(database):
    from backend import assignment

    def counts() -> tuple[dict, dict]:
        kept = {(r["kind"], r["status"]): r["n"] for r in database.query("SELECT * FROM task_counts") if r["n"]}
        actual = {
            (r["kind"], r["status"]): r["n"]
            for r in database.query("SELECT kind, status, count(*) AS n FROM tasks GROUP BY kind, status")
        }
        return kept, actual

    with database.write() as db:
        assignment.add_tasks(db, "intent", ["a", "b", "c", "d"], 3)
        assignment.add_tasks(db, "intent", ["a", "e"], 3)  # "a" is already there: not counted twice
        assignment.add_tasks(db, "review", ["a"], 1)
    kept, actual = counts()
    assert kept == actual == {("intent", "open"): 5, ("review", "open"): 1}
    with database.write() as db:
        db.conn.execute("UPDATE tasks SET status = 'complete' WHERE item_id IN ('a', 'b') AND kind = 'intent'")
        db.conn.execute("UPDATE tasks SET round = 2 WHERE item_id = 'c'")  # not a status change
        db.conn.execute("UPDATE tasks SET status = 'open' WHERE item_id = 'a' AND kind = 'intent'")
        db.conn.execute("DELETE FROM tasks WHERE item_id = 'e'")
    kept, actual = counts()
    assert kept == actual == {("intent", "open"): 3, ("intent", "complete"): 1, ("review", "open"): 1}
    assert assignment.pool_progress(database.db, "intent", "nobody")["left_in_pool"] == 3


def test_task_counts_migration_counts_existing_tasks(tmp_path):
    database = Database(tmp_path / "m.db")
    database.migrate()
    with database.write() as db:  # a database from before the migration: tasks, no counts
        db.conn.execute("DROP TABLE task_counts")
        for trigger in ("insert", "update", "delete"):
            db.conn.execute(f"DROP TRIGGER task_counts_{trigger}")
        db.conn.execute("DELETE FROM schema_migrations WHERE name = 'core_0005_task_counts'")
        db.conn.executemany(
            "INSERT INTO tasks (kind, item_id, status, needed, created_at) VALUES ('intent', ?, ?, 3, 'now')",
            [("x", "open"), ("y", "open"), ("z", "complete")],
        )
    assert database.migrate() == ["core_0005_task_counts"]
    rows = database.query("SELECT kind, status, n FROM task_counts ORDER BY status")
    assert rows == [{"kind": "intent", "status": "complete", "n": 1}, {"kind": "intent", "status": "open", "n": 2}]
