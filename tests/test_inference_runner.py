"""Batch runs: the store, resuming, failures recorded without stopping, the judge, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import inference_helpers
import pytest

from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.registry import ModelSpec, write_models
from backend.inference.request import text
from backend.inference.runner import answer_item, run_eval

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _items(ctx=None, count: int = 10, boom: tuple[int, ...] = ()) -> list[EvalItem]:
    return [
        EvalItem(
            f"q{i}",
            [text(f"Question {i}" + (" BOOM" if i in boom else ""))],
            ("yes", "no"),
            frozenset("A" if i % 2 == 0 else "B"),
        )
        for i in range(count)
    ]


@pytest.fixture(autouse=True)
def _test_benchmarks(ctx):
    ctx.benchmarks.register(BenchmarkSpec("test-yesno", "ten yes/no items", _items))
    ctx.benchmarks.register(BenchmarkSpec("test-boom", "item 3 fails", lambda ctx: _items(boom=(3,))))


def _use_models(ctx, *specs: ModelSpec) -> None:
    write_models(ctx.settings, [ModelSpec("random", "random", options={"seed": 0}), *specs])


def _echo(name: str = "echo", **changes) -> ModelSpec:
    return ModelSpec(name, "python", "inference_helpers:echo_factory", **changes)


def test_random_baseline_is_seeded_and_rerun_comes_from_the_store(ctx):
    first = run_eval(ctx, "toy-colors", "random")
    assert first.items == 24 and first.newly_computed == 24 and first.parse_failures == 0
    ctx.pool.unload()
    again = run_eval(ctx, "toy-colors", "random")
    assert again.newly_computed == 0 and again.from_store == 24 and again.score == first.score
    assert ctx.pool.loaded() == []  # a finished benchmark does not even load the model


def test_rerun_makes_no_model_calls_and_limit_extends(ctx):
    _use_models(ctx, _echo(batch_size=4))
    inference_helpers.CALLS.clear()
    summary = run_eval(ctx, "test-yesno", "echo", limit=6)
    assert (summary.items, summary.newly_computed, summary.score) == (6, 6, 0.5)
    assert inference_helpers.CALLS == [4, 2]
    inference_helpers.CALLS.clear()
    assert run_eval(ctx, "test-yesno", "echo", limit=6).newly_computed == 0
    assert inference_helpers.CALLS == []
    more = run_eval(ctx, "test-yesno", "echo")
    assert (more.newly_computed, more.from_store) == (4, 6)


def test_one_failing_item_is_recorded_and_the_run_goes_on(ctx):
    _use_models(ctx, _echo(batch_size=4))
    summary = run_eval(ctx, "test-boom", "echo")
    assert summary.items == 10 and summary.errors == 1 and summary.newly_computed == 10
    assert "out of memory" in summary.error_examples[0]
    row = ctx.database.query_one("SELECT * FROM predictions WHERE item_id = 'q3'")
    assert row["status"] == "error" and row["score"] is None
    assert run_eval(ctx, "test-boom", "echo").newly_computed == 0  # failures are not retried unless asked
    retried = run_eval(ctx, "test-boom", "echo", retry_failed=True)
    assert retried.newly_computed == 1 and retried.errors == 1


def test_refusals_and_parse_failures_are_counted_wrong_and_reported_apart(ctx, monkeypatch):
    _use_models(ctx, _echo(), _echo("hedger"))
    monkeypatch.setenv("ECHO_ANSWER", "I cannot tell from this.")
    refused = run_eval(ctx, "test-yesno", "echo", limit=4)
    assert refused.score == 0.0 and refused.refusals == 4 and refused.refusal_rate == 1.0
    assert refused.parse_failures == 0 and refused.answered == 0 and refused.answered_rate == 0.0
    monkeypatch.setenv("ECHO_ANSWER", "Hmm, A or B.")
    unparsed = run_eval(ctx, "test-yesno", "hedger", limit=2)
    assert (unparsed.answered, unparsed.refusals, unparsed.parse_failures) == (0, 0, 2)
    assert unparsed.parse_failure_rate == 1.0 and unparsed.as_dict()["refusal_rate"] == 0.0


def test_judge_resolves_unparsed_answers_and_is_reported_apart(ctx, monkeypatch):
    _use_models(ctx, _echo(), _echo("judge"))
    monkeypatch.setenv("ECHO_ANSWER", "Hmm, tricky.")
    plain = run_eval(ctx, "test-yesno", "echo", limit=4)
    assert plain.judge is None and plain.parse_failures == 4
    monkeypatch.setenv("ECHO_ANSWER", "A")  # the judge reads every answer as option A
    judged = run_eval(ctx, "test-yesno", "echo", limit=4, judge="judge")
    assert judged.score == 0.0  # the judge never changes the plain score
    assert judged.judge["resolved"] == 4 and judged.judge["score_with_judge"] == 0.5
    assert run_eval(ctx, "test-yesno", "echo", limit=4, judge="judge").judge["asked_now"] == 0


def test_answer_judge_setting_is_used_unless_a_run_says_otherwise_and_reported(ctx, monkeypatch):
    _use_models(ctx, _echo(), _echo("judge"))
    judged_ctx = dataclasses.replace(ctx, settings=ctx.settings.replace(answer_judge="judge"))
    monkeypatch.setenv("ECHO_ANSWER", "A")  # every answer reads as option A; the judge says A as well
    by_setting = run_eval(judged_ctx, "test-yesno", "echo", limit=4)
    assert by_setting.judge is not None
    assert by_setting.judge["model"] == "judge" and by_setting.judge["chosen_by"] == "setting"
    assert by_setting.as_dict()["judge"]["chosen_by"] == "setting"  # in the stored and printed summary
    assert run_eval(judged_ctx, "test-yesno", "echo", limit=4, judge="off").judge is None
    by_run = run_eval(ctx, "test-yesno", "echo", limit=4, judge="judge")
    assert by_run.judge["chosen_by"] == "run"
    assert run_eval(ctx, "test-yesno", "echo", limit=4).judge is None  # the default setting: no judge


def test_likelihood_scoring(ctx):
    _use_models(ctx, _echo(scoring="likelihood"))
    summary = run_eval(ctx, "test-yesno", "echo")
    assert summary.score == 0.5 and summary.parse_failures == 0  # always the first option


def test_interrupted_run_resumes_without_recomputing(ctx):
    _use_models(ctx, _echo(batch_size=2))
    calls = []

    def stop_after_three_chunks(done: int, total: int) -> None:
        calls.append(done)
        if done >= 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_eval(ctx, "test-yesno", "echo", progress=stop_after_three_chunks)
    runs = ctx.database.query("SELECT status FROM eval_runs")
    assert runs[-1]["status"] == "failed"
    resumed = run_eval(ctx, "test-yesno", "echo")
    assert (resumed.newly_computed, resumed.from_store) == (4, 6)


def test_export_predictions_reproduces_the_score(ctx, tmp_path):
    from backend.inference.store import export_predictions

    summary = run_eval(ctx, "toy-colors", "random")
    exported = export_predictions(ctx.database, tmp_path / "p.jsonl", model="random")
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert exported["rows"] == len(rows) == 24
    assert sum(r["score"] for r in rows) / 24 == summary.score
    assert {r["parsed"]["status"] for r in rows} == {"ok"}


def test_answer_item_for_ask_a_model(ctx):
    item = _items()[1]
    first = answer_item(ctx, "test-yesno", "random", item)
    assert first.prompt.startswith("Question 1") and "A. yes" in first.prompt
    assert first.correct_answer == "B" and first.parsed in {"A", "B"} and not first.from_store
    assert answer_item(ctx, "test-yesno", "random", item).from_store


def _cli(data_dir, *args: str, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "backend", "eval", "--data-dir", str(data_dir), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_cli_eval_prints_one_json_object_and_survives_kill(ctx):
    _use_models(ctx, _echo("slow", options={"sleep_s": 0.15}))
    proc = _cli(ctx.settings.data_dir, "--benchmark", "toy-colors", "--model", "slow")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (ctx.database.scalar("SELECT COUNT(*) FROM predictions") or 0) < 3:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = ctx.database.scalar("SELECT COUNT(*) FROM predictions")
    assert 3 <= done < 24
    proc = _cli(ctx.settings.data_dir, "--benchmark", "toy-colors", "--model", "slow", "--limit", "20")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["benchmark"] == "toy-colors" and summary["model"] == "slow" and summary["items"] == 20
    assert summary["newly_computed"] + summary["from_store"] == 20 and summary["from_store"] >= min(done, 20)
    assert {"accuracy", "answered", "answered_rate", "parse_failures", "parse_failure_rate", "refusal_rate"} <= set(
        summary
    )
    assert "20/20" in err  # the progress bar is on standard error


def test_cli_unknown_model_lists_valid_names(ctx):
    proc = _cli(ctx.settings.data_dir, "--benchmark", "toy-colors", "--model", "nope")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == "" and "valid models:" in err and "random" in err
