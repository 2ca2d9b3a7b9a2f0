"""Start-up time and memory of ``python app.py`` on the demo content, CPU only: cold (empty data folder) and warm.

Issue 8 asks a fresh Space to answer within 60 s; issue 25 asks start-up to HTTP 200 and resident memory after
start to stay within 1.2× of the app before the web shell. Cold: a new, empty data folder, so migrations, demo
videos and accounts are created first. Warm: the same folder started again. Each start is a separate process,
timed until ``GET /`` answers 200 (it sends a visitor on to ``/login``); its resident memory (VmRSS) is read
``--settle`` seconds later (the pages built in the background, the planning baselines warmed up).

    .venv/bin/python benchmarks/cold_start.py [--runs 3] [--baseline /path/to/another/checkout]

With ``--baseline``, each run starts the other checkout's ``app.py`` too (same venv, same machine, alternating),
and the ratios ours / baseline are printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e_helpers import free_port, wait_http_ok  # noqa: E402

BUDGET_S = 60.0


def rss_mib(pid: int) -> float:
    """Resident memory of a process, MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def start_once(tree: Path, data_dir: Path, settle: float) -> tuple[float, float]:
    """(seconds to the first 200, MiB resident ``settle`` seconds later) of one start of ``tree``'s app.py."""
    port = free_port()
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "COMPSTUDIO_DEMO_CONTENT": "true", "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        [sys.executable, str(tree / "app.py"), "--data-dir", str(data_dir), "--port", str(port)],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        seconds = wait_http_ok(f"http://127.0.0.1:{port}/", timeout=300)
        time.sleep(settle)
        return seconds, rss_mib(process.pid)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def measure(tree: Path, settle: float) -> dict[str, tuple[float, float]]:
    """One cold start of ``tree`` on an empty folder, then one warm start on the same folder."""
    with tempfile.TemporaryDirectory(prefix="compstudio-cold-") as tmp:
        data_dir = Path(tmp) / "data"
        return {"cold": start_once(tree, data_dir, settle), "warm": start_once(tree, data_dir, settle)}


def summary(found: dict[str, list[tuple[float, float]]], kind: str) -> tuple[float, float]:
    return statistics.median(s for s, _ in found[kind]), statistics.median(m for _, m in found[kind])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to compare against")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds after the first 200 to read memory")
    args = parser.parse_args()
    ours: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    base: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
    load = []
    for _ in range(args.runs):  # alternating, so that a change in the machine's load falls on both
        load.append(os.getloadavg()[0])
        for kind, value in measure(ROOT, args.settle).items():
            ours[kind].append(value)
        if args.baseline:
            for kind, value in measure(args.baseline.resolve(), args.settle).items():
                base[kind].append(value)
    print(f"{args.runs} runs; load average at each: {[round(x, 1) for x in load]}")
    for kind in ("cold", "warm"):
        seconds, mib = summary(ours, kind)
        line = f"{kind} start: median {seconds:.1f} s to HTTP 200, {mib:.0f} MiB resident {args.settle:g} s later"
        if args.baseline:
            base_seconds, base_mib = summary(base, kind)
            line += (
                f"; baseline {base_seconds:.1f} s, {base_mib:.0f} MiB; "
                f"ratio {seconds / base_seconds:.2f}× time, {mib / base_mib:.2f}× memory"
            )
        print(line)
    cold = summary(ours, "cold")[0]
    print(f"budget {BUDGET_S:.0f} s for a cold start: {'met' if cold <= BUDGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
