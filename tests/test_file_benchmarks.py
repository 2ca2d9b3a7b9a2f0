"""Benchmarks from a file: the documented example end to end through the CLI (import, run, circular, compare,
report), and every way a file can be wrong."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from conftest import ROOT
from fake_openai_server import FakeOpenAIServer

from backend.cli import main
from backend.context import build_context
from backend.errors import ImportFileError, ValidationError
from backend.filebench.importer import import_benchmark
from backend.inference.registry import ModelSpec, write_models
from backend.inference.toy import _square

EXAMPLE = ROOT / "docs" / "examples" / "colours" / "items.jsonl"


def _json(capsys, *argv: str):
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_the_documented_example_end_to_end(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    added = _json(capsys, "benchmarks", "add", "colours", "--from", str(EXAMPLE), *data)
    assert (added["items"], added["single_choice"], added["with_images"], added["with_video"]) == (6, 5, 5, 1)
    assert added["categories"] == {"one image": 3, "two images": 2, "video": 1}
    listed = {b["name"]: b for b in _json(capsys, "benchmarks", "list", "--json", *data)}
    assert listed["colours"]["from_file"] and not listed["toy-colors"]["from_file"]
    assert _json(capsys, "benchmarks", "show", "colours", *data)["items"] == 6
    _json(capsys, "users", "add", "boss", "--role", "admin", "--password", "password123", *data)

    # the server stays up: a served model's answers are keyed by what its server says it serves
    with FakeOpenAIServer() as server:  # it names the colour of the first image's centre: always right
        write_models(
            settings,
            [
                ModelSpec("served", "openai", server.model, concurrency=2, options={"base_url": server.base_url}),
                ModelSpec("random", "random", options={"seed": 0}),
            ],
        )
        circular = ("--benchmark-option", "circular=true", "--json", *data)
        served = _json(capsys, "eval", "--benchmark", "colours", "--model", "served", *circular)
        assert served["items"] == 4 + 4 + 3 + 4 + 2 + 1  # every rotation of the single-choice items
        assert served["circular"]["complete"] == 5 and served["circular"]["circular_accuracy"] == 1.0
        assert served["circular"]["consistency_rate"] == 1.0
        assert served["by_category"] == {
            "one image": {"score": 1.0, "n": 3},
            "two images": {"score": 0.5, "n": 2},  # the indefinite item: one of its two letters, exact match 0
            "video": {"score": 1.0, "n": 1},
        }
        assert (
            served["answered"] == 18
            and served["errors"] == 0
            and served["manifest"]["dataset"]["benchmark"] == "colours"
        )
        rand = _json(capsys, "eval", "--benchmark", "colours", "--model", "random", *circular)
        assert rand["circular"]["complete"] == 5 and rand["circular"]["circular_accuracy"] < 1.0

        plain = _json(capsys, "compare", "--benchmark", "colours", "--models", "served,random", *data)
        assert plain["items"] == 6 and plain["comparison"]["common_items"] == 6
        assert plain["runs"]["served"]["accuracy"] == round(5 / 6, 4)
        paired = _json(capsys, "compare", "--benchmark", "colours", "--models", "served,random", "--circular", *data)
        assert paired["runs"]["served"] == {"n": 5, "circular_accuracy": 1.0}
        assert paired["comparison"]["common_items"] == 5 and len(paired["comparison"]["pairs"]) == 1

        report = _json(capsys, "report", "--models", "served,random", *data)
        rows = {r["model"]: r for r in report["tables"]["file_benchmarks"]["rows"]}
        assert rows["served"]["benchmark"] == "colours" and rows["served"]["run"] == "6 of 6"
        assert rows["served"]["circular accuracy (%)"] == 100.0 and rows["served"]["consistency (%)"] == 100.0
        assert {r["benchmark"] for r in report["tables"]["outcomes"]["rows"]} >= {"colours"}

    # a second import under the same name needs --replace; removal keeps the stored answers
    again = ("benchmarks", "add", "colours", "--from", str(EXAMPLE), *data)
    assert main(list(again)) == 2 and "--replace" in capsys.readouterr().err
    assert _json(capsys, *again, "--replace")["items"] == 6
    assert _json(capsys, "benchmarks", "remove", "colours", *data)["removed"] == "colours"
    assert "colours" not in {b["name"] for b in _json(capsys, "benchmarks", "list", "--json", *data)}


def test_a_running_app_sees_a_benchmark_another_process_imported(ctx):
    assert "colours" not in ctx.benchmarks.all()
    import_benchmark(ctx.settings.data_dir, "colours", str(EXAMPLE), builtin=ctx.benchmarks.builtin_names())
    items = ctx.benchmarks.get("colours").load_items(ctx)
    assert [i.item_id for i in items][:2] == ["sq-red", "sq-blue"] and items[-1].multi
    assert items[4].request[0]["type"] == "video" and items[3].request[1]["type"] == "image"
    assert (ctx.settings.data_dir / "benchmarks" / "colours" / "media" / "clips" / "green.mp4").is_file()


def test_every_problem_is_reported_with_its_line_and_nothing_is_written(settings, tmp_path):
    folder = tmp_path / "src"
    (folder / "img").mkdir(parents=True)
    _square("red").save(folder / "img" / "red.png")
    (folder / "img" / "broken.png").write_bytes(b"not an image")
    shutil.copy(folder / "img" / "red.png", tmp_path / "outside.png")
    rows = [
        {"id": "ok", "question": "Q?", "options": ["a", "b"], "answer": "A", "images": ["img/red.png"]},
        {"id": "2", "question": "", "options": ["a", "b"], "answer": "A"},
        {"id": "3", "question": "Q?", "options": ["a", "b"], "answer": "E"},
        {"id": "4", "question": "Q?", "options": ["only"], "answer": "A"},
        {"id": "5", "question": "Q?", "options": ["a", "b"], "answer": "A", "images": ["img/missing.png"]},
        {"id": "6", "question": "Q?", "options": ["a", "b"], "answer": "A", "images": ["../outside.png"]},
        {"id": "7", "question": "Q?", "options": ["a", "b"], "answer": "A", "images": ["img/broken.png"]},
        {"id": "ok", "question": "Q?", "options": ["a", "b"], "answer": "B"},
        {"id": "9", "question": "Q?", "options": ["a", "b"], "answer": "A", "video": "clips/none.mp4"},
    ]
    source = folder / "items.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ImportFileError) as caught:
        import_benchmark(settings.data_dir, "broken", str(source), builtin=set())
    message = str(caught.value)
    for expected in (
        "line 2: question is missing",
        "line 3: answer E is not one of the options' letters A-B",
        "line 4: options must be 2 to 26",
        "line 5: image 'img/missing.png' not found",
        "line 6: image '../outside.png' must be a path relative to the file, inside its folder",
        "line 7: image does not open",
        "duplicate id 'ok'",
        "line 9: video 'clips/none.mp4' not found",
        "Nothing was imported",
    ):
        assert expected in message, expected
    assert not (settings.data_dir / "benchmarks" / "broken").exists()
    assert [p.name for p in (settings.data_dir / "benchmarks").iterdir()] == []  # the staging folder is gone
    with pytest.raises(ValidationError, match="built-in"):
        import_benchmark(settings.data_dir, "mmcomposition", str(source), builtin={"mmcomposition"})
    with pytest.raises(ValidationError, match="letters, digits"):
        import_benchmark(settings.data_dir, "../escape", str(source), builtin=set())
    with pytest.raises(ImportFileError, match="expected a .jsonl"):
        import_benchmark(settings.data_dir, "csv", str(tmp_path / "outside.png"), builtin=set())


def _png(colour: str) -> bytes:
    buffer = io.BytesIO()
    _square(colour).save(buffer, format="PNG")
    return buffer.getvalue()


def test_parquet_with_embedded_images_letter_columns_and_answers_as_text(settings, tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        [
            {"index": 1, "question": "Colour?", "A": "red", "B": "blue", "C": None, "answer": "blue",
             "image": {"bytes": _png("blue"), "path": "x.png"}, "category": "c1"},
            {"index": 2, "question": "Colour?", "A": "red", "B": "blue", "C": "green", "answer": "C",
             "image": {"bytes": _png("green"), "path": "y.png"}, "category": None},
        ]
    )  # fmt: skip
    path = tmp_path / "mmbench-like.parquet"
    frame.to_parquet(path)
    meta = import_benchmark(settings.data_dir, "pq", str(path), builtin=set(), metric="partial_credit")
    assert meta["items"] == 2 and meta["with_images"] == 2 and meta["metric"] == "partial_credit"
    ctx = build_context(settings)
    first, second = ctx.benchmarks.get("pq").load_items(ctx)
    assert first.options == ("red", "blue") and first.answer == frozenset("B") and first.item_id == "1"
    assert second.options == ("red", "blue", "green") and second.meta["category"] is None
    assert ctx.benchmarks.get("pq").metric == "partial_credit"


def test_hf_datasets_are_read_through_the_hub_client(settings, tmp_path):
    repo = tmp_path / "snapshot"
    (repo / "data").mkdir(parents=True)
    rows = [{"question": "Q?", "options": ["x", "y"], "answer": "B", "id": "t1"}]
    (repo / "data" / "test.jsonl").write_text(json.dumps(rows[0]) + "\n")
    (repo / "data" / "train.jsonl").write_text(json.dumps({**rows[0], "id": "train-only"}) + "\n")
    asked = []

    def download(repo_id, revision):
        asked.append((repo_id, revision))
        return repo

    meta = import_benchmark(settings.data_dir, "hub", "hf:someone/mcq@v1:test", builtin=set(), download=download)
    assert asked == [("someone/mcq", "v1")] and meta["items"] == 1
    with pytest.raises(ValidationError, match="hf:owner/dataset"):
        import_benchmark(settings.data_dir, "hub2", "hf:no-owner", builtin=set(), download=download)
    with pytest.raises(ValidationError, match="no .parquet or .jsonl files for split dev"):
        import_benchmark(settings.data_dir, "hub3", "hf:someone/mcq:dev", builtin=set(), download=download)
