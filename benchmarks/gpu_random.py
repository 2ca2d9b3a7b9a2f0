"""``benchmarks/gpu_check.py --source random``: CompStudio's transformers backend against the plain loop on real
architectures with random weights (benchmarks/gpu_families.py), with no Hub.

For each family: build and save it (bf16 on CUDA, float32 on CPU), load it through the project's path
(``build_backend(ModelSpec(path=...))``, dtype and device ``auto``), then on image items (448x336 pictures and a
question) and text items (a planning-style question), each answered with exactly ``--new-tokens`` tokens:

* the plain loop, as lmms-eval runs a model: chat template, processor, ``generate``, one item at a time, on the
  same loaded weights;
* CompStudio at batch 1, 8, 32 and ``auto`` (the runner's doubling search with its out-of-memory catch,
  :mod:`backend.inference.batching`), and with the static KV cache at batch 1 and 8;
* items/s, the ratio to the plain loop, peak memory, and the memory-bandwidth floor (the weights a decoding step
  reads over the device's bandwidth: the most items/s a batch could reach) with the share of it reached;
* agreement of batch answers with batch-1 answers in the timing dtype, and in the other one of float32 / bf16.

Every pass stops at its own deadline and every family checks the time budget first; a watchdog prints what is
there if a call hangs: one JSON line always comes out.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

BATCHES = (1, 8, 32)
H200_BYTES_PER_S = 4.8e12  # HBM3e, the spec sheet's figure


def image_items(count: int) -> list[list[dict]]:
    """``count`` requests of one 448x336 picture (coloured shapes, each different) and a choice question."""
    from PIL import Image, ImageDraw

    from backend.inference.request import image, text

    colours = ["red", "green", "blue", "yellow", "black", "white", "orange", "purple"]
    out = []
    for i in range(count):
        picture = Image.new("RGB", (448, 336), (20 * (i % 12), 40, 90))
        draw = ImageDraw.Draw(picture)
        draw.rectangle((40 + 7 * i % 200, 30, 240 + 5 * i % 180, 250), fill=colours[i % 8])
        draw.ellipse((260, 60 + 3 * i % 100, 420, 220), fill=colours[(i + 3) % 8])
        question = f"What colour is the square? Options: A. {colours[i % 8]} B. {colours[(i + 1) % 8]} C. green D. blue"
        out.append(
            [image(picture), text(question + "\nAnswer with the option's letter from the given choices directly.")]
        )
    return out


def text_items(count: int) -> list[list[dict]]:
    from backend.inference.request import text

    steps = ["open the fridge", "take a cup", "pour water", "sit down", "turn on the light", "open a book"]
    return [
        [
            text(
                f"A person did: {', '.join(steps[(i + k) % 6] for k in range(3 + i % 3))}. Their intent: make tea "
                f"(item {i}). What will the person do next? Options: A. {steps[i % 6]} B. {steps[(i + 2) % 6]} "
                f"C. {steps[(i + 4) % 6]} D. sleep. Answer with the option's letter from the given choices directly."
            )
        ]
        for i in range(count)
    ]


def plain_loop(backend: Any) -> Callable[[list], list[str]]:
    """lmms-eval's way, on the backend's loaded model and processor: per item, chat template -> processor ->
    ``generate`` -> decode (no CompStudio code on the path)."""
    import torch

    model, processor, dtype = backend.model, backend.processor, backend.dtype

    def answer(requests: list) -> list[str]:
        out = []
        for request in requests:
            content = [
                {"type": "text", "text": p["text"]} if p["type"] == "text" else {"type": "image"} for p in request
            ]
            images = [p["image"] for p in request if p["type"] == "image"]
            prompt = processor.apply_chat_template(
                [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
            )
            inputs = processor(text=[prompt], images=[images] if images else None, return_tensors="pt").to(model.device)
            inputs = {k: v.to(dtype) if torch.is_floating_point(v) else v for k, v in inputs.items()}
            with torch.inference_mode():
                generated = model.generate(**inputs, do_sample=False)
            new = generated[:, inputs["input_ids"].shape[1] :]
            out.append(processor.batch_decode(new, skip_special_tokens=True)[0].strip())
        return out

    return answer


def compstudio(backend: Any, batch: int, params: Any) -> Callable[[list], list[str]]:
    def answer(requests: list) -> list[str]:
        out: list[str] = []
        for start in range(0, len(requests), batch):
            out.extend(backend.generate(requests[start : start + batch], params))
        return out

    return answer


def compstudio_auto(backend: Any, params: Any, found: dict) -> Callable[[list], list[str]]:
    """Batch ``auto`` as a run does it: the doubling search, a batch that runs out of memory asked again at half."""
    from backend.inference.batching import AUTO_CAP, BatchSizer, is_out_of_memory

    def answer(requests: list) -> list[str]:
        sizer = BatchSizer(found.get("size", 1), auto=True, cap=min(AUTO_CAP, 256), ceiling=found.get("ceiling"))
        out: list[str] = []
        while len(out) < len(requests):
            size = sizer.next(len(requests) - len(out))
            try:
                out.extend(backend.generate(requests[len(out) : len(out) + size], params))
            except Exception as exc:
                if not is_out_of_memory(exc) or size == 1:
                    raise
                sizer.out_of_memory(size)
                continue
            sizer.answered(size)
        found.update(size=sizer.size, ceiling=sizer.ceiling, used=sizer.used)
        return out

    return answer


def timed(fn: Callable[[list], list[str]], requests: list, deadline: float, cuda: bool, chunk: int) -> dict[str, Any]:
    """Items/s of ``fn`` over ``requests`` in chunks of ``chunk`` items, stopping at ``deadline``; peak memory."""
    import torch

    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    answers: list[str] = []
    began = time.perf_counter()
    while len(answers) < len(requests) and time.perf_counter() < deadline:
        answers += fn(requests[len(answers) : len(answers) + chunk])
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    out: dict[str, Any] = {"items": len(answers), "seconds": round(seconds, 3)}
    out["items_per_s"] = round(len(answers) / seconds, 3) if seconds else None
    if cuda:
        out["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    out["answers"] = answers
    return out


def agreement(base: list[str], other: list[str]) -> float | None:
    pairs = list(zip(base, other, strict=False))
    return round(sum(a == b for a, b in pairs) / len(pairs), 3) if pairs else None


def cpu_bandwidth() -> float:
    """Bytes per second a large copy reaches here (the CPU mode's bandwidth floor)."""
    import numpy as np

    data = np.ones(64 * 2**20 // 8)
    best = 0.0
    for _ in range(3):
        began = time.perf_counter()
        data.copy()
        best = max(best, 2 * data.nbytes / (time.perf_counter() - began))  # read and write
    return best


def check_family(family: str, args: Any, work: Path, end_by: float, cuda: bool, bandwidth: float) -> dict[str, Any]:
    import gpu_families
    import torch

    from backend.inference.registry import ModelSpec, build_backend
    from backend.inference.request import GenerationParams

    dtype = torch.bfloat16 if cuda else torch.float32
    folder = work / family
    began = time.perf_counter()
    info = gpu_families.build(
        family,
        folder,
        small=not cuda or args.small,
        device="cuda" if cuda else "cpu",
        dtype=dtype,
        new_tokens=args.new_tokens,
    )
    result: dict[str, Any] = {**info, "build_s": round(time.perf_counter() - began, 1)}
    device = "auto" if cuda else "cpu"  # auto: bf16 on the one GPU (.to, no dispatch hooks); float32 on CPU
    spec = ModelSpec(
        family, "transformers", str(folder), device=device, max_image_side=448, max_new_tokens=args.new_tokens
    )
    params = GenerationParams(max_new_tokens=args.new_tokens)
    began = time.perf_counter()
    backend = build_backend(spec)
    result["load_s"] = round(time.perf_counter() - began, 1)
    result["placement"] = backend.usage_report()["placement"]
    step_s = info["decode_bytes"] / bandwidth  # one decoding step reads the language model's weights once
    sets = {"image": image_items(args.items), "text": text_items(args.items)}
    backend.generate(sets["text"][:2] + sets["image"][:2], params)  # warm-up: kernels, caches
    found: dict[str, Any] = {}
    static = build_backend(ModelSpec(**{**spec.as_dict(), "options": {"static_cache": True}}))
    for name, requests in sets.items():
        passes: dict[str, Any] = {}
        share = max(5.0, (end_by - time.perf_counter()) / (2 * 7))  # seconds a pass may take, the budget shared
        runs = [("plain_loop_b1", plain_loop(backend), 1)]
        runs += [(f"compstudio_b{b}", compstudio(backend, b, params), b) for b in BATCHES]
        runs += [("compstudio_auto", compstudio_auto(backend, params, found), len(requests))]
        runs += [(f"compstudio_static_b{b}", compstudio(static, b, params), b) for b in (1, 8)]
        for label, fn, chunk in runs:
            if time.perf_counter() > end_by:
                passes[label] = {"skipped": "time budget spent"}
                continue
            try:
                passes[label] = timed(fn, requests, time.perf_counter() + share, cuda, chunk)
            except Exception as exc:
                passes[label] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
        plain = passes["plain_loop_b1"].get("items_per_s")
        base = passes.get("compstudio_b1", {}).get("answers", [])
        for label, figures in passes.items():
            rate = figures.get("items_per_s")
            batch = found.get("used", 1) if label == "compstudio_auto" else int(label.rsplit("_b", 1)[-1] or 1)
            floor = batch / (args.new_tokens * step_s)
            if rate:
                figures["vs_plain_loop"] = round(rate / plain, 2) if plain else None
                figures["floor_items_per_s"] = round(floor, 1)
                figures["share_of_floor"] = round(rate / floor, 4)
            if label != "compstudio_b1" and "answers" in figures:
                figures["agrees_with_b1"] = agreement(base, figures["answers"])
        for figures in passes.values():
            figures.pop("answers", None)
        if found:
            passes["compstudio_auto"]["batch_found"] = found.get("used")
        result[name] = passes
    static.unload()
    result["engine"] = backend.usage_report()
    backend.unload()
    result["other_dtype_agreement"] = other_dtype(spec, sets, params, cuda, end_by)
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return result


def other_dtype(spec: Any, sets: dict, params: Any, cuda: bool, end_by: float) -> dict[str, Any]:
    """Batch 8 against batch 1 in the dtype not timed (float32 on a GPU: a padding fault shows there; bf16 on CPU)."""
    from backend.inference.registry import ModelSpec, build_backend

    if time.perf_counter() > end_by:
        return {"skipped": "time budget spent"}
    dtype = "float32" if cuda else "bfloat16"
    backend = build_backend(ModelSpec(**{**spec.as_dict(), "dtype": dtype}))
    try:
        out: dict[str, Any] = {"dtype": dtype}
        for name, requests in sets.items():
            subset = requests[:8]
            one = [backend.generate([r], params)[0] for r in subset]
            out[name] = agreement(one, backend.generate(subset, params))
        return out
    finally:
        backend.unload()


def run(args: Any) -> dict[str, Any]:
    """Every family of ``args.families``; one JSON line on stdout (also on a failure or when time runs out)."""
    import torch
    import transformers

    cuda = torch.cuda.is_available() and not args.cpu
    began = time.perf_counter()
    end_by = began + args.budget_s
    if not cuda:
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    bandwidth = args.bandwidth_gbs * 1e9 if args.bandwidth_gbs else (H200_BYTES_PER_S if cuda else cpu_bandwidth())
    report: dict[str, Any] = {
        "check": "gpu_check --source random",
        "device": torch.cuda.get_device_name(0) if cuda else "cpu (small dimensions)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "new_tokens": args.new_tokens,
        "items_per_set": args.items,
        "bandwidth_gb_per_s": round(bandwidth / 1e9, 1),
        "families": {},
    }
    printed = threading.Event()

    def emit(reason: str = "") -> None:
        if not printed.is_set():
            printed.set()
            report["total_s"] = round(time.perf_counter() - began, 1)
            if reason:
                report["stopped"] = reason
            line = json.dumps(report, default=str)
            print(line, flush=True)
            if args.out:
                Path(args.out).write_text(line + "\n")

    watchdog = threading.Timer(args.budget_s + 120, lambda: (emit("watchdog: a call hung"), os._exit(3)))
    watchdog.daemon = True
    watchdog.start()
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as work:
        for family in args.families.split(","):
            if time.perf_counter() > end_by:
                report["families"][family] = {"skipped": f"time budget of {args.budget_s:g} s spent"}
                continue
            try:
                report["families"][family] = check_family(family, args, Path(work), end_by, cuda, bandwidth)
            except Exception as exc:  # one family's failure must not hide the others
                report["families"][family] = {
                    "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}",
                    "where": traceback.format_exc().splitlines()[-3:],
                }
    watchdog.cancel()
    emit()
    return report
