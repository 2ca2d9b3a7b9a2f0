"""The real-server check behind scripts/check_vllm.sh (run it through that script).

Serves a tiny Qwen2-VL (head_dim 32, tests/tiny_models.py) with vLLM's CPU build and runs toy-colors, VQA with
images (the demo items) and planning through CompStudio against it and against the transformers backend on the
same weights. Prints one JSON object of figures and exits non-zero when a check fails:

* ``identity``: the run's manifest names the served ``root`` (the weights' folder), ``max_model_len`` and the
  server's version, bound into the revision;
* ``greedy``: answers equal to the transformers backend's (items compared, equal);
* ``likelihood``: the option chosen by likelihood equal to the transformers backend's (toy-colors choice items,
  VQA items), and the time at concurrency 1 and 8 (prefix caching off);
* ``plain``: ``prompt_style: plain`` goes to /v1/completions: the text items' answers equal the transformers
  backend's plain template;
* ``swap``: other weights served under the same name recompute every item;
* ``failed``: the server down, the run ends ``failed`` (every item an error); the VQA leaderboard shows the model's
  last good run with a note saying its server is unreachable (backend/inference/reading.py), never the failed run;
* ``serve``: ``compstudio serve``'s code (backend/serve) starts two vLLM replicas of the same weights, registers
  them, and a run over toy-colors and VQA kills one replica mid-run: the run finishes with no item lost (every item
  answered, none failed) and the model entry's revision is the weights' digest; ``serve --stop`` leaves no process.
  ``--skip-serve`` leaves it out; ``--serve-only`` runs only it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
SERVED = "tiny-qwen2vl"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VllmServer:
    def __init__(self, python: str, port: int, log: Path) -> None:
        self.python, self.port, self.log = python, port, log
        self.process: subprocess.Popen | None = None

    def start(self, weights: Path, timeout_s: float = 1800) -> float:
        command = [
            self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(weights),
            "--served-model-name", SERVED, "--dtype", "float32", "--max-model-len", "2048",
            "--host", "127.0.0.1", "--port", str(self.port), "--no-enable-prefix-caching",
        ]  # fmt: skip
        env = os.environ | {"VLLM_CPU_KVCACHE_SPACE": "2", "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
        began = time.perf_counter()
        handle = self.log.open("a")
        self.process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
        import httpx

        while time.perf_counter() - began < timeout_s:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited ({self.process.returncode}); see {self.log}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    return round(time.perf_counter() - began, 1)
            except httpx.HTTPError:
                pass
            time.sleep(2)
        raise RuntimeError(f"vLLM not ready after {timeout_s} s; see {self.log}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None


def specs(base_url: str, weights: Path) -> list[Any]:
    from backend.inference.registry import ModelSpec

    common = dict(max_new_tokens=6, frames_per_video=4, max_image_side=64)
    served = {"base_url": base_url, "timeout_s": 120, "retries": 1}
    local = dict(
        backend="transformers", path=str(weights), dtype="float32", device="cpu", options={"native_video": False}
    )
    return [
        ModelSpec("served", "openai", SERVED, concurrency=4, options=served, **common),
        ModelSpec("served-lik-c1", "openai", SERVED, concurrency=1, scoring="likelihood", options=served, **common),
        ModelSpec("served-lik-c8", "openai", SERVED, concurrency=8, scoring="likelihood", options=served, **common),
        ModelSpec("served-plain", "openai", SERVED, concurrency=4, prompt_style="plain", options=served, **common),
        ModelSpec("local", **local, **common),
        ModelSpec("local-lik", scoring="likelihood", **local, **common),
        ModelSpec("local-plain", prompt_style="plain", **local, **common),
    ]


def answers(ctx: Any, model: str, benchmark: str) -> dict[str, Any]:
    rows = ctx.database.query(
        "SELECT item_id, status, raw_output FROM predictions WHERE model = ? AND benchmark = ?", (model, benchmark)
    )
    return {
        r["item_id"]: (r["raw_output"] or "").replace("\ufffd", "").strip() if r["status"] != "error" else None
        for r in rows
    }


def agreement(ctx: Any, a: str, b: str, benchmark: str) -> dict[str, int]:
    left, right = answers(ctx, a, benchmark), answers(ctx, b, benchmark)
    both = [i for i in left if i in right and left[i] is not None and right[i] is not None]
    return {"items": len(both), "equal": sum(left[i] == right[i] for i in both)}


def run(ctx: Any, benchmark: str, model: str, **kw: Any) -> Any:
    from backend.inference.runner import run_eval

    began = time.perf_counter()
    summary = run_eval(ctx, benchmark, model, **kw)
    summary.seconds = round(time.perf_counter() - began, 2)
    return summary


def check(args: argparse.Namespace) -> dict[str, Any]:
    from tiny_models import tiny_qwen2vl

    from backend.context import build_context
    from backend.inference.registry import write_models
    from backend.settings import Settings
    from backend.vilpact.demo import ensure_vilpact_demo
    from backend.vqa.demo import ensure_vqa_demo

    work = Path(tempfile.mkdtemp(prefix="check-vllm-"))
    weights_a, weights_b = tiny_qwen2vl(32, work / "weights-a", 0), tiny_qwen2vl(32, work / "weights-b", 1)
    ctx = build_context(Settings(data_dir=work / "data", demo_content=False))
    ensure_vqa_demo(ctx)
    ensure_vilpact_demo(ctx)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    write_models(ctx.settings, specs(base_url, weights_a))
    server = VllmServer(args.vllm_python, port, work / "vllm.log")
    out: dict[str, Any] = {"work": str(work)}
    try:
        out["ready_s"] = server.start(weights_a)
        first = run(ctx, "toy-colors", "served")
        served = first.manifest["model"]["served"]
        out["identity"] = {
            "revision": first.manifest["model"]["revision"],
            "root_is_weights": served.get("root") == str(weights_a),
            "max_model_len": served.get("max_model_len"),
            "server_version": served.get("server_version"),
            "warnings": first.warnings,
        }
        run(ctx, "toy-colors", "local")
        for model in ("served", "local"):
            run(ctx, "mmcomposition", model)
            run(ctx, "vilpact-planning", model, limit=args.planning_items, load_options={"mode": "text"})
        out["greedy"] = {
            b: agreement(ctx, "served", "local", b) for b in ("toy-colors", "mmcomposition", "vilpact-planning")
        }
        out["greedy"]["errors_served"] = first.errors
        c1 = run(ctx, "toy-colors", "served-lik-c1")
        c8 = run(ctx, "toy-colors", "served-lik-c8")
        run(ctx, "toy-colors", "local-lik")
        for model in ("served-lik-c8", "local-lik"):
            run(ctx, "mmcomposition", model)
        out["likelihood"] = {
            "toy-colors": agreement(ctx, "served-lik-c8", "local-lik", "toy-colors"),
            "mmcomposition": agreement(ctx, "served-lik-c8", "local-lik", "mmcomposition"),
            "c1_vs_c8": agreement(ctx, "served-lik-c1", "served-lik-c8", "toy-colors"),
            "seconds_c1": c1.seconds,
            "seconds_c8": c8.seconds,
            "speedup": round(c1.seconds / c8.seconds, 2) if c8.seconds else None,
            "scoring_method": c8.manifest["model"]["scoring_method"],
        }
        run(ctx, "toy-colors", "served-plain")
        run(ctx, "toy-colors", "local-plain")
        out["plain"] = agreement(ctx, "served-plain", "local-plain", "toy-colors")
        server.stop()
        print(json.dumps(out, indent=1), file=sys.stderr, flush=True)  # what is known so far, should the rest fail
        out["swap_ready_s"] = server.start(weights_b)
        swapped = run(ctx, "toy-colors", "served")
        out["swap"] = {
            "items": swapped.items,
            "recomputed": swapped.newly_computed,
            "key_changed": swapped.manifest["key"] != first.manifest["key"],
            "revision": swapped.manifest["model"]["revision"],
        }
        server.stop()
        down = run(ctx, "mmcomposition", "served")
        from backend.accounts import auth
        from backend.vqa.runs import leaderboard

        auth.add_user(ctx.database, "checker", "reviewer", "password123")
        rows = {row["name"]: row for row in leaderboard(ctx, "checker")}
        shown = rows.get("served") or {}
        out["failed"] = {
            "status": down.status,
            "errors": down.errors,
            "items": down.items,
            # the leaderboard shows the model's last good run, with a note saying so (backend/inference/reading.py)
            "shown": "served" in rows,
            "note": shown.get("note"),
            "shown_status": shown.get("status"),
            "shown_errors": shown.get("errors"),
        }
    finally:
        server.stop()
    return out


def check_serve(args: argparse.Namespace) -> dict[str, Any]:
    """Two managed replicas through backend.serve, one killed mid-run (see the module docstring)."""
    import signal

    from tiny_models import tiny_qwen2vl

    from backend.context import build_context
    from backend.serve import processes, service
    from backend.settings import Settings
    from backend.vqa.demo import ensure_vqa_demo

    work = Path(tempfile.mkdtemp(prefix="check-serve-"))
    weights = tiny_qwen2vl(32, work / "weights", 0)
    ctx = build_context(Settings(data_dir=work / "data", demo_content=False))
    ensure_vqa_demo(ctx)
    os.environ.update(VLLM_CPU_KVCACHE_SPACE="2", PYTHONPATH="")  # the engine's venv, not the project's path
    ask = service.Request(
        str(weights),
        engine="vllm",
        name="managed",
        replicas=2,
        python=args.vllm_python,
        max_model_len=2048,
        extra=("--dtype", "float32", "--no-enable-prefix-caching"),
    )
    serving, _, known = service.plan(ctx, ask)
    began = time.perf_counter()
    out: dict[str, Any] = {"work": str(work), "argv": serving.replicas[0].argv}
    spec = service.start(ctx, serving, known, tied=True, timeout_s=1800)
    try:
        out["ready_s"] = round(time.perf_counter() - began, 1)
        out["registered"] = {"base_url": spec.options["base_url"], "revision": spec.options.get("revision")}
        victim = service.read_state(ctx, "managed").replicas[1]
        killed: list[int] = []

        def progress(done: int, total: int) -> None:
            if done >= 4 and not killed:  # mid-run: some answers stored, most still to come
                os.killpg(victim.pgid, signal.SIGKILL)
                killed.append(done)

        from backend.inference.runner import run_eval

        toy = run_eval(ctx, "toy-colors", "managed", progress=progress)
        vqa = run_eval(ctx, "mmcomposition", "managed")
        out["killed_after_items"] = killed[0] if killed else None
        out["toy"] = {"items": toy.items, "answered_now": toy.newly_computed, "errors": toy.errors}
        out["vqa"] = {"items": vqa.items, "answered_now": vqa.newly_computed, "errors": vqa.errors}
        out["serving"] = toy.serving
        out["states"] = [r["state"] for r in service.replica_states(ctx, "managed")]
        out["warnings"] = toy.warnings
    finally:
        pids = [r.pid for r in service.read_state(ctx, "managed").replicas if r.pid]
        out["stop"] = service.stop(ctx, "managed")
        out["left_running"] = [pid for pid in pids if processes.alive(pid)]
    return out


def serve_verdicts(out: dict[str, Any]) -> list[str]:
    problems = []
    for name in ("toy", "vqa"):
        run = out[name]
        if run["errors"] or run["answered_now"] != run["items"]:
            problems.append(f"managed replicas, one killed: {name} lost items: {run}")
    if out["killed_after_items"] is None:
        problems.append("the replica was never killed mid-run")
    if not str(out["registered"]["revision"] or "").startswith("weights:") or out["warnings"]:
        problems.append(f"the served weights are not pinned: {out['registered']}, {out['warnings']}")
    if out["left_running"]:
        problems.append(f"serve --stop left processes: {out['left_running']}")
    return problems


def verdicts(out: dict[str, Any]) -> list[str]:
    problems = []
    if not out["identity"]["root_is_weights"]:
        problems.append("the manifest does not name the served weights' folder")
    for name, counts in out["greedy"].items():
        if isinstance(counts, dict) and counts["equal"] != counts["items"]:
            problems.append(f"greedy answers differ on {name}: {counts}")
    for name in ("toy-colors", "mmcomposition", "c1_vs_c8"):
        counts = out["likelihood"][name]
        if counts["equal"] != counts["items"] or not counts["items"]:
            problems.append(f"likelihood choices differ on {name}: {counts}")
    if out["plain"]["equal"] != out["plain"]["items"] or not out["plain"]["items"]:
        problems.append(f"plain answers differ: {out['plain']}")
    if out["swap"]["recomputed"] != out["swap"]["items"] or not out["swap"]["key_changed"]:
        problems.append(f"the swap did not recompute: {out['swap']}")
    failed = out["failed"]
    if failed["status"] != "failed" or failed["errors"] != failed["items"]:
        problems.append(f"a server that is down did not make a failed run: {failed}")
    last_good = failed["shown"] and failed["shown_errors"] == 0 and "last run" in str(failed["note"] or "")
    if not last_good:
        problems.append(f"the leaderboard does not show the last good run with its note: {failed}")
    speedup = out["likelihood"]["speedup"]
    if speedup is None or speedup < 1.0:  # 8 in flight against 1; the gain is the CPU server's (docs/usage.md)
        problems.append(f"likelihood at concurrency 8 is not faster than at 1: {speedup}x")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm-python", required=True, help="the python of the vllm-cpu venv")
    parser.add_argument("--planning-items", type=int, default=30)
    parser.add_argument("--skip-serve", action="store_true", help="leave out compstudio serve's two-replica check")
    parser.add_argument("--serve-only", action="store_true", help="only compstudio serve's two-replica check")
    args = parser.parse_args()
    out: dict[str, Any] = {} if args.serve_only else check(args)
    problems = [] if args.serve_only else verdicts(out)
    if not args.skip_serve:
        out["serve"] = check_serve(args)
        problems += serve_verdicts(out["serve"])
    out["problems"] = problems
    print(json.dumps(out, indent=1, default=str))
    return 1 if out["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
