"""Answer parsing on real-looking model outputs: single and indefinite choice, A-F, nasty ones."""

from __future__ import annotations

import pytest

from backend.inference.parsing import parse_choice, parse_text

VILPACT = (
    "walk through doorway,turn on light",
    "open a book,read a book",
    "drink from cup,put cup somewhere",
    "take shoes from somewhere,put on shoe",
    "open refrigerator,take food from somewhere",
    "sit on chair,watch television",
)

# (model output, number of options, multi, expected letters or status)
SINGLE = [
    ("C", 6, "C"),
    ("(B)", 6, "B"),
    ("[D].", 6, "D"),
    ("b", 4, "B"),
    ("The answer is (C).", 6, "C"),
    ("The answer is C", 6, "C"),
    ("Answer: b", 4, "B"),
    ("ANSWER: E", 6, "E"),
    ("**B**", 4, "B"),
    ("**Answer:** D", 6, "D"),
    ("C. Opening a book", 6, "C"),
    ("(A) walk through doorway, turn on light", 6, "A"),
    ("B) The person drinks.", 4, "B"),
    ("F: sit on chair, watch television", 6, "F"),
    ("The correct answer is option B.", 6, "B"),
    ("The correct option is (E) because the person picks up shoes.", 6, "E"),
    ("I would choose D.", 6, "D"),
    ("My answer: A", 4, "A"),
    ("Based on the video, the person is in a kitchen.\nAnswer: C", 6, "C"),
    ("Let's think. Option A is unlikely, option B fits.\nFinal answer: B", 6, "B"),
    ("The answer is B. Wait, reconsidering... Final answer: D", 6, "D"),
    ("B is the correct answer.", 4, "B"),
    ("Option C is correct", 6, "C"),
    ("After looking at the frames, I think **E** fits best.", 6, "E"),
    ("The answer is a.", 4, "A"),
    ("open a book,read a book", 6, "B"),
    ("The answer is: drink from cup, put cup somewhere", 6, "C"),
    ("I think the person will sit on chair, watch television.", 6, "F"),
    ("  c  ", 4, "C"),
    ("answer: (F)", 6, "F"),
]
FAILURES = [
    ("", 6, "unparsed"),
    ("A or C", 6, "unparsed"),
    ("It could be B or D.", 6, "unparsed"),
    ("G", 6, "unparsed"),
    ("The answer is G.", 6, "unparsed"),
    ("E", 4, "unparsed"),
    ("I cannot determine the answer from the video.", 6, "refusal"),
    ("Sorry, I can't help with that.", 4, "refusal"),
    ("None of the options are correct.", 6, "refusal"),
    ("There is not enough information to decide.", 6, "refusal"),
    ("The answer is a book on the table.", 6, "unparsed"),
    ("A person is walking through the room.", 6, "unparsed"),
    ("The answer is B. No wait, the answer is C.", 6, "unparsed"),
    ("The person does not open a book.", 6, "unparsed"),
    ("Hmm.", 4, "unparsed"),
    ("I think it is either open a book or drink from cup.", 6, "unparsed"),
]
MULTI = [
    ("A, C", 6, "AC"),
    ("A and C", 6, "AC"),
    ("Both B & D", 6, "BD"),
    ("The correct options are A, C and E.", 6, "ACE"),
    ("Answer: (A) and (D)", 6, "AD"),
    ("**A**, **F**", 6, "AF"),
    ("B/D", 4, "BD"),
    ("answers: b, c", 4, "BC"),
    ("C", 6, "C"),
    ("Correct answers: A, G", 6, "unparsed"),
]


def _check(output: str, count: int, multi: bool, expected: str, options=()) -> None:
    parsed = parse_choice(output, count, options, multi)
    if expected in {"unparsed", "refusal"}:
        assert parsed.status == expected, (output, parsed)
        assert parsed.letters == frozenset()
    else:
        assert parsed.status == "ok", (output, parsed)
        assert parsed.letters == frozenset(expected), (output, parsed)


@pytest.mark.parametrize(("output", "count", "expected"), SINGLE + FAILURES)
def test_single_choice(output, count, expected):
    _check(output, count, False, expected, VILPACT[:count])


@pytest.mark.parametrize(("output", "count", "expected"), MULTI)
def test_indefinite_choice(output, count, expected):
    _check(output, count, True, expected, VILPACT[:count])


def test_table_is_large_enough():
    assert len(SINGLE) + len(FAILURES) + len(MULTI) >= 40


def test_echoed_option_texts_for_indefinite_choice():
    parsed = parse_choice("open a book,read a book; sit on chair,watch television", 6, VILPACT, multi=True)
    assert parsed.letters == frozenset("BF")


def test_two_letters_for_a_single_choice_item_are_parsed_and_scored_wrong():
    parsed = parse_choice("A, C", 4)
    assert parsed.ok and parsed.letters == frozenset("AC")


def test_free_text_answers():
    assert parse_text("  \nOutput: 'LIKE ( GIRL , CAKE , NONE )'").text == "LIKE ( GIRL , CAKE , NONE )"
    assert parse_text("   ").status == "unparsed"
