"""A full disk (issue 15, part 5): writes fail with a message a person can act on, nothing is corrupted,
and the app recovers by itself when space returns.

Two ways to run out of space without root: SQLite's own page limit (``PRAGMA max_page_count``, what SQLite
reports as SQLITE_FULL), and, against the real server process, a file-size limit (``RLIMIT_FSIZE``, set on
the running ``python app.py`` with ``prlimit`` and lifted again later): every file the server writes then
stops growing, exactly as on a full file system, and the kernel refuses the write (EFBIG).
"""

from __future__ import annotations

import resource
import sqlite3
import time

import pytest
from e2e_helpers import ApiClient, ApiError, free_port, kill_hard, start_app_process, wait_http_ok
from review_helpers import add_people, add_sequences

from backend.context import build_context
from backend.errors import StorageFull
from backend.intents import service as intents
from backend.operations.backup import backups_dir, check_snapshot
from backend.settings import Settings
from backend.storage import Database

pytestmark = pytest.mark.crash

PASSWORD = "password-123"
FULL_MESSAGE = "the server's disk is full"
LONG_CONCRETE = "S/He wants to " + "drink some cold water " * 21  # under the 500-character limit


def test_sqlite_full_is_a_named_error_and_the_next_write_works_once_space_returns(tmp_path):
    database = Database(tmp_path / "full.db")
    database.conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    with database.write() as db:
        db.conn.execute("INSERT INTO notes (text) VALUES ('kept')")
    pages = database.scalar("PRAGMA page_count")
    database.conn.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
    with pytest.raises(StorageFull, match="Nothing was saved"), database.write() as db:
        db.conn.execute("INSERT INTO notes (text) VALUES (?)", ("x" * 20_000,))
    assert not database.conn.in_transaction  # rolled back, the connection is usable
    assert database.query("SELECT text FROM notes") == [{"text": "kept"}]
    assert database.integrity_ok()
    database.conn.execute(f"PRAGMA max_page_count = {pages + 100}")  # space returns
    with database.write() as db:
        db.conn.execute("INSERT INTO notes (text) VALUES (?)", ("x" * 20_000,))
    assert database.scalar("SELECT count(*) FROM notes") == 2


def test_disk_full_in_a_service_reaches_the_person_as_the_named_error(ctx):
    add_sequences(ctx.database, [f"seq{i:03d}" for i in range(200)], needed=1)
    add_people(ctx.database, annotators=["ann"])
    pages = ctx.database.scalar("PRAGMA page_count")
    ctx.database.conn.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow any more
    stored, failure = 0, None
    for _ in range(200):
        task = intents.next_intent_task(ctx.database, ctx.settings, "ann")["task"]
        try:
            intents.submit_intents(
                ctx.database, ctx.settings, "ann", task["sequence_id"], LONG_CONCRETE, "S/He is thirsty"
            )
        except StorageFull as exc:
            failure = exc
            break
        stored += 1
    assert failure is not None and FULL_MESSAGE in str(failure)
    assert ctx.database.scalar("SELECT count(*) FROM annotations") == stored  # the refused one: no row at all
    assert ctx.database.integrity_ok()
    ctx.database.conn.execute(f"PRAGMA max_page_count = {pages + 1000}")  # space returns
    intents.submit_intents(ctx.database, ctx.settings, "ann", task["sequence_id"], LONG_CONCRETE, "S/He is thirsty")
    assert ctx.database.scalar("SELECT count(*) FROM annotations") == stored + 1


def _file_limit(pid: int, limit: int) -> None:
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def test_real_server_with_a_full_disk_refuses_clearly_keeps_serving_and_recovers(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", demo_content=False)
    ctx = build_context(settings)
    add_sequences(ctx.database, [f"seq{i:03d}" for i in range(60)], needed=1)
    add_people(ctx.database, annotators=["ann"], password=PASSWORD)
    ctx.database.close()
    port, url = free_port(), ""
    env = {"COMPSTUDIO_DEMO_CONTENT": "false", "COMPSTUDIO_BACKUP_EVERY_MINUTES": str(1 / 60)}  # snapshots too
    process = start_app_process(settings.data_dir, port, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http_ok(url + "/", timeout=120)
        client = ApiClient(url, "ann", PASSWORD)
        task = client.run("intent_next")["task"]
        files = [settings.db_path, settings.db_path.with_name(settings.db_path.name + "-wal")]
        _file_limit(process.pid, max(p.stat().st_size for p in files if p.exists()))  # no file may grow
        acknowledged, refusal = [], None
        long_high = "S/He is thirsty " + "and tired " * 45  # near the 500-character limit: the files grow fast
        for _ in range(59):
            try:
                reply = client.run(
                    "intent_submit", task["sequence_id"], "S/He wants to have a glass of water", long_high
                )
            except ApiError as exc:
                refusal = str(exc)
                break
            acknowledged.append(task["sequence_id"])
            task = reply["task"]
        assert refusal is not None, "the file-size limit never stopped a write"
        assert FULL_MESSAGE in refusal and "try again" in refusal  # what the person reads
        assert wait_http_ok(url + "/", timeout=30) >= 0  # the app keeps serving
        check = sqlite3.connect(settings.db_path)  # this process has no file-size limit
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {r[0] for r in check.execute("SELECT sequence_id FROM annotations WHERE source = 'live'")}
        assert stored == set(acknowledged)  # every acknowledged write is there, the refused one is not
        _file_limit(process.pid, resource.RLIM_INFINITY)  # space returns; no restart
        reply = client.run("intent_submit", task["sequence_id"], "S/He wants to have a glass of water", long_high)
        stored = {r[0] for r in check.execute("SELECT sequence_id FROM annotations WHERE source = 'live'")}
        assert stored == set(acknowledged) | {task["sequence_id"]}
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        lifted = check.execute("SELECT max(at) FROM backup_runs").fetchone()[0] or ""
        deadline = time.monotonic() + 60
        while not check.execute("SELECT 1 FROM backup_runs WHERE ok = 1 AND at > ?", (lifted,)).fetchone():
            assert time.monotonic() < deadline, "the backup loop did not take a snapshot once space returned"
            time.sleep(0.2)
        check.close()
        folder = backups_dir(settings)
        assert not list(folder.glob(".*.partial"))  # snapshots refused by the full disk left nothing behind
        assert all(check_snapshot(p) is None for p in folder.iterdir())
    finally:
        kill_hard(process)
