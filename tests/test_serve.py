"""``compstudio serve``: the engines' command lines and the flags each model needs, the weights' identity, and the
process management, with tests/fake_openai_server.py started as the engine (``--engine command``): replicas
started, registered, used by a run, listed with their state and stopped; none left behind when the serving
command is killed with SIGKILL or stopped with Ctrl+C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from backend.cli import main
from backend.errors import InferenceError, NotFound
from backend.inference.registry import get_spec
from backend.inference.runner import run_eval
from backend.serve import processes, service
from backend.serve.engines import ENGINES, Launch, model_needs

FAKE = f"{sys.executable} {ROOT / 'tests' / 'fake_openai_server.py'} --port {{port}} --model {{name}}"
QWEN2VL_CONFIG = {"model_type": "qwen2_vl", "vision_config": {}, "max_position_embeddings": 32768 * 4}


@pytest.fixture
def weights(tmp_path) -> Path:
    folder = tmp_path / "tiny-served"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": 2048}))
    return folder


def test_vllm_flags_follow_the_model_and_extra_flags_pass_through():
    launch = Launch(
        "/w/qwen", "qwen", 8001, needs=model_needs(QWEN2VL_CONFIG), revision="c" * 40, extra=("--seed", "1")
    )
    argv = ENGINES["vllm"].argv(launch)
    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert argv[argv.index("--max-model-len") + 1] == "32768"
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 16, "video": 1}
    assert "--enable-prefix-caching" in argv and argv[argv.index("--revision") + 1] == "c" * 40
    assert argv[-2:] == ["--seed", "1"] and argv[argv.index("--served-model-name") + 1] == "qwen"
    text_only = ENGINES["vllm"].argv(Launch("/w/lm", "lm", 8002, needs=model_needs({"model_type": "llama"})))
    assert "--limit-mm-per-prompt" not in text_only and "--max-model-len" not in text_only
    sglang = ENGINES["sglang"].argv(Launch("/w/qwen", "qwen", 8003, tp=2, needs=model_needs(QWEN2VL_CONFIG)))
    assert sglang[1:3] == ["-m", "sglang.launch_server"] and sglang[sglang.index("--tp-size") + 1] == "2"
    assert sglang[sglang.index("--context-length") + 1] == "32768"


def test_the_weights_identity_changes_when_new_weights_are_copied_into_the_folder(weights):
    before, engine_revision = service.weights_identity(str(weights))
    assert before.startswith("weights:") and engine_revision is None
    assert service.weights_identity(str(weights))[0] == before
    (weights / "model.safetensors").write_bytes(b"\0" * 65)  # new weights, same folder, same served name
    assert service.weights_identity(str(weights))[0] != before


def _serve_args(settings, weights, *extra: str) -> list[str]:
    return [
        "serve",
        str(weights),
        "--engine",
        "command",
        "--command",
        FAKE,
        "--data-dir",
        str(settings.data_dir),
        *extra,
    ]


def test_serve_registers_every_replica_a_run_uses_them_and_stop_ends_them(settings, ctx, weights, capsys):
    assert main(_serve_args(settings, weights, "--replicas", "2", "--detach", "--ready-timeout", "60")) == 0
    ready = json.loads(capsys.readouterr().out)
    try:
        spec = get_spec(ctx, "tiny-served")
        urls = [r["url"] for r in ready["replicas"]]
        assert spec.backend == "openai" and spec.options["base_url"] == urls and len(set(urls)) == 2
        assert spec.options["revision"] == service.weights_identity(str(weights))[0] == ready["revision"]
        states = service.replica_states(ctx, "tiny-served")
        assert [s["state"] for s in states] == ["ready", "ready"]
        pids = [s["pid"] for s in states]
        summary = run_eval(ctx, "toy-colors", "tiny-served", limit=8)
        assert summary.errors == 0 and summary.warnings == []  # weights pinned: nothing unverifiable
        engine = summary.manifest["engine"]
        assert engine["engine"] == "OpenAI-compatible server" and engine["streamed"] and engine["concurrency"] == 16
        assert engine["dtype"] is None and "the server's own" in engine["note"]
        assert sorted(r["url"] for r in summary.serving["replicas"]) == sorted(urls)
        assert main(["serve", "--status", "--data-dir", str(settings.data_dir)]) == 0
        assert [row["state"] for row in json.loads(capsys.readouterr().out)] == ["ready", "ready"]
    finally:
        assert main(["serve", "--stop", "tiny-served", "--data-dir", str(settings.data_dir)]) == 0
    stopped = json.loads(capsys.readouterr().out)
    assert set(stopped["replicas"].values()) == {"stopped"}
    assert not any(processes.alive(pid) for pid in pids)
    with pytest.raises(NotFound):
        service.replica_states(ctx, "tiny-served")


def test_a_replica_that_cannot_start_stops_the_others_and_says_why(settings, ctx, weights):
    ask = service.Request(
        str(weights), engine="command", replicas=1, command=f"{sys.executable} -c 'raise SystemExit(3)'"
    )
    serving, _, known = service.plan(ctx, ask)
    with pytest.raises(InferenceError, match="exited with code 3 before it was ready"):
        service.start(ctx, serving, known, tied=True, timeout_s=30)
    assert not service.state_path(ctx, serving.name).exists()


def _start_serving(settings, weights) -> tuple[subprocess.Popen, list[int]]:
    """``python -m backend serve`` in the foreground in its own process, and the pids of its two replicas once
    both are ready (read from the state file)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    argv = [
        sys.executable,
        "-m",
        "backend",
        *_serve_args(settings, weights, "--replicas", "2", "--ready-timeout", "60"),
    ]
    parent = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = parent.stdout.readline()  # the ready line comes once every replica answers its health route
    assert ready.strip().startswith("{"), parent.stderr.read() if parent.poll() is not None else ready
    state = json.loads((settings.data_dir / "serving" / "tiny-served.json").read_text())
    return parent, [r["pid"] for r in state["replicas"]]


