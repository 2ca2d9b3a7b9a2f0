"""The command line finds benchmarks through the benchmark registry (issue 43 Must 4): short names are the specs'
aliases (compare, grid, samples), and what ``compare`` and ``eval`` do beyond the common path each spec carries
(its own comparison, its circular comparison, its report), so the command line names no benchmark itself. Exit
codes stay: 0, and 2 for every refusal."""

from __future__ import annotations

import json

import pytest

from backend.cli import main
from backend.errors import NotFound
from backend.inference.benchmarks import CIRCULAR_COMPARE_ONLY
from tests.conftest import VILPACT_DATA
from tests.planning_helpers import planning_context


def test_short_names_are_aliases_of_the_specs_and_only_the_command_line_reads_them(ctx):
    assert ctx.benchmarks.named("planning").name == "vilpact-planning"
    assert ctx.benchmarks.named("vqa").name == "mmcomposition"
    assert ctx.benchmarks.named("toy-colors").name == "toy-colors"
    assert ctx.benchmarks.named("in-context").name == "icl"
    # a filter over stored runs (samples) takes the short names too, and keeps any other name as it is
    assert [ctx.benchmarks.canonical(n) for n in ("vqa", "gone-benchmark", None)] == [
        "mmcomposition",
        "gone-benchmark",
        None,
    ]
    with pytest.raises(NotFound):
        ctx.benchmarks.get("planning")  # a run is stored under the benchmark's own name only
    with pytest.raises(NotFound, match="unknown benchmark 'nope'"):
        ctx.benchmarks.named("nope")
    specs = ctx.benchmarks.all()
    assert specs["vilpact-planning"].compare == "backend.planning.leaderboard:compare_command"
    assert specs["mmcomposition"].compare == "backend.vqa.runs:compare_command"
    assert specs["icl"].report is not None and specs["toy-colors"].compare is None


def test_compare_refusals_keep_their_exit_code_and_message(settings, capsys):
    data = ["--data-dir", str(settings.data_dir)]
    cases = [
        (["--benchmark", "toy-colors", "--models", "a,b", "--circular"], CIRCULAR_COMPARE_ONLY),
        (["--benchmark", "vqa", "--circular"], CIRCULAR_COMPARE_ONLY),
        (["--benchmark", "toy-colors", "--models", "a"], "name at least two models"),
        (["--benchmark", "nope", "--models", "a,b"], "unknown benchmark 'nope'"),
    ]
    for argv, message in cases:
        assert main(["compare", *argv, *data]) == 2, argv
        assert message in capsys.readouterr().err


def test_compare_planning_runs_the_specs_own_comparison(tmp_path, capsys):
    ctx = planning_context(tmp_path, VILPACT_DATA)
    data = ["--data-dir", str(ctx.settings.data_dir)]
    assert main(["compare", "--benchmark", "planning", "--no-baseline-run", *data]) == 0
    by_alias = json.loads(capsys.readouterr().out)
    assert main(["compare", "--benchmark", "vilpact-planning", "--no-baseline-run", *data]) == 0
    assert json.loads(capsys.readouterr().out) == by_alias
    assert by_alias["runs"] == {}  # nothing run yet, and the blind prior was not asked to answer
