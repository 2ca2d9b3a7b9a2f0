"""kill -9 in the write flows that are commands (issue 15, part 4): the in-context import and the restore.

Each runs as ``python -m backend ...`` in its own process, as an admin runs it; it is killed (kill -9) while
its transaction is being written (its WAL file is growing), and the data folder is then opened again the way
the app opens it (migrations, integrity check). Nothing is half-written: the set (or the restored database)
is there whole or not at all, and running the command again, as the admin would, completes it exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_helpers import ROOT

from backend.context import build_context
from backend.operations.backup import take_snapshot
from backend.settings import Settings
from backend.storage import audit

pytestmark = pytest.mark.crash

BANK = ROOT / "assets" / "icl" / "example_bank.jsonl"


def _command(data_dir: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "backend", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill_when_writing(process: subprocess.Popen, wal: Path, at_bytes: int, timeout: float = 120) -> bool:
    """kill -9 once ``wal`` has grown past ``at_bytes`` (the transaction is being written); False if the
    command finished first."""
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        try:
            size = wal.stat().st_size
        except FileNotFoundError:  # not yet written, or removed by the command's last checkpoint just now
            size = 0
        if size > at_bytes:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            return True
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.005)
    return False


def _wal(data_dir: Path) -> Path:
    db_path = Settings(data_dir=data_dir).db_path
    return db_path.with_name(db_path.name + "-wal")


def _reopen(data_dir: Path):
    """Open the data folder as the app does at start: migrations, then the integrity check."""
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    assert ctx.database.integrity_ok()
    return ctx


def test_icl_import_killed_mid_transaction_leaves_no_partial_set_and_the_rerun_stores_it_once(tmp_path):
    data_dir = tmp_path / "data"
    _reopen(data_dir).database.close()
    lines = BANK.read_text().splitlines()
    big = tmp_path / "bank.jsonl"
    big.write_text("\n".join(lines * 5) + "\n")  # ~10,000 examples: one transaction of a few MB
    expected = len(lines) * 5
    process = _command(data_dir, "import", "icl", "bigbank", str(big), "--kind", "bank")
    killed = _kill_when_writing(process, _wal(data_dir), 64 * 1024)
    assert killed, "the import finished before it could be killed; make the bank bigger"
    ctx = _reopen(data_dir)
    kept = (
        ctx.database.scalar("SELECT count(*) FROM icl_sets WHERE name = 'bigbank'"),
        ctx.database.scalar("SELECT count(*) FROM icl_items WHERE set_name = 'bigbank'"),
    )
    # absent, or whole when the kill landed in the commit's last writes (SQLite writes most of a big
    # transaction's pages at commit, so the WAL watcher cannot always stop it before): never half
    assert kept in {(0, 0), (1, expected)}, kept
    ctx.database.close()
    if kept == (0, 0):
        rerun = _command(data_dir, "import", "icl", "bigbank", str(big), "--kind", "bank")
        out, _ = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, out
    ctx = _reopen(data_dir)
    assert ctx.database.scalar("SELECT items FROM icl_sets WHERE name = 'bigbank'") == expected
    assert ctx.database.scalar("SELECT count(*) FROM icl_items WHERE set_name = 'bigbank'") == expected
    again = _command(data_dir, "import", "icl", "bigbank", str(big), "--kind", "bank")  # a retry of a done import
    out, _ = again.communicate(timeout=300)
    assert again.returncode == 2 and b"exists" in out  # refused with a clear message, nothing doubled
    assert ctx.database.scalar("SELECT count(*) FROM icl_items WHERE set_name = 'bigbank'") == expected


def _big_snapshot(tmp_path: Path, rows: int) -> Path:
    """A snapshot of another data folder whose audit log holds ``rows`` large entries (~40 MB)."""
    ctx = build_context(Settings(data_dir=tmp_path / "source", demo_content=False))
    detail = {"padding": "x" * 4000}
    with ctx.database.write() as db:
        for index in range(rows):
            audit(db, "test", "padding", str(index), detail)
    snapshot = take_snapshot(ctx.database, tmp_path / "snapshots")
    ctx.database.close()
    return snapshot.path


def test_restore_killed_mid_copy_leaves_the_old_or_the_new_database_whole_and_the_rerun_completes(tmp_path):
    rows = 10_000
    snapshot = _big_snapshot(tmp_path, rows)
    data_dir = tmp_path / "data"
    ctx = _reopen(data_dir)
    with ctx.database.write() as db:
        audit(db, "test", "before-restore", "live", None)
    before = ctx.database.scalar("SELECT count(*) FROM audit_log")
    ctx.database.close()
    process = _command(data_dir, "restore", str(snapshot))
    killed = _kill_when_writing(process, _wal(data_dir), 4 * 1024 * 1024)
    assert killed, "the restore finished before it could be killed; make the snapshot bigger"
    ctx = _reopen(data_dir)
    padding = ctx.database.scalar("SELECT count(*) FROM audit_log WHERE action = 'padding'")
    live = ctx.database.scalar("SELECT count(*) FROM audit_log WHERE action = 'before-restore'")
    assert (padding, live) in {(0, 1), (rows, 0)}  # the old database or the snapshot, never a mix
    if live:
        assert ctx.database.scalar("SELECT count(*) FROM audit_log") == before
    ctx.database.close()
    rerun = _command(data_dir, "restore", str(snapshot))
    out, _ = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, out
    report = json.loads(out[out.index(b"{") :])
    assert report["snapshot"] == snapshot.name
    ctx = _reopen(data_dir)
    assert ctx.database.scalar("SELECT count(*) FROM audit_log WHERE action = 'padding'") == rows
    assert ctx.database.scalar("SELECT count(*) FROM audit_log WHERE action = 'backup.restore'") == 1
    assert sqlite3.connect(snapshot).execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # the source untouched
