"""kill -9 in every write flow but intents (issue 15, part 4; intents: tests/test_load_and_crash.py).

One ``python app.py`` serves, at the same time: annotators answering VQA items, verifiers verifying others,
annotators checking planning questions, reviewers reviewing intent rounds, an admin's model batch run
(against a slow OpenAI-compatible server on loopback) and the backup loop taking a snapshot every second.
Once a third of the work is stored, the server is killed (kill -9) and restarted on the same data folder;
every client retries what it had in flight (the same submit again) and carries on. Then, per flow: every
acknowledged write is stored, nothing is stored twice, nothing is half-written (each stored row with its
finished assignment), and ``PRAGMA integrity_check`` is ok. The in-context import and the restore, which are
commands rather than server endpoints, are killed the same way in tests/test_crash_commands.py.
"""

from __future__ import annotations

import http.client
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import VILPACT_DATA
from e2e_helpers import ApiClient, ApiError, free_port, kill_hard, start_app_process, wait_http_ok
from fake_openai_server import FakeOpenAIServer
from review_helpers import add_people, add_sequences, annotate_all

from backend.context import build_context
from backend.inference import service as inference
from backend.operations.backup import backups_dir, check_snapshot
from backend.planning.questions import import_planning
from backend.settings import Settings
from backend.vilpact.importer import import_vilpact
from backend.vqa.demo import DEMO_FILE
from backend.vqa.io import import_items
from backend.vqa.permissions import set_permission

pytestmark = pytest.mark.crash

PASSWORD = "password-123"
ANSWERERS, CHECKERS = ["ans0", "ans1", "ans2"], ["chk0", "chk1", "chk2"]
VERIFIERS, REVIEWERS = ["ver0", "ver1"], ["rev0", "rev1"]
EACH = 8  # submissions per person (small: the test runs on a shared 2-core machine)
RETRYABLE = (OSError, http.client.HTTPException, ValueError)
VERIFIED_ITEMS, DRAFT_ITEMS, REVIEW_SEQUENCES = 16, 8, 16


@dataclass
class Worker:
    name: str
    acknowledged: list[str] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)


