"""`python -m backend icl build`, import/export of example sets, and validation of bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.cli import main
from backend.errors import ImportFileError, ValidationError
from backend.icl.store import export_set, import_set, list_sets, load_set
from tests.conftest import COGS_ASSETS, COGS_BANK

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


@pytest.fixture
def small_files(tmp_path: Path) -> tuple[Path, Path]:
    bank_lines = COGS_BANK.read_text().splitlines()[:1500]
    test_lines = COGS_ASSETS.joinpath("test_phrareco_like.jsonl").read_text().splitlines()[:5]
    bank = tmp_path / "bank.jsonl"
    bank.write_text("\n".join(bank_lines) + "\n")
    tests = tmp_path / "test_phrareco_like.jsonl"
    tests.write_text("\n".join(test_lines) + "\n")
    return bank, tests


def test_build_writes_one_line_per_test_case(small_files, tmp_path, capsys):
    bank, tests = small_files
    out = tmp_path / "prompts.jsonl"
    assert (
        main(
            [
                "icl",
                "build",
                "--bank",
                str(bank),
                "--tests",
                str(tests),
                "--setting",
                "high_diversity",
                "--out",
                str(out),
                "--data-dir",
                str(tmp_path / "data"),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["test_cases"] == 5 and summary["short_cases"] == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    bank_lines = [json.loads(line) for line in bank.read_text().splitlines()]
    assert [line["line"] for line in lines] == [0, 1, 2, 3, 4]
    for line in lines:
        assert set(line) == {"context", "ground_truth", "category", "selected", "stats", "line"}
        assert line["category"] == "phrareco" and len(line["selected"]) == 10
        blocks = line["context"].split("\n\n")
        assert len(blocks) == 11 and blocks[-1].endswith("output:")
        first = bank_lines[line["selected"][0]]
        assert blocks[0] == f"input: {first['input'].removeprefix('Form one: ')}\noutput: {first['output']}"
        assert line["stats"]["T_N"] == 1.0 and line["stats"]["T_L"] > 0.8


def test_build_fictional_words_and_random_order(small_files, tmp_path, capsys):
    bank, tests = small_files
    out = tmp_path / "fictional.jsonl"
    main(
        [
            "icl",
            "build",
            "--bank",
            str(bank),
            "--tests",
            str(tests),
            "--out",
            str(out),
            "--fictional",
            "--order",
            "random",
            "--seed",
            "4",
            "--data-dir",
            str(tmp_path / "data"),
        ]
    )
    capsys.readouterr()
    line = json.loads(out.read_text().splitlines()[0])
    original = json.loads(tests.read_text().splitlines()[0])["output"]
    assert line["ground_truth"] != original
    assert [len(w) for w in line["ground_truth"].split()] == [len(w) for w in original.split()]


def test_unknown_setting_is_refused(small_files, tmp_path):
    bank, tests = small_files
    with pytest.raises(SystemExit):
        main(["icl", "build", "--bank", str(bank), "--tests", str(tests), "--setting", "nope", "--out", "x"])


def test_import_export_round_trip(database, small_files, tmp_path):
    bank, tests = small_files
    assert import_set(database, "cli", tests, "phrareco", "tests") == {"name": "phrareco", "kind": "tests", "items": 5}
    examples = load_set(database, "phrareco")
    assert [e.category for e in examples] == ["phrareco"] * 5
    assert not examples[0].input.startswith("Form one")
    out = tmp_path / "export.jsonl"
    export_set(database, "phrareco", out)
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert again[0] == {"input": examples[0].input, "output": examples[0].output, "category": "phrareco"}
    assert [s["name"] for s in list_sets(database)] == ["phrareco"]
    with pytest.raises(ValidationError, match="exists"):
        import_set(database, "cli", tests, "phrareco", "tests")


def test_bad_file_imports_nothing(database, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"input": "Emma ate .", "output": "EAT ( EMMA , NONE , NONE )"})
        + "\n"
        + json.dumps({"input": "Emma the cake .", "output": "EAT ( EMMA , CAKE , NONE )"})
        + "\n"
    )
    with pytest.raises(ImportFileError, match="line 2.*cannot parse the input"):
        import_set(database, "cli", bad, "bad", "bank")
    assert list_sets(database) == []
    supplied = tmp_path / "trees.jsonl"
    supplied.write_text(
        json.dumps(
            {"input": "x y", "output": "f ( x )", "input_tree": ["S", ["A", "x"], "y"], "output_tree": ["F", "f", "x"]}
        )
        + "\n"
    )
    import_set(database, "cli", supplied, "own", "bank")
    assert load_set(database, "own")[0].source.structures1 == {"S[A y]", "A[x]"}


def test_icl_benchmark_exact_match_per_category(ctx, small_files):
    from tiny_models import tiny_spec

    from backend.icl.evaluation import evaluate_by_category, load_items
    from backend.inference.benchmarks import get_benchmark

    bank, tests = small_files
    import_set(ctx.database, "cli", bank, "bank", "bank")
    import_set(ctx.database, "cli", tests, "phrareco", "tests")
    assert "icl" in [get_benchmark(ctx, "icl").name]
    items = load_items(ctx, setting="high_diversity", n=3)
    assert len(items) == 5 and items[0].answer == "SCREAM ( ON ( BABY , IN ( TRAY , HOUSE ) ) , NONE , NONE )"
    assert items[0].request[0]["text"].count("input: ") == 4
    ctx.models.register_model(tiny_spec("causal", name="tiny-icl-eval", max_new_tokens=3))
    result = evaluate_by_category(ctx, "tiny-icl-eval", {"n": 2}, limit=2)
    assert result["items"] == 2
    assert result["exact_match_by_category"] == {"phrareco": 0.0, "all": 0.0}
    read = result["outcomes_by_category"]["phrareco"]
    assert sum(read[k] for k in ("answered", "refusals", "parse_failures", "errors")) == 2
    assert read["answered"] == result["answered"] and read["refusals"] == result["refusals"]
    from backend.inference.cli import benchmark_report  # `eval --benchmark icl` adds the same, from the spec's report

    assert (
        benchmark_report(ctx, "icl", "tiny-icl-eval", {"n": 2}, 2, None)["exact_match_by_category"]
        == (result["exact_match_by_category"])
    )


def test_icl_refusals_are_kept_apart_from_answers(ctx, small_files, monkeypatch):
    from backend.icl.evaluation import evaluate_by_category
    from backend.inference.registry import ModelSpec

    bank, tests = small_files
    import_set(ctx.database, "cli", bank, "bank", "bank")
    import_set(ctx.database, "cli", tests, "phrareco", "tests")
    ctx.models.register_model(ModelSpec("icl-refuser", "python", "inference_helpers:echo_factory"))
    monkeypatch.setenv("ECHO_ANSWER", "I'm sorry, I cannot answer that.")
    result = evaluate_by_category(ctx, "icl-refuser", {"n": 2}, limit=3)
    assert (result["answered"], result["refusals"], result["parse_failures"]) == (0, 3, 0)
    assert result["refusal_rate"] == 1.0 and result["exact_match_by_category"]["all"] == 0.0
    assert result["outcomes_by_category"]["phrareco"]["refusals"] == 3


def test_eval_benchmark_icl_prints_exact_match_per_category(ctx, settings, small_files, monkeypatch, capsys):
    from backend.icl.evaluation import load_items
    from backend.inference.registry import ModelSpec, write_models

    bank, tests = small_files
    import_set(ctx.database, "cli", bank, "bank", "bank")
    import_set(ctx.database, "cli", tests, "phrareco", "tests")
    write_models(settings, [ModelSpec("icl-echo", "python", "inference_helpers:echo_factory")])
    monkeypatch.setenv("ECHO_ANSWER", "SCREAM ( ON ( BABY , IN ( TRAY , HOUSE ) ) , NONE , NONE )")  # case 0's
    base = [
        "eval",
        "--benchmark",
        "icl",
        "--model",
        "icl-echo",
        "--data-dir",
        str(settings.data_dir),
        "--benchmark-option",
        "n=2",
    ]
    assert main([*base, "--limit", "2"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["score"] == 0.5
    assert summary["exact_match_by_category"] == {"phrareco": 0.5, "all": 0.5}
    assert summary["outcomes_by_category"]["phrareco"]["answered"] == 2
    assert main([*base, "--benchmark-option", "matching=target_only"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert kept["items"] == len(load_items(ctx, n=2, matching="target_only")) <= 5
    assert kept["exact_match_by_category"]["all"] == kept["score"]
    assert main([*base, "--benchmark-option", "matching"]) != 0
    assert "--benchmark-option takes key=value, not 'matching'" in capsys.readouterr().err
    assert main([*base, "--option", "matching=target_only"]) == 0  # the old name still works, with a note
    assert "note: --option is now --benchmark-option" in capsys.readouterr().err


def test_a_file_read_again_is_parsed_once_and_a_changed_file_again(tmp_path):
    """read_examples keeps the parsed examples of a file while its size and modification time stay the same
    (every app start imports the demo bank); each call gets its own list, and a rewritten file is read anew."""
    from backend.icl import data

    path = tmp_path / "bank.jsonl"
    path.write_text(json.dumps({"input": "Emma ate .", "output": "EAT ( EMMA , NONE , NONE )"}) + "\n")
    first, second = data.read_examples(path, ""), data.read_examples(path, "")
    assert first == second and first is not second and first[0] is second[0]  # parsed once
    first.clear()
    assert len(data.read_examples(path, "")) == 1  # a caller's list is its own
    data.write_examples(second + second, path)  # rewritten: other size
    assert len(data.read_examples(path, "")) == 2
    path.write_text("{not json\n")
    with pytest.raises(ImportFileError, match="line 1"):
        data.read_examples(path, "")
