"""The generative metrics through the CLI (JSONL in, one JSON object out) and their settings."""

from __future__ import annotations

import json

import pytest

from backend.cli import main
from backend.planning.metrics import MetricOptions, compute


def _write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_cli_prints_future_and_full_metrics(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPSTUDIO_DATA_DIR", str(tmp_path / "data"))
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"id": "q1", "reference": ["a", "b"], "predictions": [["a", "b"], ["a", "c"]], "observed": ["o"]},
            {"id": "q2", "reference": ["c"], "predictions": [], "observed": ["o"]},
        ],
    )
    assert main(["metrics", "planning", "--predictions", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["future"]["seq_item_acc"] == 0.375 and out["future"]["seq_hit@10"] == 0.5
    # full: q1 [o a b] vs [o a b] and [o a c] -> item acc (1 + 2/3)/2; q2 has no prediction -> 0
    assert out["full"]["seq_item_acc"] == pytest.approx((1 + 2 / 3) / 2 / 2)


def test_cli_reports_a_bad_line(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": 1, "reference": ["a"], "predictions": [["a"]]}\n{"id": 2, "reference": "a"}\n')
    assert main(["metrics", "planning", "--predictions", str(path), "--data-dir", str(tmp_path)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_repeated_actions_and_k_smaller_than_ten():
    # reference a a b; one prediction a b b (k = 1 < 10)
    out = compute([{"reference": ["a", "a", "b"], "predictions": [["a", "b", "b"]]}])
    assert out["seq_item_acc"] == pytest.approx(2 / 3)  # positions 0 and 2 match
    assert (out["precision"], out["recall"]) == (1.0, 1.0)  # sets {a, b}
    assert out["dist1"] == pytest.approx(2 / 3) and out["dist2"] == 1.0
    assert out["seq_hit@5"] == 0.0
    other = compute(
        [{"reference": ["a", "a", "b"], "predictions": [["a", "b", "b"]]}],
        MetricOptions(pr_counting="occurrences", item_acc_denominator="longer"),
    )
    assert other["precision"] == 1.0 and other["seq_item_acc"] == pytest.approx(2 / 3)


def test_top_k_truncates_and_dist_scope_setting():
    records = [{"reference": ["a"], "predictions": [["b"], ["b"], ["a"]]}, {"reference": ["c"], "predictions": [["c"]]}]
    assert compute(records)["seq_hit@10"] == 1.0
    assert compute(records, MetricOptions(top_k=2))["seq_hit@10"] == 0.5  # q1's hit is third
    pooled = compute(records)["dist1"]  # {a, b, c} of 4 unigrams
    per_question = compute(records, MetricOptions(dist_scope="per_question"))["dist1"]  # (2/3 + 1) / 2
    assert pooled == pytest.approx(3 / 4) and per_question == pytest.approx((2 / 3 + 1) / 2)


def test_empty_input():
    out = compute([])
    assert out["questions"] == 0 and out["bleu1"] == 0.0
