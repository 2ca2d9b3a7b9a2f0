"""CoFe greedy selection (Algorithm 1, equations 1-2): hand-computed example, equality with the plain full-scan
Algorithm 1, aiming-combination exclusion, presets, baselines, orders, fictional words and statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backend.icl.data import make_example, read_examples
from backend.icl.index import build_index
from backend.icl.prompts import fictional_words, order_examples
from backend.icl.selection import PRESETS, aiming_keys, cofe_select, reference_select
from backend.icl.selectors import SelectorSpec, make_selector, setting_names
from backend.icl.stats import aggregate, case_stats
from tests.conftest import COGS_BANK, COGS_BANK_MORE, COGS_TESTS

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)

TINY_BANK = [
    ("Liam ate .", "EAT ( LIAM , NONE , NONE )"),
    ("Emma slept .", "SLEEP ( EMMA , NONE , NONE )"),
    ("Emma ate the cake .", "EAT ( EMMA , CAKE , NONE )"),
]


@pytest.fixture(scope="module")
def tiny():
    bank = [make_example({"input": i, "output": o}) for i, o in TINY_BANK]
    test = make_example({"input": "Emma ate .", "output": "EAT ( EMMA , NONE , NONE )"})
    return build_index(bank), bank, test


@pytest.fixture(scope="module")
def cogs_sample():
    """The release's first 3,000 bank lines (2,000 shipped in assets/, 1,000 in tests/data/) and 12 test cases of
    each category."""
    lines = COGS_BANK.read_text().splitlines() + COGS_BANK_MORE.read_text().splitlines()
    bank = [make_example(json.loads(line)) for line in lines]
    tests = []
    for name in ("test_longchain_like.jsonl", "test_phrareco_like.jsonl"):
        tests += read_examples(COGS_TESTS / name)
    return build_index(bank), bank, tests


def test_hand_computed_scores(tiny):
    """Test "Emma ate": P = {X:Emma, X:ate, Y:EAT, Y:EMMA, Y:NONE}.

    Line 2 shares all 5 primitives and 13 structures (X: active-verb[ate], subject[Emma]; Y: AGENT[EMMA],
    RECIPIENT[NONE], PRED-FUNC[EAT], the one-depth CLAUSE and the 7 depth-2 CLAUSEs that leave THEME
    unexpanded): 500 + 13. Lines 0 and 1 share 3 primitives and 14 structures each.
    """
    index, _, test = tiny
    first = cofe_select(index, test, PRESETS["full_similarity"], n=1)[0]
    assert (first.example_id, first.primitive_coverage, first.structural_similarity, first.score) == (2, 5, 13, 513.0)
    assert len(first.new_primitives) == 5 and len(first.new_structures) == 13
    picks = cofe_select(index, test, PRESETS["full_similarity"], n=3)
    assert [(c.example_id, c.primitive_coverage, c.structural_similarity) for c in picks] == [
        (2, 5, 13),
        (0, 0, 14),
        (1, 0, 14),
    ]


def test_diversity_counts_only_uncovered_structures(tiny):
    """After line 2, line 0 still adds sentence[subject active-verb], sentence[subject active-verb[ate]],
    THEME[NONE] and the 4 depth-2 CLAUSEs with THEME[NONE] and AGENT unexpanded: 7 (line 1 likewise 7, tie,
    earlier line first). Line 1 then keeps sentence[subject[Emma] active-verb] and the two CLAUSEs expanding
    both AGENT[EMMA] and THEME[NONE] but not PRED-FUNC: 3."""
    index, _, test = tiny
    picks = cofe_select(index, test, PRESETS["high_diversity"], n=3)
    assert [(c.example_id, c.structural_similarity) for c in picks] == [(2, 13), (0, 7), (1, 3)]


def test_complexity_penalty_uses_w_c_from_equation_1(tiny):
    index, bank, test = tiny
    low = cofe_select(index, test, PRESETS["low_complexity"], n=1)[0]
    # depth 1 on both sides: 500 + 13 - 0.01 * (1 + 1)
    assert low.score == pytest.approx(513 - 0.02)
    high = cofe_select(index, test, PRESETS["high_complexity"], n=1)[0]
    assert high.score == pytest.approx(513 + 0.02)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_fast_selection_equals_full_scan_algorithm_1(cogs_sample, preset):
    _, bank, tests = cogs_sample
    bank = bank[:600]
    index = build_index(bank)
    for test in (tests[0], tests[-1]):
        fast = [c.example_id for c in cofe_select(index, test, PRESETS[preset], n=10)]
        assert fast == reference_select(bank, test, PRESETS[preset], n=10)


def test_no_example_with_a_pp_on_the_subject_for_phrareco(cogs_sample):
    index, bank, tests = cogs_sample
    phrareco = [t for t in tests if t.category == "phrareco"]
    assert phrareco
    for test in phrareco:
        assert "X:subject[pp-mod]" in aiming_keys(test)
        for name in setting_names():
            if name in {"embedding", "mmr"}:
                continue
            chosen = make_selector(index, SelectorSpec(name=name)).select(test, 10)
            assert len(chosen) == 10
            for c in chosen:
                assert "subject[pp-mod]" not in bank[c.example_id].source.structures1


def test_presets_fill_ten_examples_and_cover_primitives(cogs_sample):
    index, bank, tests = cogs_sample
    rows = []
    for test in tests:
        chosen = cofe_select(index, test, PRESETS["full_similarity"], n=10)
        assert len(chosen) == 10 and len({c.example_id for c in chosen}) == 10
        rows.append((test.category, case_stats(test, [bank[c.example_id] for c in chosen])))
    table = aggregate(rows)
    assert table["all"]["T_N"] == 1.0
    assert table["all"]["T_L"] > 0.97


def test_embedding_and_mmr_baselines(cogs_sample, tmp_path):
    index, bank, tests = cogs_sample
    small = build_index(bank[:80])
    for name in ("embedding", "mmr"):
        selector = make_selector(small, SelectorSpec(name=name, mmr_pool=30), cache_dir=tmp_path)
        chosen = selector.select(tests[-1], 10)
        assert len({c.example_id for c in chosen}) == 10
    assert list(tmp_path.glob("bank-*.npy"))
    knn = make_selector(small, SelectorSpec(name="embedding"), cache_dir=tmp_path)
    vectors = knn.bank_vectors()
    sims = vectors @ knn.query_vector(tests[-1].input)
    best = [c.example_id for c in knn.select(tests[-1], 3)]
    assert np.allclose(sorted(sims[best], reverse=True), sims[best])
    batched = make_selector(small, SelectorSpec(name="embedding"), cache_dir=tmp_path)
    batched.prepare_queries([t.input for t in tests])
    assert [c.example_id for c in batched.select(tests[-1], 3)] == best


def test_bm25_prefers_shared_words(tiny):
    index, bank, test = tiny
    chosen = make_selector(index, SelectorSpec(name="bm25")).select(test, 1)
    assert chosen[0].example_id == 2  # shares both "Emma" and "ate"


def test_random_is_seeded(cogs_sample):
    index, _, tests = cogs_sample
    a = make_selector(index, SelectorSpec(name="random", seed=1)).select(tests[0], 10)
    b = make_selector(index, SelectorSpec(name="random", seed=1)).select(tests[0], 10)
    c = make_selector(index, SelectorSpec(name="random", seed=2)).select(tests[0], 10)
    assert [x.example_id for x in a] == [x.example_id for x in b] != [x.example_id for x in c]


def test_orders_and_fictional_words(tiny):
    index, bank, test = tiny
    chosen = cofe_select(index, test, PRESETS["full_similarity"], n=3)
    # structure closer: the highest structural_similarity last; ties keep the earlier pick nearer the test
    assert [c.example_id for c in order_examples(chosen, "structure_closer")] == [2, 1, 0]
    assert [c.example_id for c in order_examples(chosen, "atom_closer")] == [1, 0, 2]
    shuffled = order_examples(chosen, "random", seed=3)
    assert sorted(c.example_id for c in shuffled) == [0, 1, 2]
    outputs, mapping = fictional_words([bank[0].output, test.output], seed=5)
    assert outputs[0].split()[0] == outputs[1].split()[0] == mapping["EAT"]
    assert all(len(mapping[w]) == len(w) for w in mapping)
    assert outputs[1].replace(mapping["EMMA"], "X").count("X") >= 1
