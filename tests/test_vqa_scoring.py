"""Partial-credit scoring (paper section 3.2) on a worked table computed by hand, the random row, and the
``score vqa`` command."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from backend.cli import main
from backend.vqa.items import make_item
from backend.vqa.scoring import aggregate, partial_credit, random_expected_score, random_table, score_predictions


def _item(item_id, category, n_options, answer, choice_type):
    return make_item(
        category=category,
        question=f"q {item_id}",
        options=[f"o{i}" for i in range(n_options)],
        answer=answer,
        choice_type=choice_type,
        images=["x.png"],
        item_id=item_id,
    )


# The worked table: (item, prediction, hand-computed score).
ITEMS = [
    _item("s-exact", "Object Perception", 4, "B", "single"),  # single, exact
    _item("s-wrong", "Object Perception", 4, "B", "single"),  # single, wrong letter
    _item("s-empty", "Attribute Perception", 4, "A", "single"),  # single, nothing selected
    _item("i-exact", "VL Composition Probing", 4, "AC", "indefinite"),  # indefinite, exact
    _item("i-under", "VL Composition Probing", 4, "ABC", "indefinite"),  # under-selection 2 of 3
    _item("i-over", "VL Composition Probing", 4, "AC", "indefinite"),  # over-selection
    _item("i-mixed", "Relation Reasoning", 4, "BD", "indefinite"),  # one right, one wrong
    _item("i-missing", "Relation Reasoning", 4, "BD", "indefinite"),  # no prediction at all
]
PREDICTIONS = {
    "s-exact": "B",
    "s-wrong": "C",
    "s-empty": "",
    "i-exact": "CA",
    "i-under": "AB",
    "i-over": "ABC",
    "i-mixed": "BC",
}
HAND = {
    "s-exact": 1,
    "s-wrong": 0,
    "s-empty": 0,
    "i-exact": 1,
    "i-under": Fraction(2, 3),
    "i-over": 0,
    "i-mixed": 0,
    "i-missing": 0,
}


def test_partial_credit_matches_the_hand_computed_table():
    by_id = {i.id: i for i in ITEMS}
    for item_id, prediction in PREDICTIONS.items():
        assert partial_credit(prediction, by_id[item_id].answer) == HAND[item_id], item_id


def test_aggregation_is_question_weighted_over_categories():
    table = score_predictions(ITEMS, {k: list(v) for k, v in PREDICTIONS.items()})
    # Perception: 3 questions (1, 0, 0); Probing: 3 questions (1, 2/3, 0); Reasoning: 2 questions (0, 0).
    assert table.dimensions["Perception"] == pytest.approx(1 / 3)
    assert table.dimensions["Probing"] == pytest.approx(5 / 9)
    assert table.dimensions["Reasoning"] == 0
    # Overall = (1 + 0 + 0 + 1 + 2/3 + 0 + 0 + 0) / 8, not the mean of the 4 category means.
    assert table.overall == pytest.approx((8 / 3) / 8)
    assert table.categories["Object Perception"] == 0.5
    assert table.categories["Text Rendering"] is None
    assert (table.questions, table.answered) == (8, 7)


def test_random_expectation_equals_brute_force_over_the_draw():
    from itertools import combinations

    letters = "ABCDE"
    for n in (2, 3, 5):
        for key_size in range(1, n + 1):
            key = letters[:key_size]
            subsets = [c for k in range(1, n + 1) for c in combinations(letters[:n], k)]
            brute = sum(partial_credit(s, key) for s in subsets) / len(subsets)
            assert random_expected_score(n, key_size, "indefinite") == brute
        assert random_expected_score(n, 1, "single") == Fraction(1, n)


def test_random_row_aggregates_expected_scores():
    table = random_table(ITEMS[:2] + ITEMS[3:4])
    # Perception: two single 4-option items -> 1/4 each; Probing: indefinite, 4 options, 2 correct -> 2/15.
    assert table.overall == pytest.approx((0.25 + 0.25 + 2 / 15) / 3)
    assert aggregate([], {}).overall is None


def test_score_vqa_command(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    with items.open("w") as f:
        for item in ITEMS:
            f.write(
                json.dumps(
                    {
                        "id": item.id,
                        "category": item.category,
                        "question": item.question,
                        "options": list(item.options),
                        "answer": list(item.answer),
                        "choice_type": item.choice_type,
                    }
                )
                + "\n"
            )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": k, "answer": list(v)}) + "\n" for k, v in PREDICTIONS.items()))
    assert main(["score", "vqa", "--items", str(items), "--predictions", str(predictions)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["overall"] == pytest.approx(1 / 3)
    assert result["dimensions"]["Probing"] == pytest.approx(5 / 9)
    assert result["missing_predictions"] == 1
    assert result["random_choice"]["questions"] == 8


def test_score_vqa_rejects_predictions_for_unknown_items(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"id": "a", "category": "Prob", "question": "q", "options": ["x", "y"], "answer": "A"}) + "\n"
    )
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": "zzz", "answer": ["A"]}\n')
    assert main(["score", "vqa", "--items", str(items), "--predictions", str(predictions)]) == 2
    assert "no item with id 'zzz'" in capsys.readouterr().err