def _vqa_items(folder: Path) -> Path:
    """VQA items built from the demo's first item: VERIFIED_ITEMS to answer, DRAFT_ITEMS to verify."""
    shutil.copytree(DEMO_FILE.parent / "images", folder / "images")
    first = json.loads(DEMO_FILE.read_text().splitlines()[0])
    lines = [
        json.dumps({**first, "id": f"crash-{status}-{i}", "status": status})
        for status, count in (("verified", VERIFIED_ITEMS), ("draft", DRAFT_ITEMS))
        for i in range(count)
    ]
    (folder / "items.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "items.jsonl"


def _prepare(tmp: Path, vilpact_dir: Path, fake_url: str) -> Settings:
    settings = Settings(data_dir=tmp / "data", demo_content=False)
    ctx = build_context(settings)
    db = ctx.database
    add_sequences(db, [f"rs{i:02d}" for i in range(REVIEW_SEQUENCES)])
    add_people(db, annotators=["int0", "int1", "int2"])
    annotate_all(db, settings, ["int0", "int1", "int2"])  # every round complete: review items
    import_vilpact(db, vilpact_dir, add_to_pool=False)  # the action classes the planning questions use
    import_planning(db, vilpact_dir, annotators_per_question=3)
    add_people(db, annotators=ANSWERERS + CHECKERS + VERIFIERS, reviewers=REVIEWERS, admins=["boss"], password=PASSWORD)
    for name in VERIFIERS:
        set_permission(db, "boss", name, "author")
    import_items(db, settings, _vqa_items(tmp / "vqa"), "jsonl", actor="cli")
    inference.save_model(
        ctx,
        "boss",
        {
            "name": "slow-fake",
            "backend": "openai",
            "path": "fake-vlm",
            "concurrency": 1,
            "options": {"base_url": fake_url, "timeout_s": 5, "retries": 0},
        },
    )
    db.close()
    return settings


# -- one flow per kind of person: ask for a task -> (its key, the submit endpoint, the submit's arguments) -----
Step = tuple[str, str, tuple[Any, ...]] | None


def _answer(client: ApiClient) -> Step:
    task = client.run("vqa_next_answer")["task"]
    return None if task is None else (task["id"], "vqa_submit_answer", (task["id"], ["A"]))


def _verify(client: ApiClient) -> Step:
    task = client.run("vqa_next_verification")["task"]
    return (
        None if task is None else (task["id"], "vqa_submit_verification", (task["id"], "accept", True, True, "", None))
    )


def _check(client: ApiClient) -> Step:
    question = client.run("planning_next_check")["question"]
    return None if question is None else (question["id"], "planning_submit_check", (question["id"], 0, 5.0))


def _review(client: ApiClient) -> Step:
    item = client.run("review_next")["item"]
    if item is None:
        return None
    judgments = [{"annotation_id": a["annotation_id"], "reasonable": True} for a in item["annotations"]]
    first = item["annotations"][0]["annotation_id"]
    final = {"concrete_from": first, "high_level_from": first}
    key = f"{item['sequence_id']}#{item['round']}"
    return key, "review_submit", (item["sequence_id"], item["round"], judgments, final, "")


def _signed_in(url: str, name: str, deadline: float) -> ApiClient:
    while True:
        try:
            return ApiClient(url, name, PASSWORD)
        except (*RETRYABLE, PermissionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _work(
    url: str,
    worker: Worker,
    flow: Callable[[ApiClient], Step],
    deadline: float,
    signed_in: threading.Barrier,
    go: threading.Event,
) -> None:
    """Sign in, wait for the start, then EACH tasks: ask, then send the submit until its reply arrives. After a
    crash the client signs in again and sends the very same submit (it may have been stored without the reply
    reaching the client)."""
    client = _signed_in(url, worker.name, deadline)
    signed_in.wait(timeout=max(1.0, deadline - time.monotonic()))
    go.wait(timeout=max(1.0, deadline - time.monotonic()))
    while len(worker.acknowledged) < EACH and time.monotonic() < deadline:
        try:
            step = flow(client)
            if step is None:
                return
            key, endpoint, args = step
            while True:
                try:
                    client.run(endpoint, *args)
                    break
                except RETRYABLE:
                    worker.retries += 1
                    time.sleep(0.2)
                    client = _signed_in(url, worker.name, deadline)
            worker.acknowledged.append(key)
        except RETRYABLE:
            worker.retries += 1
            time.sleep(0.2)
            client = _signed_in(url, worker.name, deadline)
        except ApiError as exc:
            worker.errors.append(f"{worker.name}: {exc}")
            return


def _model_run(url: str, worker: Worker, deadline: float) -> None:
    """An admin starts a batch run; after a crash they start it again, and it resumes."""
    client = _signed_in(url, "boss", deadline)
    while time.monotonic() < deadline:
        try:
            summary = client.call("model_run", "mmcomposition", "slow-fake", None, False, None)
            worker.acknowledged.append(json.dumps(summary))
            return
        except RETRYABLE:
            worker.retries += 1
            time.sleep(0.2)
            client = _signed_in(url, "boss", deadline)
        except ApiError as exc:
            if str(exc) == "endpoint model_run failed":  # the event stream was cut by the crash: start it again
                worker.retries += 1
                time.sleep(0.2)
                client = _signed_in(url, "boss", deadline)
                continue
            worker.errors.append(str(exc))
            return


def _stored(db: sqlite3.Connection) -> int:
    tables = ("vqa_answers", "vqa_verifications", "planning_checks", "reviews")
    return sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)


def _predictions(db: sqlite3.Connection) -> int:
    return db.execute("SELECT count(*) FROM predictions").fetchone()[0]


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """Run the mixed load, kill -9 it once mid-run, restart, let everyone finish; yield what happened."""
    tmp = tmp_path_factory.mktemp("crash-flows")
    with FakeOpenAIServer(delay_s=0.6) as fake:
        settings = _prepare(tmp, VILPACT_DATA, fake.base_url)
        port, log = free_port(), tmp / "app.log"
        url = f"http://127.0.0.1:{port}"
        env = {"COMPSTUDIO_DEMO_CONTENT": "false", "COMPSTUDIO_BACKUP_EVERY_MINUTES": str(1 / 60)}
        process = start_app_process(settings.data_dir, port, env=env, log=log)
        wait_http_ok(url + "/", timeout=120)
        deadline = time.monotonic() + 240
        flows = [(n, _answer) for n in ANSWERERS] + [(n, _verify) for n in VERIFIERS]
        flows += [(n, _check) for n in CHECKERS] + [(n, _review) for n in REVIEWERS]
        workers = {name: Worker(name) for name, _ in flows} | {"boss": Worker("boss")}
        signed_in, go = threading.Barrier(len(flows) + 1), threading.Event()  # scrypt sign-ins are slow
        threads = [threading.Thread(target=_work, args=(url, workers[n], f, deadline, signed_in, go)) for n, f in flows]
        threads.append(threading.Thread(target=_model_run, args=(url, workers["boss"], deadline)))
        watch = sqlite3.connect(settings.db_path)
        try:
            for thread in threads[:-1]:
                thread.start()
            signed_in.wait(timeout=120)
            threads[-1].start()  # the model run first: the kill must land in the middle of it
            while _predictions(watch) < 1:
                assert time.monotonic() < deadline, "the model run never stored a prediction"
                time.sleep(0.05)
            go.set()  # then everyone else, all at once
            while _stored(watch) < len(flows) * EACH // 3:
                assert time.monotonic() < deadline, "the load never reached a third of its work"
                time.sleep(0.05)
            predictions_before = _predictions(watch)
            kill_hard(process)
            killed_at = _stored(watch)
            watch.close()
            time.sleep(0.5)  # clients see connection errors and keep retrying
            process = start_app_process(settings.data_dir, port, env=env, log=log)
            for thread in threads:
                thread.join(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            kill_hard(process)
        yield {
            "settings": settings,
            "workers": workers,
            "killed_at": killed_at,
            "predictions_at_kill": predictions_before,
            "expected": len(flows) * EACH,
        }


def _db(settings: Settings) -> sqlite3.Connection:
    db = sqlite3.connect(settings.db_path)
    db.row_factory = sqlite3.Row
    return db


def test_the_crash_interrupted_work_and_everyone_finished(crashed):
    workers = crashed["workers"].values()
    assert crashed["killed_at"] < crashed["expected"]  # killed mid-run
    assert sum(w.retries for w in workers) > 0  # clients really saw the crash
    assert [w.errors for w in workers if w.errors] == []
    assert sum(len(w.acknowledged) for w in workers) == crashed["expected"] + 1  # + the model run
    assert _db(crashed["settings"]).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


FLOW_TABLES = {  # flow: (people, table, who column, item column, assignment kind)
    "vqa answer": (ANSWERERS, "vqa_answers", "annotator", "item_id", "vqa_answer"),
    "vqa verification": (VERIFIERS, "vqa_verifications", "verifier", "item_id", "vqa_verify"),
    "planning check": (CHECKERS, "planning_checks", "annotator", "question_id", "planning"),
    "review submit": (REVIEWERS, "reviews", "reviewer", "sequence_id || '#' || round", "review"),
}


@pytest.mark.parametrize("flow", list(FLOW_TABLES))
def test_every_acknowledged_write_is_stored_once_and_whole(crashed, flow):
    people, table, who, item, kind = FLOW_TABLES[flow]
    db = _db(crashed["settings"])
    rows = db.execute(f"SELECT {who} AS who, {item} AS item FROM {table}").fetchall()
    stored = [(r["who"], r["item"]) for r in rows]
    assert len(stored) == len(set(stored))  # no duplicate after a client retry
    acknowledged = {(w.name, key) for w in crashed["workers"].values() if w.name in people for key in w.acknowledged}
    assert acknowledged == set(stored)  # every acknowledged write survived; nothing unacknowledged is left over
    join = "a.item_id = t.sequence_id || '@' || t.round" if kind == "review" else f"a.item_id = t.{item}"
    half = db.execute(
        f"""SELECT count(*) FROM {table} t LEFT JOIN assignments a ON a.kind = ? AND {join}
            AND a.annotator = t.{who} AND a.status = 'submitted' WHERE a.id IS NULL""",
        (kind,),
    ).fetchone()[0]
    assert half == 0  # every stored row has its finished assignment (one transaction)
    if flow == "review submit":
        judged = db.execute("SELECT count(*) FROM review_judgments").fetchone()[0]
        assert judged == 3 * len(stored)  # each review with all its judgments
        finals = db.execute("SELECT count(DISTINCT review_id) FROM final_intents").fetchone()[0]
        assert finals == len(stored)  # and its final intents


def test_the_model_run_resumed_after_the_crash_without_duplicates(crashed):
    db = _db(crashed["settings"])
    rows = db.execute("SELECT item_id FROM predictions WHERE model = 'slow-fake'").fetchall()
    assert len(rows) == len({r[0] for r in rows}) >= VERIFIED_ITEMS  # every item answered, once
    assert 0 < crashed["predictions_at_kill"] < VERIFIED_ITEMS  # the kill landed mid-run
    runs = db.execute("SELECT status FROM eval_runs WHERE model = 'slow-fake' ORDER BY id").fetchall()
    assert [r[0] for r in runs][-1] == "finished"
    assert "running" not in [r[0] for r in runs]  # the run the crash cut short is marked, not left running


def test_backup_snapshots_are_whole_after_the_crash(crashed):
    folder = backups_dir(crashed["settings"])
    snapshots = [p for p in folder.iterdir() if not p.name.startswith(".")]
    assert snapshots  # the loop took snapshots while the load ran
    assert [check_snapshot(p) for p in snapshots] == [None] * len(snapshots)  # a snapshot's name means whole
    service = build_context(crashed["settings"]).backup  # what the app starts (the last kill may cut one short)
    service.start()
    service.stop(final_snapshot=False)
    assert not list(folder.glob(".*.partial"))  # a snapshot cut short by a kill is cleared at the next start


def test_a_partial_snapshot_left_by_a_kill_is_cleared_at_start(ctx):
    folder = backups_dir(ctx.settings)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / ".compstudio-20261130T120000000000.db.partial"
    partial.write_bytes(b"half a snapshot")
    ctx.backup.start()
    ctx.backup.stop(final_snapshot=False)
    assert not partial.exists()
