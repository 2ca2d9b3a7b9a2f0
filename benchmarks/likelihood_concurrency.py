"""Likelihood scoring on the openai backend honours ``concurrency`` (issue 24): ``toy-colors`` with
``scoring: likelihood`` against the fake vLLM-dialect server (tests/fake_openai_server.py) answering each request in
``--delay`` seconds, at concurrency 1 (baseline) and 8, in one process. Every choice item costs one request for its
prompt's token count and one per option; the 6 free-text items are generated. Target: at least 4x.

    .venv/bin/python benchmarks/likelihood_concurrency.py [--delay 0.05]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_openai_server import FakeOpenAIServer  # noqa: E402

from backend.context import build_context  # noqa: E402
from backend.inference.registry import ModelSpec, write_models  # noqa: E402
from backend.inference.runner import run_eval  # noqa: E402
from backend.settings import Settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the fake server takes per request")
    args = parser.parse_args()
    ctx = build_context(Settings(data_dir=Path(tempfile.mkdtemp()) / "data", demo_content=False))
    seconds = {}
    with FakeOpenAIServer(delay_s=args.delay) as server:
        options = {"base_url": server.base_url, "timeout_s": 30}
        specs = [
            ModelSpec(f"c{c}", "openai", server.model, concurrency=c, scoring="likelihood", options=options)
            for c in (1, 8)
        ]
        write_models(ctx.settings, specs)
        for spec in specs:
            server.reset()
            began = time.perf_counter()
            summary = run_eval(ctx, "toy-colors", spec.name)
            seconds[spec.name] = time.perf_counter() - began
            print(
                f"{spec.name}: {summary.items} items, {server.calls} requests, {seconds[spec.name]:.2f} s, errors {summary.errors}"
            )
    print(f"likelihood concurrency 8 vs 1: {seconds['c1'] / seconds['c8']:.1f}x faster (target >= 4x)")


if __name__ == "__main__":
    main()
