"""``compstudio samples`` (issue 28 §4): a run's samples as JSON lines or CSV, filtered, and two runs' discordant
items, which equal the paired comparison's counts."""

from __future__ import annotations

import csv
import io
import json

import pytest

from backend.cli import main
from backend.inference.paired import compare_stored
from backend.inference.registry import ModelSpec, write_models
from backend.inference.runner import run_eval

FIELDS = [
    "item_id",
    "category",
    "answer",
    "raw_output",
    "parsed",
    "outcome",
    "score",
    "rotation",
    "prompt_sha256",
    "key",
]


@pytest.fixture
def lab(ctx):
    known = list(ctx.models.file_models(ctx.settings).values())
    write_models(ctx.settings, [*known, ModelSpec("random-2", "random", options={"seed": 2})])
    summaries = {m: run_eval(ctx, "toy-colors", m) for m in ("random", "random-2")}
    return ctx, summaries


def _cli(ctx, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["samples", "--data-dir", str(ctx.settings.data_dir), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_jsonl_rows_have_the_fields_and_their_mean_is_the_reported_score(lab, capsys):
    ctx, summaries = lab
    code, out, _ = _cli(ctx, capsys, "--model", "random", "--benchmark", "toy-colors")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 24 and all(list(r) == FIELDS for r in rows)
    assert sum(r["score"] for r in rows) / len(rows) == pytest.approx(summaries["random"].score)
    assert all(r["key"]["prompt_hash"] == r["prompt_sha256"][:16] for r in rows)


def test_filter_and_csv_to_a_file(lab, capsys, tmp_path):
    ctx, _ = lab
    out_file = tmp_path / "wrong.csv"
    code, out, _ = _cli(ctx, capsys, "--model", "random", "--benchmark", "toy-colors", "--filter", "wrong",
                        "--format", "csv", "--out", str(out_file))  # fmt: skip
    summary = json.loads(out)
    rows = list(csv.DictReader(io.StringIO(out_file.read_text())))
    assert code == 0 and summary["rows"] == len(rows) > 0 and summary["filter"] == "wrong"
    assert list(rows[0]) == FIELDS and {r["outcome"] for r in rows} <= {"wrong", "partly right"}
    assert json.loads(rows[0]["key"])["model"] == "random"


def test_vs_rows_equal_the_discordant_counts(lab, capsys, tmp_path):
    ctx, summaries = lab
    out_file = tmp_path / "vs.jsonl"
    code, out, _ = _cli(ctx, capsys, "--model", "random", "--benchmark", "toy-colors", "--vs", "random-2",
                        "--out", str(out_file))  # fmt: skip
    summary = json.loads(out)
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    pair = compare_stored(ctx, "toy-colors", ["random", "random-2"], samples=20)["comparison"]["pairs"][0]
    assert code == 0 and len(rows) == pair["a_only_right"] + pair["b_only_right"] == summary["rows"]
    assert sum(r["right"] == "random" for r in rows) == pair["a_only_right"] == summary["a_only_right"]
    assert sum(r["right"] == "random-2" for r in rows) == pair["b_only_right"] == summary["b_only_right"]
    assert summary["common"] == pair["n"]


def test_runs_are_listed_and_picked_by_id(lab, capsys):
    ctx, summaries = lab
    code, out, _ = _cli(ctx, capsys, "--runs")
    runs = json.loads(out)
    assert code == 0 and [r["run_id"] for r in runs] == [summaries["random-2"].run_id, summaries["random"].run_id]
    code, out, _ = _cli(ctx, capsys, "--run", str(summaries["random"].run_id), "--search", "xyz-not-there")
    assert code == 0 and out == ""


def test_mistakes_are_named(lab, capsys):
    ctx, _ = lab
    code, _, err = _cli(ctx, capsys, "--model", "nobody", "--benchmark", "toy-colors")
    assert code == 2 and "no finished run of nobody on toy-colors" in err
    code, _, err = _cli(ctx, capsys, "--run", "999")
    assert code == 2 and "there is no run 999" in err
    code, _, err = _cli(ctx, capsys, "--filter", "wrong")
    assert code == 2 and "name a run" in err
