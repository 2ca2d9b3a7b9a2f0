"""Inference throughput, each case against its baseline in the same process (CPU only here).

1. Tiny random LLaVA and Qwen2-VL (tests/tiny_models.py) on ``toy-colors``: items per second at batch 1
   (baseline) vs batch 8. Target: batch 8 at least 2x faster.
2. The OpenAI-compatible backend against a fake server on 127.0.0.1 answering in 100 ms: sequential
   (concurrency 1, baseline) vs 8 in flight. Target: at least 5x.
3. A cached re-run through the prediction store: first run (tiny LLaVA, batch 8, up to 32 new tokens, model
   load included) vs the same run again (no model call, nothing loaded). Target: over 100x faster.

    .venv/bin/python benchmarks/inference.py [--items 48] [--threads 1]

Torch runs on ``--threads`` CPU threads (default 1: the tiny models are fastest single-threaded on a
shared machine). Figures depend on machine load; run it when the machine is quiet.
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

from backend.context import build_context  # noqa: E402
from backend.inference.registry import ModelSpec, build_backend, write_models  # noqa: E402
from backend.inference.request import GenerationParams  # noqa: E402
from backend.inference.runner import run_eval  # noqa: E402
from backend.inference.toy import TOY  # noqa: E402
from backend.settings import Settings  # noqa: E402

PARAMS = GenerationParams(max_new_tokens=8)


def _rate(backend, requests, batch: int) -> float:
    began = time.perf_counter()
    for start in range(0, len(requests), batch):
        backend.generate(requests[start : start + batch], PARAMS)
    return len(requests) / (time.perf_counter() - began)


def _line(label: str, baseline: float, ours: float, unit: str, target: float) -> float:
    ratio = ours / baseline
    verdict = "meets" if ratio >= target else "MISSES"
    print(
        f"{label:<44} baseline {baseline:9.2f} {unit}   ours {ours:9.2f} {unit}   ratio {ratio:7.1f}x "
        f"({verdict} target {target:g}x)"
    )
    return ratio


def tiny_models(count: int) -> None:
    from tiny_models import tiny_spec

    bench = TOY
    requests = [bench.build_request(item) for item in bench.load_items(None, count=count)]
    for kind in ("llava", "qwen2vl"):
        backend = build_backend(tiny_spec(kind))
        backend.generate(requests[:8], PARAMS)  # warm-up
        one, eight = _rate(backend, requests, 1), _rate(backend, requests, 8)
        _line(f"tiny {kind}: items/s, batch 1 vs batch 8", one, eight, "it/s", 2)
        backend.unload()


def fake_server(count: int) -> None:
    from fake_openai_server import FakeOpenAIServer

    from backend.inference.request import text

    requests = [[text(f"Question {i}: what colour?")] for i in range(count)]
    with FakeOpenAIServer(delay_s=0.1) as server:
        rates = []
        for concurrency in (1, 8):
            spec = ModelSpec(
                "fake", "openai", server.model, concurrency=concurrency, options={"base_url": server.base_url}
            )
            backend = build_backend(spec)
            began = time.perf_counter()
            backend.generate_each(requests, PARAMS)
            rates.append(count / (time.perf_counter() - began))
            backend.unload()
        _line("fake 100 ms server: items/s, 1 vs 8 in flight", rates[0], rates[1], "it/s", 5)


def cached_rerun(count: int) -> None:
    from tiny_models import tiny_spec

    with tempfile.TemporaryDirectory() as folder:
        ctx = build_context(Settings(data_dir=Path(folder), demo_content=False))
        write_models(ctx.settings, [tiny_spec("llava", name="tiny-llava", batch_size=8, max_new_tokens=32)])
        first = time.perf_counter()
        run_eval(ctx, "toy-colors", "tiny-llava", load_options={"count": count})
        first = time.perf_counter() - first
        again = time.perf_counter()
        summary = run_eval(ctx, "toy-colors", "tiny-llava", load_options={"count": count})
        again = time.perf_counter() - again
        assert summary.newly_computed == 0
        _line(f"store: seconds for {count} items, first vs re-run", 1 / first, 1 / again, "runs/s", 100)
        print(f"{'':<44} (first run {first:.2f} s incl. model load, re-run {again * 1000:.1f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    print(f"CPU only, torch threads {args.threads}, {args.items} items, load average {os.getloadavg()[0]:.1f}")
    tiny_models(args.items)
    fake_server(args.items)
    cached_rerun(args.items)


if __name__ == "__main__":
    main()
