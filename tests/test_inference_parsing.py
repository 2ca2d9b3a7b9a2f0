"""Answer parsing on realistic model outputs: the table in tests/data/answer_parsing.jsonl, grouped by shape
(answer tags, boxed, final answer after a reasoning trace, hedged sentences, joined and parenthesised
letters, lists across lines, ...), each row with the reading it must give; plus a few rules stated alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from backend.inference.parsing import parse_choice, parse_text, trace_choice, trace_text

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
        "JSON",
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


def test_json_shapes_are_all_in_the_table():
    """Issue 28 §5: an object's answer field, a list of letters, a code block, JSON after reasoning text."""
    json_rows = [r for r in ROWS if r["group"] == "JSON"]
    outputs = [r["output"] for r in json_rows if r["expected"] not in STATUS]
    assert any(o.startswith('{"answer":') for o in outputs)
    assert any(o.startswith("[") for o in outputs)
    assert any(o.startswith("```") for o in outputs)
    assert any(not o.startswith(("{", "[", "```")) for o in outputs)  # after reasoning text
    assert sum(r["expected"] in STATUS for r in json_rows) >= 8  # and what is not an answer stays unread


def test_a_number_in_json_is_never_a_letter():
    for value in ("0", "1", "2", "3.0", "true"):
        assert parse_choice(f'{{"answer": {value}}}', 4).status == "unparsed", value


def test_an_option_echoed_inside_a_longer_phrase_is_not_that_option():
    options = ("a football", "a tennis ball", "a basketball", "a golf ball")
    assert parse_choice("It looks like a football field", 4, options).status == "unparsed"
    assert parse_choice('{"answer": "It looks like a football field"}', 4, options).status == "unparsed"
    assert parse_choice("It looks like a football.", 4, options).letters == frozenset("A")
    assert parse_choice('{"answer": "a football"}', 4, options).letters == frozenset("A")
    assert parse_choice("a football-shaped cake", 4, options).status == "unparsed"


def test_the_trace_names_every_rule_tried_up_to_the_reading():
    trace = trace_choice("The person stands up. Answer: C", 6)
    rules = [(step.rule, step.outcome) for step in trace.steps]
    assert rules == [("JSON and answer markers", "nothing"), ("letter list", "nothing"), ("answer cue", "read")]
    assert trace.result.how == "cue" == parse_choice("The person stands up. Answer: C", 6).how
    unread = trace_choice("The image shows a kitchen.", 4, ("a", "b", "c", "d"))
    assert unread.result.status == "unparsed" and unread.steps[-1].rule == "refusal"
    assert {step.outcome for step in unread.steps} == {"nothing"}  # no rule read it, and each says so


def test_the_trace_shows_what_json_held():
    trace = trace_choice('<think>B?</think>```json\n{"answer": "D"}\n```', 4)
    assert trace.result.letters == frozenset("D") and trace.result.how == "JSON (code block): letters"
    assert trace.steps[0].rule == "reasoning trace"
    assert any(step.rule == "JSON" and "field 'answer'" in step.detail for step in trace.steps)
    disagree = trace_choice('{"answer": "B"}\nFinal answer: C', 4)
    assert disagree.result.how == "JSON and answer markers disagree"


@pytest.mark.parametrize("row", ROWS[:40] + [r for r in ROWS if r["group"] == "JSON"])
def test_the_trace_reads_what_the_parser_reads(row):
    options = VILPACT[: row["options"]]
    multi = row["choice"] == "indefinite"
    assert trace_choice(row["output"], row["options"], options, multi).result == parse_choice(
        row["output"], row["options"], options, multi
    )


def test_free_text_given_as_json():
    assert parse_text('{"answer": "LIKE ( GIRL , CAKE , NONE )"}').text == "LIKE ( GIRL , CAKE , NONE )"
    assert parse_text('{"answer": 3}').status == "unparsed"
    assert trace_text("Answer: EAT ( A , B , NONE )").steps[-1].rule == "first line"
