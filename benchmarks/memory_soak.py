"""Server memory under sustained load: RSS after the first 1,000 submissions vs after 20,000 (issue 15, part 6).

Runs ``python app.py`` on the 2,912 real ViLPAct sequences (7 annotators per sequence, so 20,000 tasks exist)
and drives it with 50 scripted annotators (tests/load_driver.py) over raw HTTP on loopback. Prints the app's
resident memory after the first ``--warm`` submissions, after the run, and their ratio (target: at most 1.5).

``--mode`` picks how a submission is sent (see tests/load_driver.py): ``lean`` (one call, the lean route),
``gradio`` (one call through Gradio's own route) or ``queued`` (two calls through Gradio's queue).
Each annotator keeps one Gradio session (as one open browser tab does); ``--fresh-sessions`` gives every call
a new one (a script that sends no ``session_hash``, or a tab reloaded for each task), the worst case for
Gradio's per-session state.

Usage: ``HF_HUB_OFFLINE=1 nice -n 10 .venv/bin/python benchmarks/memory_soak.py [--submissions 20000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from e2e_helpers import ApiClient, free_port, kill_hard, start_app_process, wait_http_ok  # noqa: E402
from load_driver import run_annotators  # noqa: E402

from backend.accounts import auth  # noqa: E402
from backend.context import build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.importer import import_vilpact  # noqa: E402

PASSWORD = "password1"


def rss_mib(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def prepare(vilpact: Path, annotators: int, per_sequence: int) -> Path:
    data_dir = Path(tempfile.mkdtemp(prefix="compstudio-soak-")) / "data"
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    import_vilpact(ctx.database, vilpact, annotators_per_sequence=per_sequence)
    for index in range(annotators):
        auth.add_user(ctx.database, f"soak{index:02d}", "annotator", PASSWORD)
    ctx.database.close()
    return data_dir


def wait_for_warm_up(log: Path, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while "CompStudio: warmed" not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise SystemExit(f"the app's warm-up did not finish within {timeout:.0f} s (see {log})")
        time.sleep(0.5)


def drive(url: str, names: list[str], each: int, mode: str, fresh_sessions: bool) -> int:
    """``each`` submissions per annotator; returns how many were acknowledged (raises on errors).

    Each annotator keeps one Gradio session for the whole run (``session_hash`` derived from the name), as
    one open browser tab does, unless ``fresh_sessions``: then every call starts a new one."""
    original_init, original_post = ApiClient.__init__, ApiClient._json_post

    def one_session(self, url, username, password, timeout=30.0):
        original_init(self, url, username, password, timeout)
        self.session_hash = uuid.uuid5(uuid.NAMESPACE_DNS, username).hex

    def fresh(self, path, payload):
        return original_post(self, path, {**payload, "session_hash": uuid.uuid4().hex})

    ApiClient.__init__ = one_session  # type: ignore[method-assign]
    if fresh_sessions:
        ApiClient._json_post = fresh  # type: ignore[method-assign]
    try:
        results = run_annotators(url, names, PASSWORD, each, timeout=7200, mode=mode)
    finally:
        ApiClient.__init__, ApiClient._json_post = original_init, original_post  # type: ignore[method-assign]
    errors = [e for r in results for e in r.errors]
    if errors:
        raise SystemExit(f"annotators failed: {errors[:3]}")
    return sum(len(r.acknowledged) for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20_000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--warm", type=int, default=1_000, help="submissions before the first reading")
    parser.add_argument("--mode", default="lean", choices=["lean", "gradio", "queued"])
    parser.add_argument("--fresh-sessions", action="store_true")
    parser.add_argument("--vilpact", type=Path, default=ROOT.parent / "shared" / "data" / "vilpact" / "data")
    args = parser.parse_args()
    per_sequence = max(3, -(-args.submissions // 2912) + 1)
    data_dir = prepare(args.vilpact, args.annotators, per_sequence)
    names = [f"soak{i:02d}" for i in range(args.annotators)]
    port = free_port()
    log = data_dir.parent / "app.log"
    env = {"COMPSTUDIO_DEMO_CONTENT": "false"}
    process = start_app_process(data_dir, port, env=env, log=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http_ok(url + "/", timeout=180)
        started = rss_mib(process.pid)
        wait_for_warm_up(log)  # the planning baselines load in the background at start (torch, sentence model)
        warmed = rss_mib(process.pid)
        warm_each = args.warm // args.annotators
        done = drive(url, names, warm_each, args.mode, args.fresh_sessions)
        time.sleep(2)
        after_warm = rss_mib(process.pid)
        readings = [(done, after_warm)]
        rest_each = (args.submissions - done) // args.annotators
        step = max(1, rest_each // 4)  # four more readings along the way
        while rest_each > 0:
            chunk = min(step, rest_each)
            done += drive(url, names, chunk, args.mode, args.fresh_sessions)
            rest_each -= chunk
            readings.append((done, rss_mib(process.pid)))
            print(f"  {done:>6} submissions: RSS {readings[-1][1]:.0f} MiB", flush=True)
        time.sleep(2)
        final = rss_mib(process.pid)
    finally:
        kill_hard(process)
    sessions = " (a new session per call)" if args.fresh_sessions else ""
    print(f"mode {args.mode}{sessions}, {args.annotators} annotators")
    print(f"RSS at start: {started:.0f} MiB; after the background warm-up of the planning baselines: {warmed:.0f} MiB")
    print(f"RSS after the first {readings[0][0]:,} submissions: {after_warm:.0f} MiB")
    print(f"RSS after {done:,} submissions: {final:.0f} MiB")
    print(f"ratio: {final / after_warm:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
