"""CoFe's one-side variants of equation 2 (section 5 / appendix C.6: NL side excluded, appendix D / Table 6:
source side only): a worked example by hand with one test case kept and one filtered out, equality with the
plain full-scan Algorithm 1, and `icl build --matching` writing only the kept test cases with their count."""

from __future__ import annotations

import json

import pytest

from backend.cli import main
from backend.errors import ValidationError
from backend.icl.build import build_case
from backend.icl.data import make_example, read_examples
from backend.icl.index import build_index
from backend.icl.matching import covered_sentence_rules, sentence_rules
from backend.icl.selection import PRESETS, cofe_select, preset_weights, reference_select
from backend.icl.selectors import SelectorSpec, make_selector
from tests.conftest import COGS_ASSETS, COGS_BANK

# Figure 14's situation: a double-object dative and its prepositional twin share one logical form.
DATIVE_BANK = [
    ("Emma gave Liam a cake .", "GIVE ( EMMA , CAKE , LIAM )"),
    ("Emma gave a cake to Liam .", "GIVE ( EMMA , CAKE , LIAM )"),
    ("Ava slept .", "SLEEP ( AVA , NONE , NONE )"),
]
DOUBLE_OBJECT = ("Noah gave Ava a donut .", "GIVE ( NOAH , DONUT , AVA )")
PREPOSITIONAL = ("Noah gave a donut to Ava .", "GIVE ( NOAH , DONUT , AVA )")


def _example(pair):
    return make_example({"input": pair[0], "output": pair[1]})


@pytest.fixture(scope="module")
def dative():
    bank = [_example(p) for p in DATIVE_BANK]
    return build_index(bank), bank


def _weights(matching):
    return PRESETS["full_similarity"].with_changes(matching=matching)


def test_sentence_rule_is_the_n_production_with_sentence_on_the_left():
    chained = make_example(
        {
            "input": "Emma said that Liam slept .",
            "output": "SAY ( EMMA , NONE , NONE ) CCOMP SLEEP ( LIAM , NONE , NONE )",
        }
    )
    # the R-production sentence -> sentence conj sentence is not a sentence rule; each clause's N-production is
    assert sorted(sentence_rules(chained.source)) == ["sentence[subject active-verb]"]
    assert sentence_rules(_example(DOUBLE_OBJECT).source) == {
        "sentence[subject active-verb indirect-object direct-object]"
    }


def test_worked_example_one_test_case_kept_one_filtered_out(dative):
    """Target side only (Match(X, X_c) removed): both datives of the bank have the test's logical form shape
    CLAUSE[PRED-FUNC AGENT THEME RECIPIENT], share GIVE and nothing else on Y: 100 * 1 + 3 structures
    (CLAUSE[...], PRED-FUNC[GIVE], CLAUSE[PRED-FUNC[GIVE] AGENT THEME RECIPIENT]) = 103 each; the tie goes to
    line 0, the double-object form.

    - "Noah gave Ava a donut ." is a double-object sentence: line 0 covers its sentence rule -> filtered out;
    - "Noah gave a donut to Ava ." is prepositional: line 0's rule differs -> kept.

    With both sides matched, each test gets its own form (line 0 for the first, line 1 for the second)."""
    index, bank = dative
    for pair, expect_kept in ((DOUBLE_OBJECT, False), (PREPOSITIONAL, True)):
        test = _example(pair)
        chosen = cofe_select(index, test, _weights("target_only"), n=1)
        assert [(c.example_id, c.primitive_coverage, c.structural_similarity, c.score) for c in chosen] == [
            (0, 1, 3, 103.0)
        ]
        covered = covered_sentence_rules(test, [bank[0]])
        assert bool(covered) is not expect_kept
        result = build_case(make_selector(index, SelectorSpec(weights=_weights("target_only"))), test, n=1)
        assert result.kept is expect_kept and result.covered_sentence_rules == covered
    both = [
        cofe_select(index, _example(p), _weights("both"), n=1)[0].example_id for p in (DOUBLE_OBJECT, PREPOSITIONAL)
    ]
    assert both == [0, 1]


