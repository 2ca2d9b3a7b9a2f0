"""A surge of crowd workers on one study (issue 40 §3): 500 distinct workers arriving within 60 s.

Runs ``python app.py`` in its own process on loopback over the real ViLPAct pool (N = 3), creates a Prolific study
(a 3-question qualification, 2 tasks per worker, places "auto"), and drives each worker over raw HTTP with httpx
(NOTES-stack.md, "Measuring a Gradio server under load": gradio_client would measure itself), each from its own
address (``X-Forwarded-For``, believed from loopback through ``trusted_proxies``, as behind a reverse proxy):

1. the study link (303 with the session cookie), 2. the instructions, 3. the qualification page, 4. the answers
(all right), 5. the first task (``POST /api/intent_next``), 6. its submit (``POST /api/intent_submit``).

Time to first task is from the worker's arrival (step 1 sent) to step 5's reply. Arrivals are spread evenly over
``--window`` seconds; the same path for one worker alone (10 workers one after another) runs first, on the same
server. Afterwards the database is
checked: every acknowledged submission stored, nothing else, no sequence over N, each worker placed once. The app's
CPU seconds during the surge (from /proc) and the driver's own say where the time goes.

Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/study_surge.py [--workers 500] [--window 60]``
Prints a table and writes benchmarks/out/study_surge.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from e2e_helpers import free_port, kill_hard, start_app_process, wait_http_ok  # noqa: E402
from load_driver import percentile  # noqa: E402

from backend.accounts import auth  # noqa: E402
from backend.campaigns import links, studies  # noqa: E402
from backend.campaigns.qualification import draw_quiz  # noqa: E402
from backend.context import build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.importer import import_vilpact  # noqa: E402

N, QUIZ, TASKS = 3, 3, 2
ALONE = 10  # the path for one worker alone, 10 times one after another (the baseline)
INTENTS = ("S/He wants to have a drink", "S/He is thirsty")
STEPS = ("link", "instructions", "quiz page", "answers", "first task", "submit")


async def one_worker(url: str, link: str, study_id: int, pid: str, address: str, timeout: float) -> dict:
    """One worker's path; the seconds each step took, time to first task, and an error if any."""
    result: dict = {"pid": pid, "steps": {}, "error": None, "acknowledged": None}
    headers = {"X-Forwarded-For": address}
    session = uuid.uuid4().hex
    start = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=timeout, headers=headers) as client:
        try:

            async def step(name: str, method: str, path: str, expect: int, **kwargs) -> httpx.Response:
                began = time.perf_counter()
                reply = await client.request(method, path, **kwargs)
                result["steps"][name] = time.perf_counter() - began
                if reply.status_code != expect:
                    raise RuntimeError(f"{name}: HTTP {reply.status_code} {reply.text[:160]!r}")
                return reply

            await step("link", "GET", link.removeprefix(url), 303)
            await step("instructions", "GET", f"/study/{study_id}/here", 200)
            await step("quiz page", "GET", f"/study/{study_id}/here?quiz=1", 200)
            answers = {item.id: str(item.answer) for item in draw_quiz("intents", QUIZ, study_id, pid)}
            await step("answers", "POST", f"/study/{study_id}/qualification", 303, data=answers)
            reply = await step(
                "first task", "POST", "/api/intent_next", 200, json={"data": [], "session_hash": session}
            )
            result["first_task_s"] = time.perf_counter() - start
            body = reply.json()
            task = (body.get("data") or [{}])[0].get("task")
            if not task:
                raise RuntimeError(f"first task: none handed out ({str(body)[:160]})")
            payload = {"data": [task["sequence_id"], *INTENTS], "session_hash": session}
            done = await step("submit", "POST", "/api/intent_submit", 200, json=payload)
            if done.json().get("error"):
                raise RuntimeError(f"submit: {done.json()['error']}")
            result["acknowledged"] = task["sequence_id"]
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            result["error"] = f"{type(exc).__name__}: {exc}"[:240]
    result["total_s"] = time.perf_counter() - start
    return result


async def surge(url: str, worker_links: list[tuple[str, str]], study_id: int, window: float, timeout: float) -> list:
    gap = window / max(len(worker_links), 1)

    async def arrive(index: int, pid: str, link: str) -> dict:
        await asyncio.sleep(index * gap)
        address = f"198.18.{index // 250}.{index % 250 + 1}"
        return await one_worker(url, link, study_id, pid, address, timeout)

    return await asyncio.gather(*(arrive(i, pid, link) for i, (pid, link) in enumerate(worker_links)))


def summary(results: list[dict]) -> dict:
    ok = [r for r in results if r["error"] is None]
    first = [r["first_task_s"] for r in ok]
    per_step = {s: [r["steps"][s] for r in ok if s in r["steps"]] for s in STEPS}
    return {
        "workers": len(results),
        "errors": len(results) - len(ok),
        "error_kinds": dict(Counter(r["error"].split(":")[0] for r in results if r["error"]).most_common(5)),
        "first_task_p50_s": round(percentile(first, 50), 3),
        "first_task_p95_s": round(percentile(first, 95), 3),
        "first_task_max_s": round(max(first, default=float("nan")), 3),
        "step_p50_ms": {s: round(percentile(v, 50) * 1000, 1) for s, v in per_step.items()},
        "step_p95_ms": {s: round(percentile(v, 95) * 1000, 1) for s, v in per_step.items()},
    }


