"""Bounded load and crash tests against ``python app.py`` in its own process, on loopback only.

30 concurrent scripted annotators x 20 submissions over 2,912 real ViLPAct sequences; then the same
with the server killed (kill -9) mid-run and restarted.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from e2e_helpers import free_port, kill_hard, start_app_process, wait_http_ok
from load_driver import run_annotators

from backend.accounts import auth
from backend.context import build_context
from backend.settings import Settings
from backend.vilpact.importer import import_vilpact

pytestmark = [pytest.mark.load, pytest.mark.crash]

ANNOTATORS, SUBMISSIONS, PASSWORD = 30, 20, "password1"


@pytest.fixture
def data_dir(tmp_path, vilpact_dir):
    settings = Settings(data_dir=tmp_path / "data", demo_content=False)
    ctx = build_context(settings)
    import_vilpact(ctx.database, vilpact_dir, annotators_per_sequence=3)
    for index in range(ANNOTATORS):
        auth.add_user(ctx.database, f"load{index:02d}", "annotator", PASSWORD)
    ctx.database.close()
    return settings.data_dir


def check_invariants(data_dir, expected: int | None) -> list[dict]:
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    rows = ctx.database.query("SELECT sequence_id, annotator FROM annotations WHERE source = 'live'")
    if expected is not None:
        assert len(rows) == expected
    per_sequence = Counter(r["sequence_id"] for r in rows)
    assert max(per_sequence.values()) <= 3
    assert len({(r["sequence_id"], r["annotator"]) for r in rows}) == len(rows)  # nobody twice
    over = ctx.database.scalar(
        """SELECT count(*) FROM (SELECT item_id FROM assignments WHERE kind = 'intent'
           AND (status = 'submitted' OR (status = 'leased' AND expires_at > ?)) GROUP BY item_id HAVING count(*) > 3)""",
        ("2000",),
    )
    assert over == 0  # never handed out beyond N, counting live leases
    return rows


def test_thirty_annotators_twenty_submissions_each(data_dir, tmp_path):
    port = free_port()
    process = start_app_process(data_dir, port, env={"COMPSTUDIO_DEMO_CONTENT": "false"}, log=tmp_path / "app.log")
    try:
        wait_http_ok(f"http://127.0.0.1:{port}/", timeout=90)
        names = [f"load{i:02d}" for i in range(ANNOTATORS)]
        results = run_annotators(f"http://127.0.0.1:{port}", names, PASSWORD, SUBMISSIONS, timeout=400)
    finally:
        kill_hard(process)
    assert [r.errors for r in results if r.errors] == []
    assert sum(len(r.acknowledged) for r in results) == ANNOTATORS * SUBMISSIONS
    rows = check_invariants(data_dir, expected=ANNOTATORS * SUBMISSIONS)
    stored = {(r["sequence_id"], r["annotator"]) for r in rows}
    assert stored == {(s, r.name) for r in results for s in r.acknowledged}


def test_kill_minus_nine_mid_run_loses_no_acknowledged_submission(data_dir, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "app.log"
    process = start_app_process(data_dir, port, env={"COMPSTUDIO_DEMO_CONTENT": "false"}, log=log)
    wait_http_ok(url + "/", timeout=90)
    names = [f"load{i:02d}" for i in range(ANNOTATORS)]
    holder: dict = {}
    worker = threading.Thread(
        target=lambda: holder.setdefault("results", run_annotators(url, names, PASSWORD, SUBMISSIONS, timeout=400))
    )
    worker.start()
    try:
        # kill -9 once about a third of the work is acknowledged, while requests are in flight
        ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
        deadline = time.monotonic() + 200
        while ctx.database.scalar("SELECT count(*) FROM annotations WHERE source = 'live'") < 200:
            assert time.monotonic() < deadline, "the load never reached 200 submissions"
            time.sleep(0.05)
        kill_hard(process)
        killed_at = ctx.database.scalar("SELECT count(*) FROM annotations WHERE source = 'live'")
        time.sleep(1.0)  # clients see connection errors and keep retrying
        process = start_app_process(data_dir, port, env={"COMPSTUDIO_DEMO_CONTENT": "false"}, log=log)
        worker.join(timeout=450)
    finally:
        kill_hard(process)
    results = holder["results"]
    assert killed_at < ANNOTATORS * SUBMISSIONS
    assert sum(r.retries for r in results) > 0  # the crash really interrupted clients
    assert [r.errors for r in results if r.errors] == []
    rows = check_invariants(data_dir, expected=ANNOTATORS * SUBMISSIONS)
    stored = {(r["sequence_id"], r["annotator"]) for r in rows}
    acknowledged = {(s, r.name) for r in results for s in r.acknowledged}
    assert acknowledged <= stored  # every acknowledged submission survived the crash
    assert len(acknowledged) == ANNOTATORS * SUBMISSIONS  # and retries created no second rows
