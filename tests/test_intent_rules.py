from __future__ import annotations

import pytest

from backend.intents.rules import FUTURE_DIRECTED, PRESENT_DIRECTED, check_intent_pair, parse_intent

ACTIONS = ["Holding a cup/glass/bottle of something", "Drinking from a cup/glass/bottle", "Opening a book"]


@pytest.mark.parametrize(
    ("concrete", "high_level"),
    [
        ("S/He wants to drink a glass of water", "S/He is thirsty"),
        ("S/He wants to drink a glass of water", "S/He wants to quench the thirst"),
        ("she wants to read the news", "He is curious about the world"),
        ("S/He is getting ready for work", "S/He wants to earn a living."),
    ],
)
def test_the_papers_forms_pass(concrete, high_level):
    assert check_intent_pair(concrete, high_level, ACTIONS) == []


def test_forms_are_recognised():
    assert parse_intent("S/He wants to eat").form == FUTURE_DIRECTED
    assert parse_intent("S/He is hungry").form == PRESENT_DIRECTED
    assert parse_intent("He isn't sure") is None
    assert parse_intent("The person wants to eat") is None


@pytest.mark.parametrize(
    ("concrete", "high_level", "expected"),
    [
        ("", "S/He is thirsty", ["The concrete intent is empty"]),
        ("drink a glass of water", "S/He is thirsty", ["The concrete intent must start with"]),
        ("S/He wants to", "S/He is thirsty", ["The concrete intent needs real content"]),
        ("S/He wants to do something", "S/He is thirsty", ["The concrete intent needs real content"]),
        ("S/He wants to drink from a cup/glass/bottle", "S/He is thirsty", ["The concrete intent copies the action"]),
        ("S/He is thirsty", "S/He is thirsty.", ["must differ"]),
        (
            "S/He wants to ...",
            "whatever",
            ["The concrete intent needs real content", "The high-level intent must start"],
        ),
    ],
)
def test_each_failed_check_has_its_own_message(concrete, high_level, expected):
    problems = check_intent_pair(concrete, high_level, ACTIONS)
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected, strict=True):
        assert start in problem


def test_similarity_threshold_is_a_setting():
    text = "S/He wants to opening the book"
    assert check_intent_pair(text, "S/He is curious", ACTIONS, max_similarity=0.8) == []
    assert "copies the action" in check_intent_pair(text, "S/He is curious", ACTIONS, max_similarity=0.5)[0]


def test_every_form_the_page_lists_is_accepted_and_nothing_else():
    from backend.intents.rules import accepted_forms

    listed = [form.strip("“”") for form in accepted_forms().replace(" or ", ", ").split(", ")]
    assert len(listed) == 6
    for form in listed:
        assert parse_intent(form.replace("…", "hungry")) is not None, form
    for wrong in ("They want to eat", "S/he's hungry", "It is hungry", "He was hungry"):
        assert parse_intent(wrong) is None, wrong