def check(data_dir: Path, study_id: int, results: list[dict]) -> dict:
    """What the database holds afterwards."""
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    db = ctx.database
    acknowledged = {(f"s{study_id}-{r['pid']}", r["acknowledged"]) for r in results if r["acknowledged"]}
    rows = db.query("SELECT annotator, sequence_id FROM annotations WHERE source = 'live'")
    stored = {(r["annotator"], r["sequence_id"]) for r in rows}
    over = db.scalar(
        """SELECT count(*) FROM (SELECT item_id FROM assignments WHERE kind = 'intent'
           AND (status = 'submitted' OR status = 'leased') GROUP BY item_id, round HAVING count(*) > ?)""",
        (N,),
    )
    placed = db.scalar("SELECT count(*) FROM study_workers WHERE study_id = ? AND placed_at IS NOT NULL", (study_id,))
    ctx.database.close()
    return {
        "acknowledged": len(acknowledged),
        "stored_equals_acknowledged": stored == acknowledged,
        "rows": len(rows),
        "items_over_n": int(over or 0),
        "placed": int(placed or 0),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(url: str, quiet_ms: float = 40.0, limit_s: float = 180.0) -> None:
    """Wait until the server answers its login page within ``quiet_ms`` five times in a row (its background page
    builds are done), at most ``limit_s``."""
    streak, began = 0, time.monotonic()
    with httpx.Client(base_url=url, timeout=30) as client:
        while streak < 5 and time.monotonic() - began < limit_s:
            start = time.perf_counter()
            client.get("/login")
            streak = streak + 1 if (time.perf_counter() - start) * 1000 < quiet_ms else 0
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=500)
    parser.add_argument("--window", type=float, default=60.0, help="arrivals spread over this many seconds")
    parser.add_argument("--timeout", type=float, default=120.0, help="a client's wait for one reply")
    parser.add_argument("--vilpact", type=Path, default=ROOT.parent / "shared" / "data" / "vilpact" / "data")
    args = parser.parse_args()
    vilpact = args.vilpact if args.vilpact.exists() else ROOT / "assets" / "vilpact"
    data_dir = Path(tempfile.mkdtemp(prefix="compstudio-surge-")) / "data"
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    import_vilpact(ctx.database, vilpact, annotators_per_sequence=N)
    with ctx.database.write() as db:
        auth.insert_user(db.conn, "boss", "admin")
    study = studies.create_study(
        ctx.database, "boss", name="Surge", kind="intents", tasks_per_worker=TASKS, completion_code="SURGE-OK",
        screenout_code="SURGE-OUT", qualification_size=QUIZ, pass_mark=1.0, time_limit_minutes=120,
    )  # fmt: skip
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    pids = [f"{0x5F00AA11BB22CC33DD400000 + i:024x}" for i in range(args.workers + ALONE)]
    worker_links = [
        (pid, links.worker_link(ctx.database, study, url, pid, STUDY_ID="S", SESSION_ID=pid)) for pid in pids
    ]
    ctx.database.close()
    env = {
        "COMPSTUDIO_DEMO_CONTENT": "false",
        "COMPSTUDIO_SPEED_FLOOR_SHARE": "0",
        "COMPSTUDIO_REQUIRE_FULL_VIEW": "false",
        "COMPSTUDIO_TRUSTED_PROXIES": "127.0.0.1",
    }
    process = start_app_process(data_dir, port, env=env, log=data_dir.parent / "app.log")
    try:
        wait_http_ok(f"{url}/", timeout=180)
        settle(url)  # the pages build in the background once serving: start when that is done
        alone = [asyncio.run(one_worker(url, link, study.id, pid, f"198.19.0.{i + 1}", args.timeout))
                 for i, (pid, link) in enumerate(worker_links[:ALONE])]  # fmt: skip
        server_before, driver_before = cpu_seconds(process.pid), time.process_time()
        began = time.perf_counter()
        results = asyncio.run(surge(url, worker_links[ALONE:], study.id, args.window, args.timeout))
        wall = time.perf_counter() - began
        server_cpu, driver_cpu = cpu_seconds(process.pid) - server_before, time.process_time() - driver_before
    finally:
        kill_hard(process)
    report = {
        "alone": summary(alone),
        "surge": {
            **summary(results),
            "wall_s": round(wall, 1),
            "window_s": args.window,
            "server_cpu_s": round(server_cpu, 1),  # the app's process (user + system), during the surge
            "driver_cpu_s": round(driver_cpu, 1),  # this script's 500 clients
        },
        "database": check(data_dir, study.id, alone + results),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg(),
    }
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "study_surge.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
