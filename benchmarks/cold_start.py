"""Start-up time of ``python app.py`` on the demo content, CPU only: cold (empty data folder) vs warm.

Issue 8 asks a fresh Space to answer within 60 s. Cold: a new, empty data folder, so migrations, demo
videos and accounts are created first. Warm (the baseline): the same folder started again. Each start is a
separate process timed until ``GET /`` answers 200.

    .venv/bin/python benchmarks/cold_start.py [--runs 2]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e_helpers import free_port, start_app_process, wait_http_ok  # noqa: E402

BUDGET_S = 60.0


def start_once(data_dir: Path) -> float:
    port = free_port()
    env = {"CUDA_VISIBLE_DEVICES": "", "COMPSTUDIO_DEMO_CONTENT": "true"}
    process = start_app_process(data_dir, port, env=env)
    try:
        return wait_http_ok(f"http://127.0.0.1:{port}/", timeout=300)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    cold, warm = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="compstudio-cold-") as tmp:
            data_dir = Path(tmp) / "data"
            cold.append(start_once(data_dir))
            warm.append(start_once(data_dir))
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"cold start (empty data folder): median {c:.1f} s over {args.runs} runs {[round(x, 1) for x in cold]}")
    print(f"warm start (baseline):          median {w:.1f} s {[round(x, 1) for x in warm]}")
    print(f"ratio cold/warm: {c / w:.2f}; budget {BUDGET_S:.0f} s: {'met' if c <= BUDGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
