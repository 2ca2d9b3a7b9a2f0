"""What a new Gradio session costs the server: Gradio's ``SessionState`` against ours (``LeanSessionState``).

Every page load and every script session on Gradio's routes makes one, inside ``/gradio_api/queue/join``, on the
event loop. Gradio's computes the config of every block at once; ours computes a block's when it is read
(components/idle_sessions.py). Builds the app on the demo content in this process and times and weighs both.

Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/session_start.py [--sessions 50]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gradio.state_holder import SessionState  # noqa: E402

import app  # noqa: E402
from backend.settings import Settings  # noqa: E402
from components.idle_sessions import LeanSessionState  # noqa: E402


def measure(kind: type, demo: object, sessions: int) -> tuple[float, float]:
    """Median ms to make one session, and MB it holds (tracemalloc, over ``sessions`` kept alive)."""
    times = []
    for _ in range(sessions):
        start = time.perf_counter()
        kind(demo)
        times.append((time.perf_counter() - start) * 1000)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [kind(demo) for _ in range(sessions)]
    held = (tracemalloc.get_traced_memory()[0] - before) / sessions / 2**20
    tracemalloc.stop()
    del kept
    return statistics.median(times), held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo, _ = app.build_app(Settings(data_dir=Path(tmp) / "data", demo_content=True))
        blocks = len(demo.blocks)
        base_ms, base_mb = measure(SessionState, demo, args.sessions)
        ours_ms, ours_mb = measure(LeanSessionState, demo, args.sessions)
    print(f"new session, {blocks} blocks, {args.sessions} sessions each")
    print("| session | ms to make (median) | MB held each |")
    print("|---|---|---|")
    print(f"| baseline (Gradio's SessionState) | {base_ms:.1f} | {base_mb:.3f} |")
    print(f"| ours (LeanSessionState) | {ours_ms:.2f} | {ours_mb:.3f} |")
    print(f"ratio: {base_ms / ours_ms:.0f}x faster, {base_mb / max(ours_mb, 1e-9):.0f}x less memory")


if __name__ == "__main__":
    main()
