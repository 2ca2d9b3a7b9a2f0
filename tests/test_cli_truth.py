"""A command line that tells the truth (issue 42): exit codes a script can branch on, status and errors in every
run table, distinct names for backend and benchmark options, ``--data-dir`` before or after the command, and
``models test`` that does not call an unreachable replica agreeing nor a server under another name "ok"."""

from __future__ import annotations

import json
import socket

import pytest
from fake_openai_server import FakeOpenAIServer

from backend.cli import EXIT_CODES, main
from backend.inference.registry import ModelSpec, write_models
from backend.inference.revision import UNVERIFIABLE_WARNING


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens on it once closed


def _echo(name: str, **changes) -> ModelSpec:
    return ModelSpec(name, "python", "inference_helpers:echo_factory", **changes)


def test_exit_codes_say_how_a_run_ended(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    write_models(settings, [_echo("echo")])
    assert main(["eval", "--benchmark", "toy-colors", "--model", "echo", "--limit", "4", "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "finished"
    down = f"http://127.0.0.1:{_free_port()}/v1"
    served = ModelSpec(
        "down", "openai", "m", options={"base_url": down, "retries": 0, "timeout_s": 2, "unavailable_after_s": 1}
    )
    write_models(settings, [_echo("echo"), served])
    code = main(["eval", "--benchmark", "toy-colors", "--model", "down", "--limit", "3", "--json", *data])
    summary = json.loads(capsys.readouterr().out)
    assert code == 4 and summary["status"] == "failed" and summary["errors"] == 3
    assert main(["eval", "--benchmark", "nope", "--model", "echo", *data]) == 2
    assert "unknown benchmark" in capsys.readouterr().err
    assert {0, 2, 3, 4} <= set(EXIT_CODES)


class HalfBroken:
    """Answers text-only items; every call with an image fails (as a server that refuses images would)."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec

    def generate(self, requests, params):
        if any(part["type"] != "text" for request in requests for part in request):
            raise RuntimeError("images are not supported (simulated)")
        return ["The answer is (A)." for _ in requests]

    def score_options(self, request, options):
        raise NotImplementedError

    def unload(self) -> None:
        return None


def test_a_run_with_some_failed_items_exits_3_and_its_table_shows_status_and_errors(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    write_models(settings, [ModelSpec("half", "python", f"{__name__}:HalfBroken")])
    run = ["eval", "--benchmark", "toy-colors", "--model", "half", "--limit", "8", *data]
    assert main([*run, "--table"]) == 3
    shown = capsys.readouterr().out
    header = shown.splitlines()[0]
    assert "| status " in header and "| errors " in header and "finished with errors" in shown
    assert main([*run, "--json"]) == 3  # from the store now: the same answer, the same exit code
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "finished with errors" and 0 < summary["errors"] < 8


def test_data_dir_before_or_after_the_command(settings, capsys):
    write_models(settings, [_echo("only-here")])
    for argv in (
        ["--data-dir", str(settings.data_dir), "models", "list", "--json"],
        ["models", "list", "--json", "--data-dir", str(settings.data_dir)],
    ):
        assert main(argv) == 0
        names = [m["name"] for m in json.loads(capsys.readouterr().out)]
        assert "only-here" in names and "qwen2-vl-2b" not in names  # this folder's registry, not the defaults


def test_backend_and_benchmark_options_have_their_own_names(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    add = ["models", "add", "m", "--backend", "transformers", "--path", "/models/m", *data]
    assert main([*add, "--backend-option", "static_cache=true", "--batch-size", "auto"]) == 0
    added = json.loads(capsys.readouterr().out)["added"]
    assert added["options"] == {"static_cache": True} and added["batch_size"] == "auto"
    with pytest.raises(SystemExit) as refused:  # argparse: not a flag of models add
        main([*add, "--benchmark-option", "x=1"])
    assert refused.value.code == 2 and "unrecognized arguments: --benchmark-option" in capsys.readouterr().err
    from backend.cli import build_parser

    parser = build_parser()
    models_add = parser._subparsers._group_actions[0].choices["models"]._subparsers._group_actions[0].choices["add"]
    undocumented = [a.option_strings for a in models_add._actions if a.option_strings and not a.help]
    assert undocumented == []  # every flag of models add has its help (the hidden old --option has SUPPRESS)


def test_models_test_unreachable_replica_is_not_agreeing_and_the_revision_prints_as_is(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    with FakeOpenAIServer() as up:
        down = f"http://127.0.0.1:{_free_port()}/v1"
        spec = ModelSpec("two", "openai", "fake-vlm", options={"base_url": [up.base_url, down], "timeout_s": 3})
        write_models(settings, [spec])
        assert main(["models", "test", "two", "--json", *data]) == 2
        captured = capsys.readouterr()
        probe = json.loads(captured.out)
        assert probe["replicas_agree"] is False and probe["unreachable"] == [down] and probe["ok"] is False
        assert f"replica {down} unreachable" in captured.err
        assert probe["warnings"] == [UNVERIFIABLE_WARNING]
        assert main(["models", "test", "two", "--table", *data]) == 2
        shown = capsys.readouterr().out
        assert f"revision: {probe['revision']}" in shown and "|len=4096|" in probe["revision"]
        assert "replicas agree: False" in shown and f"warning: {UNVERIFIABLE_WARNING}" in shown


def test_models_test_warns_when_the_server_serves_another_name(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    with FakeOpenAIServer("some-other-model") as server:
        write_models(settings, [ModelSpec("mine", "openai", "fake-vlm", options={"base_url": server.base_url})])
        assert main(["models", "test", "mine", "--json", *data]) == 2
        captured = capsys.readouterr()
        assert json.loads(captured.out)["serves_this_model"] is False
        assert "does not serve 'fake-vlm' (it serves: some-other-model)" in captured.err


def test_init_prepares_a_fresh_data_folder_as_the_first_start_does(tmp_path, capsys, demo_media_cache):
    from conftest import seed_demo_media

    from backend.settings import Settings

    data_dir = tmp_path / "fresh"
    seed_demo_media(Settings(data_dir=data_dir), demo_media_cache)  # the demo videos, made once per session
    assert main(["--data-dir", str(data_dir), "init"]) == 0
    prepared = json.loads(capsys.readouterr().out)
    assert prepared["planning_questions"] > 0 and prepared["vqa_items"] > 0
    assert "demo-admin" in prepared["accounts"]["users"]
    assert main(["vqa", "run", "random", "--limit", "2", "--json", "--data-dir", str(data_dir)]) == 0  # no admin made
    assert json.loads(capsys.readouterr().out)["status"] == "finished"
    assert main(["init", "--data-dir", str(data_dir)]) == 0  # again: nothing changes
    assert json.loads(capsys.readouterr().out) == prepared
