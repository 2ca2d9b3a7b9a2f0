"""The qualification a new study worker takes before real tasks (issue 16 §2).

Two parts:

* a quiz on the instructions, built from ViLPAct's rules for intents (paper, section "Intent annotation";
  backend/intents/rules.py): an intent uses the form "S/He wants to …" or "S/He is …", has real content, does
  not copy an action, and the concrete and high-level intents differ. Each item shows the actions of a sequence
  and a pair of intents and asks whether the pair is acceptable; the key is what ``check_intent_pair`` says,
  so the quiz and the submit check can never disagree (tests/test_campaigns.py checks the keys by hand);
* per kind of work, a few gold items with known answers (:data:`GOLD`).

A worker gets ``qualification_size`` items drawn from the pool of their study's kind (the rule items count for
intent studies only), the same items on every visit (seeded by study and worker id), and passes with a share of
right answers of at least ``pass_mark``. An unanswered item counts as wrong.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from backend.intents.rules import check_intent_pair

ACCEPTABLE, NOT_ACCEPTABLE = "Acceptable", "Not acceptable"


@dataclass(frozen=True)
class QuizItem:
    id: str
    prompt: str
    options: tuple[str, ...]
    answer: int  # index into options
    why: str  # the rule it tests, said to nobody before the answer


def _rule_item(item_id: str, actions: list[str], concrete: str, high_level: str, why: str) -> QuizItem:
    acceptable = not check_intent_pair(concrete, high_level, actions)
    prompt = (
        f"The actions are: {'; '.join(actions)}. A worker wrote the concrete intent “{concrete}” and the "
        f"high-level intent “{high_level}”. Is this pair acceptable?"
    )
    return QuizItem(item_id, prompt, (ACCEPTABLE, NOT_ACCEPTABLE), 0 if acceptable else 1, why)


DRINK = [
    "Holding a cup/glass/bottle of something",
    "Pouring something into a cup/glass/bottle",
    "Drinking from a cup/glass/bottle",
]
LEAVE = ["Putting on shoe/shoes", "Opening a door", "Walking through a doorway"]
RULE_ITEMS: tuple[QuizItem, ...] = (
    _rule_item(
        "rule-good-drink",
        DRINK,
        "S/He wants to drink a glass of water",
        "S/He is thirsty",
        "both use a permitted form, say why the person acts, and differ",
    ),
    _rule_item(
        "rule-form",
        DRINK,
        "Drinking from a cup",
        "S/He is thirsty",
        "every intent starts with S/He (She, He), then “wants to …” or “is …”",
    ),
    _rule_item(
        "rule-copy",
        LEAVE,
        "S/He is opening a door",
        "S/He wants to go to work",
        "an intent must not repeat an action of the sequence",
    ),
    _rule_item(
        "rule-differ",
        ["Tidying up a closet/cabinet", "Putting clothes somewhere"],
        "S/He wants to tidy up the room",
        "S/He wants to tidy up the room",
        "the concrete and the high-level intent must differ",
    ),
    _rule_item(
        "rule-content",
        ["Taking a book from somewhere", "Sitting in a chair"],
        "S/He wants to something",
        "S/He is bored",
        "an intent needs real content after “S/He wants to”",
    ),
    _rule_item(
        "rule-good-leave",
        LEAVE,
        "S/He wants to leave the house",
        "S/He is in a hurry to get to work",
        "both use a permitted form, say why the person acts, and differ",
    ),
)

GOLD: dict[str, tuple[QuizItem, ...]] = {
    "intents": (
        QuizItem(
            "gold-intent-book",
            "The actions are: Taking a book from somewhere; Opening a book; Sitting in a chair. Which is the best "
            "high-level intent?",
            ("S/He is opening a book", "S/He wants to relax with a good story", "Reading"),
            1,
            "a high-level intent says the goal, in a permitted form, without repeating an action",
        ),
        QuizItem(
            "gold-intent-fridge",
            "The actions are: Opening a refrigerator; Taking food from somewhere; Someone is eating something. Which is the "
            "best concrete intent?",
            ("S/He wants to eat a snack", "S/He is opening a refrigerator", "The person opens the fridge"),
            0,
            "a concrete intent names the activity the actions serve",
        ),
    ),
    "planning": (
        QuizItem(
            "gold-plan-drink",
            "Observed: Holding a cup/glass/bottle of something; Pouring something into a cup/glass/bottle. Intent: S/He wants to drink a glass of water. "
            "Which future is the most plausible?",
            (
                "Drinking from a cup/glass/bottle",
                "Closing a refrigerator; Throwing a broom somewhere",
                "Lying on a bed",
            ),
            0,
            "the future that completes the intent from what was observed",
        ),
        QuizItem(
            "gold-plan-order",
            "Observed: Sitting on sofa/couch. Intent: S/He wants to read a book. Which future can happen in this "
            "order?",
            (
                "Opening a book; Taking a book from somewhere",
                "Taking a book from somewhere; Opening a book",
                "Closing a book; Putting a book somewhere",
            ),
            1,
            "an action can only use what earlier actions made available (a book is taken before it is opened)",
        ),
        QuizItem(
            "gold-plan-none",
            "Observed: Walking through a doorway. Intent: S/He wants to cook dinner. The candidates are: "
            "Lying on a bed; Holding a pillow. What do you answer?",
            ("Lying on a bed", "Holding a pillow", "None is plausible"),
            2,
            "when no candidate serves the intent, say none is plausible",
        ),
    ),
    "vqa": (
        QuizItem(
            "gold-vqa-indefinite",
            "An indefinite-choice question asks which options are right. How many options may you tick?",
            ("Exactly one", "Every option that is right (one or more)", "Always all of them"),
            1,
            "indefinite-choice questions may have several right options",
        ),
        QuizItem(
            "gold-vqa-look",
            "A question asks “What colour is the cup on the left?” and the image shows a red cup on the left and "
            "a blue cup on the right. What is the answer?",
            ("Red", "Blue", "Red and blue"),
            0,
            "answer from what the image shows, for the thing the question names",
        ),
        QuizItem(
            "gold-vqa-count",
            "A question asks “How many coins are in the image?” and the image shows four coins. What is the answer?",
            ("3", "4", "5"),
            1,
            "count what the question asks for",
        ),
    ),
}


def pool_for(kind: str) -> tuple[QuizItem, ...]:
    """Every item a worker of this kind of study can be asked."""
    return (RULE_ITEMS if kind == "intents" else ()) + GOLD.get(kind, ())


def draw_quiz(kind: str, size: int, study_id: int, worker_id: str) -> list[QuizItem]:
    """The worker's ``size`` items: a fixed draw for this study and worker, so a reload shows the same quiz."""
    pool = list(pool_for(kind))
    return random.Random(f"{study_id}:{worker_id}").sample(pool, min(size, len(pool)))