def test_source_only_drops_the_target_term(dative):
    """Source side only: "Noah gave a donut to Ava ." shares X:gave, X:a, X:to with line 1 (300) and 3 one-depth
    source structures (sentence[...], active-verb[gave], the depth-2 sentence with the verb expanded)."""
    index, bank = dative
    chosen = cofe_select(index, _example(PREPOSITIONAL), _weights("source_only"), n=1)[0]
    assert (chosen.example_id, chosen.primitive_coverage, chosen.structural_similarity) == (1, 3, 3)
    assert all(key.startswith("X:") for key in chosen.new_primitives + chosen.new_structures)
    result = build_case(make_selector(index, SelectorSpec(weights=_weights("source_only"))), _example(DOUBLE_OBJECT))
    assert result.kept  # only target_only filters test cases


def test_complexity_penalty_counts_the_matched_side_only(dative):
    index, _ = dative
    low = PRESETS["low_complexity"].with_changes(matching="target_only")
    chosen = cofe_select(index, _example(PREPOSITIONAL), low, n=1)[0]
    assert chosen.score == pytest.approx(103 - 0.01 * 1)  # depth(Y_c) = 1, X_c not counted


@pytest.mark.parametrize("matching", ["source_only", "target_only"])
@pytest.mark.parametrize("preset", ["full_similarity", "high_diversity", "low_complexity"])
def test_fast_selection_equals_full_scan_for_each_variant(matching, preset):
    bank = [make_example(json.loads(line)) for line in COGS_BANK.read_text().splitlines()[:500]]
    tests = (
        read_examples(COGS_ASSETS / "test_phrareco_like.jsonl")[:2]
        + read_examples(COGS_ASSETS / "test_longchain_like.jsonl")[:1]
    )
    index = build_index(bank)
    weights = PRESETS[preset].with_changes(matching=matching)
    for test in tests:
        fast = [c.example_id for c in cofe_select(index, test, weights, n=10)]
        assert fast == reference_select(bank, test, weights, n=10)


def test_matching_is_checked():
    with pytest.raises(ValidationError, match="unknown matching"):
        PRESETS["full_similarity"].with_changes(matching="nl")
    with pytest.raises(ValidationError, match="CoFe variant"):
        preset_weights("bm25", type("Args", (), {"matching": "target_only"})())


def test_build_target_only_writes_the_kept_cases_and_counts_them(tmp_path, capsys):
    bank = tmp_path / "bank.jsonl"
    bank.write_text(
        "\n".join(
            [
                *COGS_BANK.read_text().splitlines()[:1500],
                *(json.dumps({"input": i, "output": o}) for i, o in DATIVE_BANK),
            ]
        )
        + "\n"
    )
    tests = tmp_path / "test_dative_like.jsonl"
    tests.write_text(
        "\n".join(json.dumps({"input": i, "output": o}) for i, o in (DOUBLE_OBJECT, PREPOSITIONAL))
        + "\n"
        + "\n".join(COGS_ASSETS.joinpath("test_phrareco_like.jsonl").read_text().splitlines()[:6])
        + "\n"
    )
    base = ["icl", "build", "--bank", str(bank), "--tests", str(tests), "--data-dir", str(tmp_path / "data")]
    summaries = {}
    for matching in ("both", "source_only", "target_only"):
        out = tmp_path / f"{matching}.jsonl"
        assert main([*base, "--matching", matching, "--out", str(out)]) == 0
        summary = json.loads(capsys.readouterr().out)
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert summary["matching"] == matching and summary["test_cases"] == 8
        assert summary["test_cases_kept"] == len(lines) == summary["table"]["all"]["instances"]
        assert f"test cases kept: {len(lines)} of 8" in summary["markdown"]
        summaries[matching] = (summary, lines)
    assert summaries["both"][0]["test_cases_kept"] == summaries["source_only"][0]["test_cases_kept"] == 8
    kept = summaries["target_only"][1]
    assert 0 < len(kept) < 8
    examples = read_examples(tests)
    bank_examples = read_examples(bank, default_category="")
    for line in kept:  # no kept case's sentence rule is in a chosen example
        test = examples[line["line"]]
        assert not covered_sentence_rules(test, [bank_examples[i] for i in line["selected"]])
    selector = make_selector(build_index(bank_examples), SelectorSpec(weights=_weights("target_only")))
    for number, test in enumerate(examples):  # every dropped case had a covered sentence rule
        if number not in {k["line"] for k in kept}:
            assert build_case(selector, test).covered_sentence_rules
    with pytest.raises(SystemExit):
        main([*base, "--matching", "sideways", "--out", str(tmp_path / "x.jsonl")])
    capsys.readouterr()
    assert main([*base, "--setting", "bm25", "--matching", "target_only", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "matching one side only is a CoFe variant; 'bm25' is a baseline" in capsys.readouterr().err
