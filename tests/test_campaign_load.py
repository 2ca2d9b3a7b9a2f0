"""A bounded crowd-campaign load test (issue 16 §5, issue 26 §5) against ``python app.py`` in its own process,
loopback only.

First a farming script makes up 500 Prolific ids and opens the study link with each from one address: at most
``study_arrivals_per_address`` of them get in, the rest are told when to come back (429), and nobody made up
holds a lease. Then 50 workers arrive at once, each from their own address (``X-Forwarded-For``, which uvicorn
the app believes from loopback here: trusted_proxies, as behind a reverse proxy), by the Prolific study link (no account beforehand), pass the
qualification, and each
does the study's quota of 10 intent tasks over the real ViLPAct pool (N = 3) with gold sequences mixed in at
1 in 5, through the named endpoints (tests/load_driver.py). Checked afterwards in the database: every
acknowledged submission is stored, no sequence holds more than N, nobody is twice on a sequence, gold sequences
never count toward N, each worker got exactly the gold items the rate promises, and every worker finished with
the completion code.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from campaign_helpers import last_sequences, release_as_reference
from e2e_helpers import ApiClient, free_port, kill_hard, start_app_process, wait_http_ok
from load_driver import run_annotators

from backend.accounts import auth
from backend.campaigns import gold, links, studies, workers
from backend.campaigns.qualification import draw_quiz
from backend.context import build_context
from backend.settings import Settings
from backend.vilpact.importer import import_vilpact

pytestmark = pytest.mark.load

WORKERS, TASKS, N, GOLD_RATE, GOLD_ITEMS, QUIZ, LIMIT, MADE_UP = 50, 10, 3, 0.2, 10, 2, 5, 500
ENV = {
    "COMPSTUDIO_DEMO_CONTENT": "false",
    "COMPSTUDIO_SPEED_FLOOR_SHARE": "0",  # scripted workers answer at once; the floor is tested elsewhere
    "COMPSTUDIO_STUDY_ARRIVALS_PER_ADDRESS": str(LIMIT),
    "COMPSTUDIO_TRUSTED_PROXIES": "127.0.0.1",  # the workers' addresses come as X-Forwarded-For, as from a proxy
}
PIDS = [f"{0x5F00AA11BB22CC33DD440000 + i:024x}" for i in range(WORKERS)]  # the platform's worker ids
ADDRESS = {pid: f"198.18.0.{i + 1}" for i, pid in enumerate(PIDS)}  # each worker from their own address
FARMER = "203.0.113.66"


@pytest.fixture
def campaign(tmp_path, vilpact_dir):
    settings = Settings(data_dir=tmp_path / "data", demo_content=False)
    ctx = build_context(settings)
    import_vilpact(ctx.database, vilpact_dir, annotators_per_sequence=N)
    with ctx.database.write() as db:
        auth.insert_user(db.conn, "rev", "reviewer")
        auth.insert_user(db.conn, "boss", "admin")
    gold_ids = last_sequences(ctx.database, GOLD_ITEMS)
    release_as_reference(ctx.database, gold_ids)
    gold.add_gold(ctx.database, "rev", "intent", gold_ids)
    study = studies.create_study(
        ctx.database, "boss", name="Load", kind="intents", tasks_per_worker=TASKS, completion_code="LOAD-OK",
        screenout_code="LOAD-OUT", qualification_size=QUIZ, pass_mark=1.0, gold_rate=GOLD_RATE,
    )  # fmt: skip
    ctx.database.close()
    return settings.data_dir, set(gold_ids), study


def _arrive(base_url: str, data_dir, study):
    """connect(pid) for the load driver: the worker's study link, then the qualification (answered right) once."""
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    link_of = {pid: links.worker_link(ctx.database, study, base_url, pid, STUDY_ID="S", SESSION_ID=pid) for pid in PIDS}
    ctx.database.close()

    def connect(pid: str) -> ApiClient:
        client = ApiClient.by_link(link_of[pid], forwarded_for=ADDRESS[pid])
        if client.run("study_me")["status"] == "started":  # a retry after a dropped connection skips this
            keys = {item.id: item.answer for item in draw_quiz("intents", QUIZ, study.id, pid)}
            assert client.run("study_qualify", keys)["passed"]
        return client

    return connect


def _farm(url: str, data_dir, study) -> Counter:
    """One address opens the study link with 500 made-up ids, 8 at a time; the status codes it got."""
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    made_up = [links.worker_link(ctx.database, study, url, f"{0xFA4E0000 + i:024x}") for i in range(MADE_UP)]
    ctx.database.close()
    with httpx.Client(timeout=30, headers={"X-Forwarded-For": FARMER}) as client, ThreadPoolExecutor(8) as pool:
        return Counter(pool.map(lambda link: client.get(link).status_code, made_up))


def test_fifty_workers_by_study_link_ten_tasks_each_with_gold_mixed_in(campaign, tmp_path):
    data_dir, gold_ids, study = campaign
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = start_app_process(data_dir, port, env=ENV, log=tmp_path / "app.log")
    try:
        wait_http_ok(f"{url}/", timeout=90)
        farmed = _farm(url, data_dir, study)
        assert farmed == Counter({303: LIMIT, 429: MADE_UP - LIMIT}), farmed  # at most the limit got in
        started = time.perf_counter()
        results = run_annotators(url, PIDS, "", TASKS, timeout=240, connect=_arrive(url, data_dir, study))
        print(f"\n{WORKERS} workers x {TASKS} tasks: {time.perf_counter() - started:.1f} s with arrivals")
    finally:
        kill_hard(process)
    assert [r.errors for r in results if r.errors] == []
    name_of = {pid: workers.worker_username(study.id, pid) for pid in PIDS}
    acknowledged = {(s, name_of[r.name]) for r in results for s in r.acknowledged}
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
    for name in name_of.values():
        expected = sum(gold.gold_due(p, GOLD_RATE, gold.phase_of(name)) for p in range(1, TASKS + 1))
        done = sum(1 for s, who in acknowledged if who == name and s in gold_ids)
        assert done == expected and gold_per_worker[name] >= expected, name
    assert sum(gold_per_worker.values()) >= WORKERS * TASKS * GOLD_RATE
    # every worker's quota is done: finished, with the completion code on their page; the made-up ids got no task
    finished = db.query("SELECT username, status FROM study_workers WHERE study_id = ?", (study.id,))
    real = [r for r in finished if r["username"] in set(name_of.values())]
    assert sorted(r["username"] for r in real) == sorted(name_of.values())
    assert {r["status"] for r in real} == {"finished"}
    assert len(finished) - len(real) == LIMIT  # the farmer's few, still at the qualification
    assert {r["status"] for r in finished if r not in real} == {"started"}
    assert db.scalar("SELECT count(*) FROM study_arrivals WHERE address = ?", (FARMER,)) == MADE_UP  # all counted
    assert workers.study_view(db, name_of[PIDS[0]])["completion_code"] == "LOAD-OK"
