"""Answer parsing on realistic model outputs: the table in tests/data/answer_parsing.jsonl, grouped by shape
(answer tags, boxed, final answer after a reasoning trace, hedged sentences, joined and parenthesised
letters, lists across lines, ...), each row with the reading it must give; plus a few rules stated alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from backend.inference.parsing import parse_choice, parse_text

TABLE = Path(__file__).parent / "data" / "answer_parsing.jsonl"
# The options behind every row (the first ``options`` of them): ViLPAct's future-intent texts, A-F.
VILPACT = (
    "walk through doorway,turn on light",
    "open a book,read a book",
    "drink from cup,put cup somewhere",
    "take shoes from somewhere,put on shoe",
    "open refrigerator,take food from somewhere",
    "sit on chair,watch television",
)
ROWS = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines() if line.strip()]
STATUS = {"refused": "refusal", "unparsed": "unparsed"}


def reading(row: dict) -> str:
    """The table's notation for a parse: sorted letters, ``refused`` or ``unparsed``."""
    parsed = parse_choice(row["output"], row["options"], VILPACT[: row["options"]], row["choice"] == "indefinite")
    if parsed.status != "ok":
        assert parsed.letters == frozenset()
        return {"refusal": "refused", "unparsed": "unparsed"}[parsed.status]
    return "".join(sorted(parsed.letters))


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['group']}:{i}" for i, r in enumerate(ROWS)])
def test_table_row(row):
    assert reading(row) == row["expected"], (row["output"], parse_choice(row["output"], row["options"]))


def test_table_is_large_and_covers_every_shape_and_outcome():
    assert len(ROWS) >= 150
    groups = Counter(r["group"] for r in ROWS)
    for shape in (
        "answer tags",
        "boxed",
        "final answer",
        "reasoning trace",
        "hedged sentence",
        "joined letters",
        "parenthesised letters",
        "list across lines",
        "letter with option text",
        "ambiguous",
        "refusal",
    ):
        assert groups[shape] >= 5, shape
    outcomes = Counter(r["expected"] if r["expected"] in STATUS else "answered" for r in ROWS)
    assert outcomes["answered"] >= 90 and outcomes["unparsed"] >= 40 and outcomes["refused"] >= 10
    assert {r["choice"] for r in ROWS} == {"single", "indefinite"}
    assert all(1 < r["options"] <= len(VILPACT) for r in ROWS)


def test_parenthesised_letters_are_never_read_as_the_first_alone():
    """Issue 14: "(B)(D)" used to read as B alone, a wrong partial answer."""
    assert parse_choice("(B)(D)", 4, multi=True).letters == frozenset("BD")
    assert parse_choice("Answer: (B)(D)", 4, multi=True).letters == frozenset("BD")


def test_reasoning_is_not_read_only_what_follows_it():
    parsed = parse_choice("<think>Surely A. Answer: A</think>\nAnswer: C", 6)
    assert parsed.letters == frozenset("C") and parsed.how == "cue"
    assert parse_choice("<think>Answer: A", 6).how == "reasoning never finished"


def test_the_rule_used_is_recorded():
    assert parse_choice("<answer>C</answer>", 6).how.startswith("answer marker")
    assert parse_choice("I think the most plausible future is option (F).", 6).how == "hedged sentence"
    assert parse_choice("B. drink from cup, put cup somewhere", 6, VILPACT).how == "letter and option text disagree"


def test_two_letters_for_a_single_choice_item_are_parsed_and_scored_wrong():
    parsed = parse_choice("A, C", 4)
    assert parsed.ok and parsed.letters == frozenset("AC")


def test_free_text_answers():
    assert parse_text("  \nOutput: 'LIKE ( GIRL , CAKE , NONE )'").text == "LIKE ( GIRL , CAKE , NONE )"
    assert parse_text("   ").status == "unparsed"
    assert parse_text("<think>LIKE ( A , B , NONE )</think>\nEAT ( GIRL , CAKE , NONE )").text.startswith("EAT")
    assert parse_text("I'm sorry, I cannot answer that.").status == "refusal"
    assert parse_text("SORRY ( GIRL , NONE , NONE )").status == "ok"  # a logical form, not a refusal
