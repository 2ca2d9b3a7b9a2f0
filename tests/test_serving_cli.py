"""The commands an lmms-eval user reaches for, each through the CLI: ``models add|list|test|remove``, ``--gen``,
``--limit`` with a progress bar, results tables or ``--json``, and ``eval --config run.yaml``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack

import pytest
import yaml
from conftest import ROOT, VILPACT_DATA
from fake_openai_server import FakeOpenAIServer
from planning_helpers import planning_context

from backend.cli import main
from backend.inference.registry import ModelSpec, write_models
from backend.vqa.demo import DEMO_FILE


def _json(capsys, *argv: str):
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _fails(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err


def test_models_add_list_test_and_remove(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    with ExitStack() as stack:
        first, second = (stack.enter_context(FakeOpenAIServer()) for _ in range(2))
        added = _json(
            capsys,
            *("models", "add", "served", "--backend", "openai", "--path", "fake-vlm", *data),
            *("--base-url", first.base_url, "--base-url", second.base_url, "--concurrency", "4"),
            *("--backend-option", "adaptive_concurrency=true", "--backend-option", "timeout_s=5"),
            *("--backend-option", "api_key_env=NO_KEY"),
        )["added"]
        assert added["options"] == {
            "adaptive_concurrency": True,
            "timeout_s": 5,
            "api_key_env": "NO_KEY",
            "base_url": [first.base_url, second.base_url],
        }
        assert added["concurrency"] == 4
        assert "already registered" in _fails(
            capsys, "models", "add", "served", "--backend", "openai", "--path", "x", "--base-url", first.base_url, *data
        )
        listed = {m["name"]: m for m in _json(capsys, "models", "list", "--json", *data)}
        assert listed["served"]["options"]["base_url"] == [first.base_url, second.base_url]
        assert main(["models", "list", "--table", *data]) == 0
        assert "| served " in capsys.readouterr().out

        probe = _json(capsys, "models", "test", "served", "--json", *data)
        assert probe["ok"] and probe["reply"] == "The answer is (A)." and probe["latency_ms"] >= 0
        assert [r["url"] for r in probe["replicas"]] == [first.base_url, second.base_url]
        served = {"id": "fake-vlm", "root": first.root, "max_model_len": first.max_model_len}
        assert probe["replicas"][0]["served"] == [served] and probe["replicas"][0]["version"] == first.version
        assert probe["replicas_agree"] and probe["serves_this_model"]
        assert main(["models", "test", "served", "--table", *data]) == 0
        shown = capsys.readouterr().out
        assert "| replica " in shown and "replicas agree: True" in shown

        _json(
            capsys,
            "models",
            "add",
            "wrong",
            "--backend",
            "openai",
            "--path",
            "other",
            "--base-url",
            first.base_url,
            *data,
        )
        err = _fails(capsys, "models", "test", "wrong", "--json", *data)
        assert "did not answer" in err and "404" in err
        bad_url = ("models", "add", "bad", "--backend", "openai", "--path", "m", "--base-url", "ftp://x", *data)
        assert "must start with http" in _fails(capsys, *bad_url)
        assert "unknown backend" in _fails(capsys, "models", "add", "nope", "--backend", "vllm", "--path", "m", *data)
        local = ("models", "add", "tiny", "--backend", "transformers", "--path", "/models/tiny", "--batch-size", "8")
        assert _json(capsys, *local, "--backend-option", "native_video=true", *data)["added"]["batch_size"] == 8
        auto = _json(capsys, *local[:-1], "auto", "--backend-option", "static_cache=true", "--replace", *data)
        assert auto["added"]["batch_size"] == "auto" and auto["added"]["options"] == {"static_cache": True}
        assert "served" not in _json(capsys, "models", "remove", "served", *data)["models"]
    write_models(settings, [ModelSpec("random", "random", options={"seed": 0})])
    local = _json(capsys, "models", "test", "random", "--json", *data)  # a backend without a server
    assert local["ok"] and local["backend"] == "random" and "replicas" not in local and "revision" in local


def test_eval_gen_limit_table_and_a_run_file_that_runs_it_again(settings, tmp_path, capsys):
    write_models(settings, [ModelSpec("random", "random", options={"seed": 0})])
    data = ["--data-dir", str(settings.data_dir)]
    base = ["eval", "--benchmark", "toy-colors", "--model", "random", "--limit", "5", *data]
    assert main([*base, "--gen", "max_new_tokens=4", "--table"]) == 0
    shown = capsys.readouterr()
    assert "| benchmark " in shown.out and "| toy-colors " in shown.out and "5/5" in shown.err

    summary = _json(capsys, *base, "--gen", "max_new_tokens=4", "--json")
    assert summary["items"] == 5 and summary["newly_computed"] == 0  # the table run stored them
    manifest = summary["manifest"]
    assert manifest["generation"]["max_new_tokens"] == 4 and manifest["generation_overrides"] == {"max_new_tokens": 4}
    plain = _json(capsys, *base, "--json")
    assert plain["newly_computed"] == 5  # other generation settings: another key, nothing reused
    assert plain["manifest"]["key"]["settings_hash"] != manifest["key"]["settings_hash"]

    run_file = yaml.safe_load(open(summary["config"], encoding="utf-8"))
    assert run_file["benchmark"] == "toy-colors" and run_file["limit"] == 5 and run_file["gen"] == {"max_new_tokens": 4}
    assert run_file["model"]["name"] == "random" and run_file["model"]["options"] == {"seed": 0}
    assert run_file["judge"] == "off" and run_file["expect"]["settings_hash"] == manifest["key"]["settings_hash"]

    out = tmp_path / "again"
    again = _json(capsys, "eval", "--config", summary["config"], "--out", str(out), "--json", *data)
    assert again["newly_computed"] == 0 and again["from_store"] == 5 and again["score"] == summary["score"]
    assert again["reproduces"] == {"settings_hash": True, "content_hash": True}
    assert (out / "run.yaml").is_file() and (out / "manifest.json").is_file()
    assert _json(capsys, "eval", "--config", summary["config"], "--limit", "6", "--json", *data)["items"] == 6

    run_file["model"]["options"] = {"seed": 7}  # the file's entry, not the registry's
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(run_file))
    other = _json(capsys, "eval", "--config", str(edited), "--json", *data)
    assert "differs from the registry" in other["note"] and other["newly_computed"] == 5
    assert other["reproduces"]["settings_hash"] is False and other["reproduces"]["content_hash"] is True

    broken = tmp_path / "broken.yaml"
    broken.write_text("benchmark: toy-colors\nmodle: random\n")
    err = _fails(capsys, "eval", "--config", str(broken), *data)
    assert "unknown key 'modle'" in err and "model is required" in err
    assert "unknown generation setting 'top_k'" in _fails(capsys, *base, "--gen", "top_k=3")
    assert "--gen takes key=value" in _fails(capsys, *base, "--gen", "temperature")
    assert "--benchmark NAME --model NAME" in _fails(capsys, "eval", *data)


def test_vqa_run_and_vote_take_gen_and_limit(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    _json(capsys, "import", "vqa", str(DEMO_FILE), "--format", "jsonl", *data)
    _json(capsys, "users", "add", "boss", "--role", "admin", "--password", "password123", *data)
    write_models(settings, [ModelSpec("random", "random", options={"seed": 0})])
    run = _json(capsys, "vqa", "run", "random", "--limit", "3", "--gen", "seed=1", "--circular", "--json", *data)
    assert run["run"] == "random [seed=1]" and run["manifest"]["generation"]["seed"] == 1
    assert run["circular"]["items"] == 3 and run["items"] >= 3
    assert main(["vqa", "run", "random", "--limit", "2", "--table", *data]) == 0
    shown = capsys.readouterr()
    assert "| random " in shown.out and "2/2" in shown.err
    vote = _json(capsys, "vqa", "vote", "--panel", "random", "--limit", "4", "--json", *data)
    assert vote["panel"] == ["random"]


def test_planning_run_prints_its_leaderboard_as_a_table(tmp_path, capsys):
    ctx = planning_context(tmp_path, VILPACT_DATA)
    data = ["--data-dir", str(ctx.settings.data_dir)]
    argv = ["planning", "run", "--models", "random", "--mode", "text", "--limit", "3", "--table", *data]
    assert main(argv) == 0
    shown = capsys.readouterr()
    assert "planning: 510 questions" in shown.out and "| random " in shown.out and "3/3" in shown.err


def test_a_piped_eval_prints_json_and_its_progress_on_standard_error(settings):
    write_models(settings, [ModelSpec("random", "random", options={"seed": 0})])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    argv = ["eval", "--benchmark", "toy-colors", "--model", "random", "--limit", "4"]
    done = subprocess.run(
        [sys.executable, "-m", "backend", *argv, "--data-dir", str(settings.data_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["items"] == 4 and "4/4" in done.stderr


def test_json_and_table_exclude_each_other(settings, capsys):
    with pytest.raises(SystemExit):
        main(["models", "list", "--json", "--table", "--data-dir", str(settings.data_dir)])
    assert "not allowed with" in capsys.readouterr().err