def _gone(pids: list[int], within_s: float = 30.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(processes.alive(pid) for pid in pids):
            return True
        time.sleep(0.2)
    return False


def test_no_replica_outlives_a_serving_command_killed_with_sigkill(settings, weights):
    parent, pids = _start_serving(settings, weights)
    assert all(processes.alive(pid) for pid in pids)
    parent.kill()  # SIGKILL: no handler runs, only the kernel's parent-death signal is left
    parent.wait(timeout=30)
    try:
        assert _gone(pids), "a replica outlived its serving command"
    finally:
        for pid in pids:
            if processes.alive(pid):
                os.killpg(pid, signal.SIGKILL)


def test_ctrl_c_stops_every_replica_and_the_command_exits_0(settings, weights):
    parent, pids = _start_serving(settings, weights)
    parent.send_signal(signal.SIGINT)
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == 0, err
    assert json.loads(out)["by"] == "interrupt" and _gone(pids, within_s=5)
    assert not (settings.data_dir / "serving" / "tiny-served.json").exists()


def test_flags_after_the_double_dash_go_to_the_engine_as_they_are(settings, weights, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    argv = ["serve", str(weights), "--engine", "vllm", "--replicas", "2", "--dry-run", *data]
    assert main([*argv, "--", "--seed", "1", "--max-num-seqs", "64"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["revision"].startswith("weights:") and len(planned["replicas"]) == 2
    first, second = planned["replicas"]
    assert first[-4:] == ["--seed", "1", "--max-num-seqs", "64"] and first[first.index("--max-model-len") + 1] == "2048"
    assert first[first.index("--port") + 1] != second[second.index("--port") + 1]
    with pytest.raises(SystemExit):
        main(["models", "list", *data, "--", "--seed", "1"])
    assert "takes no flags after --" in capsys.readouterr().err


def test_the_models_tab_lists_served_replicas_and_their_state_for_reviewers(settings, ctx, weights, capsys):
    from backend.accounts import auth
    from backend.errors import PermissionDenied
    from components.models.replicas import EMPTY, replicas_note

    auth.add_user(ctx.database, "rev", "reviewer", "a-long-password", actor="test")
    auth.add_user(ctx.database, "ann", "annotator", "a-long-password", actor="test")
    assert service.replicas_view(ctx, "rev") == [] and replicas_note([]) == EMPTY
    assert main(_serve_args(settings, weights, "--replicas", "2", "--detach", "--ready-timeout", "60")) == 0
    capsys.readouterr()
    try:
        rows = service.replicas_view(ctx, "rev")
        assert [(r["model"], r["replica"], r["state"]) for r in rows] == [
            ("tiny-served", 0, "ready"),
            ("tiny-served", 1, "ready"),
        ]
        assert set(rows[0]) == {"model", "engine", "replica", "url", "state", "gpus"}  # no pids, no log paths
        with pytest.raises(PermissionDenied):
            service.replicas_view(ctx, "ann")
        second = service.read_state(ctx, "tiny-served").replicas[1]
        os.killpg(second.pgid, signal.SIGKILL)  # one replica dies
        assert _gone([second.pid])
        states = [r["state"] for r in service.replicas_view(ctx, "rev")]
        assert states == ["ready", "exited"] and replicas_note(service.replicas_view(ctx, "rev")).endswith(
            "1 ready, 1 exited"
        )
    finally:
        service.stop(ctx, "tiny-served")