@dataclass(frozen=True)
class QuizResult:
    right: int
    asked: int
    passed: bool

    @property
    def score(self) -> float:
        return self.right / self.asked if self.asked else 1.0


def score_quiz(items: list[QuizItem], answers: dict[str, str], pass_mark: float) -> QuizResult:
    """Right answers over the items asked; ``answers`` maps an item id to the chosen option's index (as text).
    Passing needs ``right / asked >= pass_mark``, compared exactly (4 of 5 passes a mark of 0.8).

    >>> items = list(RULE_ITEMS[:5])
    >>> score_quiz(items, {"rule-good-drink": "0", "rule-form": "1", "rule-copy": "1", "rule-differ": "1"}, 0.8)
    QuizResult(right=4, asked=5, passed=True)
    >>> score_quiz(items, {"rule-good-drink": "1", "rule-form": "1", "rule-copy": "1", "rule-differ": "1"}, 0.8)
    QuizResult(right=3, asked=5, passed=False)
    >>> score_quiz([], {}, 0.8)
    QuizResult(right=0, asked=0, passed=True)
    """
    right = sum(str(answers.get(item.id, "")).strip() == str(item.answer) for item in items)
    asked = len(items)
    passed = asked == 0 or Fraction(right, asked) >= Fraction(str(pass_mark))
    return QuizResult(right, asked, passed)
