"""A bounded crowd-campaign load test (issue 16 §5) against ``python app.py`` in its own process, loopback only.

50 workers arrive at once, each does 10 intent tasks over the real ViLPAct
pool (N = 3) with gold sequences mixed in at 1 in 5, through the named endpoints (tests/load_driver.py).
Without studies: the study-link variant joins this once studies exist. Checked afterwards in the database:
every acknowledged submission is stored, no sequence holds more than N, nobody is twice on a sequence, gold
sequences never count toward N and each worker got exactly the gold items the rate promises.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from campaign_helpers import last_sequences, release_as_reference
from e2e_helpers import free_port, kill_hard, start_app_process, wait_http_ok
from load_driver import run_annotators

from backend.accounts import auth
from backend.campaigns import gold
from backend.context import build_context
from backend.settings import Settings
from backend.vilpact.importer import import_vilpact

WORKERS, TASKS, N, GOLD_RATE, GOLD_ITEMS, PASSWORD = 50, 10, 3, 0.2, 10, "crowd-password"
ENV = {
    "COMPSTUDIO_DEMO_CONTENT": "false",
    "COMPSTUDIO_GOLD_RATE": str(GOLD_RATE),
    "COMPSTUDIO_SPEED_FLOOR_SHARE": "0",  # scripted workers answer at once; the floor is tested elsewhere
}
NAMES = [f"crowd{i:02d}" for i in range(WORKERS)]


@pytest.fixture
def campaign(tmp_path, vilpact_dir):
    settings = Settings(data_dir=tmp_path / "data", demo_content=False)
    ctx = build_context(settings)
    import_vilpact(ctx.database, vilpact_dir, annotators_per_sequence=N)
    hashed = auth.hash_password(PASSWORD)  # one hash for all (each costs ~0.1 s here; users import is tested apart)
    with ctx.database.write() as db:
        for name in NAMES:
            auth.insert_user(db.conn, name, "annotator", password_hash=hashed)
        auth.insert_user(db.conn, "rev", "reviewer")
    gold_ids = last_sequences(ctx.database, GOLD_ITEMS)
    release_as_reference(ctx.database, gold_ids)
    gold.add_gold(ctx.database, "rev", "intent", gold_ids)
    ctx.database.close()
    return settings.data_dir, set(gold_ids)


def test_fifty_workers_ten_tasks_each_with_gold_mixed_in(campaign, tmp_path):
    data_dir, gold_ids = campaign
    port = free_port()
    process = start_app_process(data_dir, port, env=ENV, log=tmp_path / "app.log")
    try:
        wait_http_ok(f"http://127.0.0.1:{port}/", timeout=90)
        started = time.perf_counter()
        results = run_annotators(f"http://127.0.0.1:{port}", NAMES, PASSWORD, TASKS, timeout=240)
        print(f"\n{WORKERS} workers x {TASKS} tasks: {time.perf_counter() - started:.1f} s with sign-ins")
    finally:
        kill_hard(process)
    assert [r.errors for r in results if r.errors] == []
    acknowledged = {(s, r.name) for r in results for s in r.acknowledged}
    assert len(acknowledged) == WORKERS * TASKS

    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    db = ctx.database
    rows = db.query("SELECT sequence_id, annotator FROM annotations WHERE source = 'live'")
    stored = {(r["sequence_id"], r["annotator"]) for r in rows}
    assert stored == acknowledged  # every acknowledged submission stored, nothing else
    assert len(stored) == len(rows)  # nobody twice on a sequence
    real = Counter(r["sequence_id"] for r in rows if r["sequence_id"] not in gold_ids)
    assert max(real.values()) <= N
    over = db.scalar(
        """SELECT count(*) FROM (SELECT a.item_id FROM assignments a WHERE a.kind = 'intent'
           AND NOT EXISTS (SELECT 1 FROM gold_answers g WHERE g.assignment_id = a.id)
           AND (a.status = 'submitted' OR (a.status = 'leased' AND a.expires_at > '2000'))
           GROUP BY a.item_id HAVING count(*) > ?)""",
        (N,),
    )
    assert over == 0  # never handed out beyond N, counting every lease ever live
    # gold: never a slot of N, and exactly the rate's share of each worker's stream
    gold_tasks = db.query("SELECT t.status FROM tasks t JOIN gold_items g ON g.kind = t.kind AND g.item_id = t.item_id")
    assert len(gold_tasks) == GOLD_ITEMS and {t["status"] for t in gold_tasks} == {"gold"}
    gold_per_worker = Counter(r["annotator"] for r in db.query("SELECT annotator FROM gold_answers"))
    for name in NAMES:
        expected = sum(gold.gold_due(p, GOLD_RATE, gold.phase_of(name)) for p in range(1, TASKS + 1))
        done = sum(1 for s, who in acknowledged if who == name and s in gold_ids)
        assert done == expected and gold_per_worker[name] >= expected, name
    assert sum(gold_per_worker.values()) >= WORKERS * TASKS * GOLD_RATE
