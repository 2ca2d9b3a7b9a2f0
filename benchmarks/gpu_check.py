"""A prepared GPU check of every supported vision-language family: batch 8 vs batch 1, one JSON line out.

For each family: load the model through the app's code path (``build_backend`` of a registry entry; on CUDA
bf16 with ``device_map="auto"``), answer the ``toy-colors`` items (one image, two images, video frames, text)
one by one and in batches of 8 (greedy), and report items per second for both, the speed-up, and the share of
items whose batch-8 answer equals the batch-1 answer. A family that fails to load (a gated checkpoint without
``HF_TOKEN``, no network) is reported with its error; families not started within ``--budget-s`` are skipped,
so the line always comes out (target: under 5 minutes on one GPU).

    .venv/bin/python benchmarks/gpu_check.py                      # on a CUDA machine
    .venv/bin/python benchmarks/gpu_check.py --cpu                # here: tiny local models, CPU, float32
    .venv/bin/python benchmarks/gpu_check.py --models gemma3,qwen2_5_vl=/models/qwen25-3b --source hub

``--source random`` (benchmarks/gpu_random.py) needs no Hub: each family's real architecture from a config written
in the project (benchmarks/gpu_families.py: Qwen2-VL-2B, Qwen2.5-VL-7B, LLaVA-OneVision-0.5B, SmolVLM2-256M) with
random weights and a locally built processor, exactly ``--new-tokens`` tokens per answer, CompStudio at batch 1, 8,
32 and auto (and the static KV cache) against the plain loop, with peak memory, agreement in float32 and bf16 and
the memory-bandwidth floor; with ``--cpu`` (or no GPU) the same at small dimensions:

    .venv/bin/python benchmarks/gpu_check.py --source random                  # on the GPU machine
    .venv/bin/python benchmarks/gpu_check.py --source random --cpu --items 8   # here

Models: ``--source hub`` uses the small Hub checkpoints of :data:`HUB` (the default when the Hub is reachable
and ``HF_HUB_OFFLINE`` is unset), ``--source tiny`` the tiny random models of tests/tiny_models.py,
built locally in seconds (the default offline and with ``--cpu``). ``--models`` picks
families and may give each a path (a Hub id or a local folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

#: family -> a small real checkpoint on the Hub (Gemma 3 is gated: accept its licence, set HF_TOKEN)
HUB = {
    "llava": "llava-hf/llava-interleave-qwen-0.5b-hf",
    "qwen2vl": "Qwen/Qwen2-VL-2B-Instruct",
    "qwen2_5_vl": "Qwen/Qwen2.5-VL-3B-Instruct",
    "llava_onevision": "llava-hf/llava-onevision-qwen2-0.5b-ov-hf",
    "idefics3": "HuggingFaceTB/SmolVLM-256M-Instruct",
    "smolvlm": "HuggingFaceTB/SmolVLM2-256M-Video-Instruct",
    "gemma3": "google/gemma-3-4b-it",
}
NATIVE_VIDEO = {"qwen2vl", "qwen2_5_vl", "llava_onevision"}


def _hub_reachable() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "0") not in {"", "0"}:
        return False
    import urllib.request

    try:
        urllib.request.urlopen("https://huggingface.co/api/models?limit=1", timeout=5).close()
        return True
    except OSError:
        return False


def _parse_models(value: str) -> dict[str, str | None]:
    chosen: dict[str, str | None] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        family, _, path = entry.partition("=")
        if family not in HUB:
            raise SystemExit(f"unknown family {family!r}; valid: {', '.join(HUB)}")
        chosen[family] = path or None
    return chosen


def _spec(family: str, path: str | None, source: str, cpu: bool) -> Any:
    from backend.inference.registry import ModelSpec

    if path is None and source == "tiny":
        from tiny_models import tiny_spec

        tiny = tiny_spec(family)
        path = tiny.path
    options = {"native_video": True} if family in NATIVE_VIDEO else {}
    return ModelSpec(
        name=f"check-{family}".replace("_", "-"),
        backend="transformers",
        path=path or HUB[family],
        dtype="float32" if cpu else "auto",  # auto: bf16 on CUDA
        device="cpu" if cpu else "auto",  # auto: device_map="auto" on CUDA
        max_new_tokens=16,
        frames_per_video=4,
        max_image_side=448,
        options=options,
    )


def _timed(backend: Any, requests: list, batch: int, params: Any) -> tuple[list[str], float]:
    answers: list[str] = []
    began = time.perf_counter()
    for start in range(0, len(requests), batch):
        answers.extend(backend.generate(requests[start : start + batch], params))
    return answers, time.perf_counter() - began


def check_family(spec: Any, requests: list, params: Any) -> dict[str, Any]:
    """Load one model, answer ``requests`` at batch 1 and batch 8, and compare."""
    import torch

    from backend.inference.registry import build_backend

    began = time.perf_counter()
    backend = build_backend(spec)
    result: dict[str, Any] = {"path": spec.path, "load_s": round(time.perf_counter() - began, 1)}
    try:
        backend.generate(requests[:8], params)  # warm-up: kernels, caches
        one, one_s = _timed(backend, requests, 1, params)
        eight, eight_s = _timed(backend, requests, 8, params)
        same = [a == b for a, b in zip(one, eight, strict=True)]
        result.update(
            batch1_items_per_s=round(len(requests) / one_s, 2),
            batch8_items_per_s=round(len(requests) / eight_s, 2),
            speedup=round(one_s / eight_s, 2),
            agreement=round(sum(same) / len(same), 3),
            disagreeing_items=[i for i, ok in enumerate(same) if not ok],
            sample_answer=one[0][:80],
        )
        if torch.cuda.is_available() and str(backend.model.device).startswith("cuda"):
            result["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    finally:
        backend.unload()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(HUB), help="families, each optionally =PATH (Hub id or folder)")
    parser.add_argument("--source", choices=("auto", "hub", "tiny", "random"), default="auto")
    parser.add_argument(
        "--families", default="qwen2vl-2b,qwen25vl-7b,llava-ov-0.5b,smolvlm-256m", help="--source random"
    )
    parser.add_argument("--new-tokens", type=int, default=16, help="--source random: tokens per answer, exactly")
    parser.add_argument("--small", action="store_true", help="--source random: small dimensions on the GPU too")
    parser.add_argument("--bandwidth-gbs", type=float, default=None, help="--source random: memory bandwidth (GB/s)")
    parser.add_argument("--out", default=None, help="--source random: also write the JSON line to this file")
    parser.add_argument("--cpu", action="store_true", help="run on CPU in float32 (with tiny models unless --source)")
    parser.add_argument("--items", type=int, default=32, help="toy-colors items per pass")
    parser.add_argument("--budget-s", type=float, default=270.0, help="start no family after this many seconds")
    args = parser.parse_args(argv)
    if args.source == "random":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from gpu_random import run

        return run(args)
    if args.source == "auto" and args.cpu:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    source = args.source if args.source != "auto" else ("tiny" if args.cpu or not _hub_reachable() else "hub")
    if source == "tiny":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    import transformers

    from backend.inference.request import GenerationParams
    from backend.inference.toy import TOY

    if args.cpu:
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    began = time.perf_counter()
    requests = [TOY.build_request(item) for item in TOY.load_items(None, count=args.items)]
    params = GenerationParams(max_new_tokens=16)
    cuda = torch.cuda.is_available() and not args.cpu
    report: dict[str, Any] = {
        "check": "gpu_check",
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "dtype": "bfloat16" if cuda else "float32",
        "source": source,
        "items": len(requests),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "families": {},
    }
    for family, path in _parse_models(args.models).items():
        if time.perf_counter() - began > args.budget_s:
            report["families"][family] = {"skipped": f"time budget of {args.budget_s:g} s spent"}
            continue
        try:
            report["families"][family] = check_family(_spec(family, path, source, args.cpu), requests, params)
        except Exception as exc:  # one family's failure (gated, no network, out of memory) must not hide the others
            report["families"][family] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
    report["total_s"] = round(time.perf_counter() - began, 1)
    print(json.dumps(report), flush=True)
    return report


if __name__ == "__main__":
    main()
