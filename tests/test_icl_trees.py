"""CoFe notations on the paper's worked examples (figure 4, appendix E / figure 11) and the two parsers."""

from __future__ import annotations

import json

import pytest

from backend.icl.grammar import SentenceParseError, parse_sentence
from backend.icl.trees import TreeError, parse_logical_form, tree_features, tree_from_json
from tests.conftest import COGS_BANK, COGS_TESTS


def test_figure_4_jackson_observed_a_baby():
    feats = tree_features(parse_sentence("Jackson observed a baby ."))
    assert feats.primitives == {"Jackson", "observed", "a", "baby"}
    assert feats.internal == {"sentence", "subject", "active-verb", "direct-object"}
    # Four one-depth sub-structures, as figure 4 says: root, subject, verb, object.
    assert feats.structures1 == {
        "sentence[subject active-verb direct-object]",
        "subject[Jackson]",
        "active-verb[observed]",
        "direct-object[a baby]",
    }
    # The combination the figure illustrates: (1) + (2) + (4).
    assert "sentence[subject[Jackson] active-verb direct-object[a baby]]" in feats.structures2
    # Every non-empty subset of the root's three internal children expanded once: 7 depth-2 CSS.
    assert len(feats.structures2) == 7
    assert feats.depth == 1


def test_appendix_e_jackson_in_a_room_observed_a_baby():
    tree = parse_sentence("Jackson in a room observed a baby .")
    feats = tree_features(tree)
    assert feats.primitives == {"Jackson", "in", "a", "room", "observed", "baby"}
    assert feats.internal == {"sentence", "subject", "pp-mod", "pp-s", "prep", "active-verb", "direct-object"}
    assert feats.structures1 == {
        "sentence[subject active-verb direct-object]",
        "subject[pp-mod]",
        "pp-mod[pp-s prep pp-mod]",
        "pp-s[Jackson]",
        "prep[in]",
        "pp-mod[a room]",
        "active-verb[observed]",
        "direct-object[a baby]",
    }
    # The aiming combination T_A of this PhraReco case (subject -> pp-mod) lies in S(T).
    assert "subject[pp-mod]" in feats.structures
    assert "subject[pp-mod[pp-s prep pp-mod]]" in feats.structures2
    assert "pp-mod[pp-s[Jackson] prep[in] pp-mod[a room]]" in feats.structures2
    assert feats.depth == 2  # one recursive pp-mod rule


def test_logical_form_tree_and_equal_depth_on_both_sides():
    x = parse_sentence("Jackson in a room observed a baby .")
    y = parse_logical_form("OBSERVE ( IN ( JACKSON , ROOM ) , BABY , NONE )")
    assert y.pretty() == (
        "CLAUSE[PRED-FUNC[OBSERVE] AGENT[PP-FUNC[PP-CONCAT[IN] PP-S[JACKSON] PP-FUNC[ROOM]]] THEME[BABY] RECIPIENT[NONE]]"
    )
    assert tree_features(x).depth == tree_features(y).depth == 2
    assert tree_features(y).primitives == {"OBSERVE", "IN", "JACKSON", "ROOM", "BABY", "NONE"}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("A rose was helped by a dog .", "sentence[subject[a rose] passive-verb[was helped] by-phrase[by a dog]]"),
        (
            "Emma gave Liam a cake .",
            "sentence[subject[Emma] active-verb[gave] indirect-object[Liam] direct-object[a cake]]",
        ),
        (
            "Emma gave a cake to Liam .",
            "sentence[subject[Emma] active-verb[gave] direct-object[a cake] indirect-object[to Liam]]",
        ),
        (
            "Olivia was slipped a pencil .",
            "sentence[subject[Olivia] passive-verb[was slipped] direct-object[a pencil]]",
        ),
        ("touch", "primitive[touch]"),
        (
            "Liam hoped that the dog slept .",
            "sentence[sentence[subject[Liam] active-verb[hoped]] conj[that] sentence[subject[the dog] active-verb[slept]]]",
        ),
    ],
)
def test_cogs_sentence_forms(sentence, expected):
    assert parse_sentence(sentence).pretty() == expected


def test_ccomp_chain_depth_counts_recursions():
    lf = "A ( B , NONE , NONE ) CCOMP C ( D , NONE , NONE ) CCOMP E ( NONE , F , NONE )"
    assert tree_features(parse_logical_form(lf)).depth == 3
    assert tree_features(parse_sentence("Emma hoped that Liam said that a cake grew .")).depth == 3


@pytest.mark.parametrize("bad", ["Emma the cake .", "The ate .", "Emma was .", "Emma ate a ."])
def test_unparsable_sentences_are_reported(bad):
    with pytest.raises(SentenceParseError, match="expected"):
        parse_sentence(bad)


@pytest.mark.parametrize("bad", ["EAT ( EMMA , NONE )", "EAT EMMA", "( , )", "EAT ( EMMA , NONE , NONE ) CCOMP"])
def test_malformed_logical_forms_are_reported(bad):
    with pytest.raises(TreeError):
        parse_logical_form(bad)


def test_supplied_trees():
    tree = tree_from_json(["S", ["NP", "Jackson"], ["VP", "slept"]])
    assert tree_features(tree).structures1 == {"S[NP VP]", "NP[Jackson]", "VP[slept]"}
    with pytest.raises(TreeError):
        tree_from_json(["S"])


def test_every_shipped_cogs_line_parses_with_equal_depths():
    """Every shipped bank line and test case: both sides parse and their depths agree (appendix C.2)."""
    for path in (COGS_BANK, COGS_TESTS / "test_longchain_like.jsonl", COGS_TESTS / "test_phrareco_like.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            x = tree_features(parse_sentence(record["input"].removeprefix("Form one: ")))
            y = tree_features(parse_logical_form(record["output"]))
            assert x.depth == y.depth, record
