"""The qualification a new study worker takes before real tasks (issue 16 §2).

Two parts:

* a quiz on the instructions, built from ViLPAct's rules for intents (paper, section "Intent annotation";
  backend/intents/rules.py): an intent uses the form "S/He wants to …" or "S/He is …", has real content, does
  not copy an action, and the concrete and high-level intents differ. Each item shows the actions of a sequence
  and a pair of intents and asks whether the pair is acceptable; the key is what ``check_intent_pair`` says,
  so the quiz and the submit check can never disagree (tests/test_campaigns.py checks the keys by hand);
* per kind of work, a few gold items with known answers (:data:`GOLD`).

A worker gets ``qualification_size`` items drawn from the pool of their study's kind (the rule items count for
intent studies only), the same items on every visit of one try (seeded by study, worker id and the try), and
passes with a share of right answers of at least ``pass_mark``. An unanswered item counts as wrong. A study
allows ``qualification_attempts`` tries (default 2): between two tries the worker is shown each mistake with the
right answer and the rule it broke (:func:`explain`), and a later try draws its items again.

Every item names the rules of the study's instructions it tests (``rules``, ids into
backend/campaigns/instructions.py): the instructions come before the quiz, so nothing is asked that was not shown.
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
    why: str  # why the answer is right, said after a wrong answer (between tries)
    rules: tuple[str, ...] = ()  # the instruction rules it tests (backend/campaigns/instructions.py)


def _rule_item(
    item_id: str, actions: list[str], concrete: str, high_level: str, why: str, rules: tuple[str, ...]
) -> QuizItem:
    acceptable = not check_intent_pair(concrete, high_level, actions)
    prompt = (
        f"The actions are: {'; '.join(actions)}. A worker wrote the concrete intent “{concrete}” and the "
        f"high-level intent “{high_level}”. Is this pair acceptable?"
    )
    return QuizItem(item_id, prompt, (ACCEPTABLE, NOT_ACCEPTABLE), 0 if acceptable else 1, why, rules)


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
        ("form", "content", "no-copy", "differ"),
    ),
    _rule_item(
        "rule-form",
        DRINK,
        "Drinking from a cup",
        "S/He is thirsty",
        "every intent starts with S/He (She, He), then “wants to …” or “is …”",
        ("form",),
    ),
    _rule_item(
        "rule-copy",
        LEAVE,
        "S/He is opening a door",
        "S/He wants to go to work",
        "an intent must not repeat an action of the sequence",
        ("no-copy",),
    ),
    _rule_item(
        "rule-differ",
        ["Tidying up a closet/cabinet", "Putting clothes somewhere"],
        "S/He wants to tidy up the room",
        "S/He wants to tidy up the room",
        "the concrete and the high-level intent must differ",
        ("differ",),
    ),
    _rule_item(
        "rule-content",
        ["Taking a book from somewhere", "Sitting in a chair"],
        "S/He wants to something",
        "S/He is bored",
        "an intent needs real content after “S/He wants to”",
        ("content",),
    ),
    _rule_item(
        "rule-good-leave",
        LEAVE,
        "S/He wants to leave the house",
        "S/He is in a hurry to get to work",
        "both use a permitted form, say why the person acts, and differ",
        ("form", "content", "no-copy", "differ"),
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
            ("form", "no-copy"),
        ),
        QuizItem(
            "gold-intent-fridge",
            "The actions are: Opening a refrigerator; Taking food from somewhere; Someone is eating something. Which is the "
            "best concrete intent?",
            ("S/He wants to eat a snack", "S/He is opening a refrigerator", "The person opens the fridge"),
            0,
            "a concrete intent names the activity the actions serve",
            ("form", "no-copy"),
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
            ("complete",),
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
            ("order",),
        ),
        QuizItem(
            "gold-plan-none",
            "Observed: Walking through a doorway. Intent: S/He wants to cook dinner. The candidates are: "
            "Lying on a bed; Holding a pillow. What do you answer?",
            ("Lying on a bed", "Holding a pillow", "None is plausible"),
            2,
            "when no candidate serves the intent, say none is plausible",
            ("none",),
        ),
    ),
    "vqa": (
        QuizItem(
            "gold-vqa-indefinite",
            "An indefinite-choice question asks which options are right. How many options may you tick?",
            ("Exactly one", "Every option that is right (one or more)", "Always all of them"),
            1,
            "indefinite-choice questions may have several right options",
            ("indefinite",),
        ),
        QuizItem(
            "gold-vqa-look",
            "A question asks “What colour is the cup on the left?” and the image shows a red cup on the left and "
            "a blue cup on the right. What is the answer?",
            ("Red", "Blue", "Red and blue"),
            0,
            "answer from what the image shows, for the thing the question names",
            ("look",),
        ),
        QuizItem(
            "gold-vqa-count",
            "A question asks “How many coins are in the image?” and the image shows four coins. What is the answer?",
            ("3", "4", "5"),
            1,
            "count what the question asks for",
            ("count",),
        ),
    ),
}


def pool_for(kind: str) -> tuple[QuizItem, ...]:
    """Every item a worker of this kind of study can be asked."""
    return (RULE_ITEMS if kind == "intents" else ()) + GOLD.get(kind, ())


def draw_quiz(kind: str, size: int, study_id: int, worker_id: str, attempt: int = 1) -> list[QuizItem]:
    """The worker's ``size`` items for their ``attempt``-th try: a fixed draw per study, worker and try, so a
    reload shows the same quiz and a new try draws again, from questions not asked in the earlier tries first
    (issue 40 §4: a second try that repeats the first can be passed by memory). Only where the pool has too few
    unasked questions left are some asked again; then the count starts over.

    >>> first, second = (draw_quiz("intents", 3, 1, "w", n) for n in (1, 2))
    >>> len(pool_for("intents")) >= 6, {i.id for i in first} & {i.id for i in second}
    (True, set())
    """
    pool = list(pool_for(kind))
    size = min(size, len(pool))
    asked: set[str] = set()
    draw: list[QuizItem] = []
    for number in range(1, max(attempt, 1) + 1):
        rng = random.Random(f"{study_id}:{worker_id}" if number <= 1 else f"{study_id}:{worker_id}:{number}")
        fresh = [item for item in pool if item.id not in asked]
        if len(fresh) >= size:
            draw = rng.sample(fresh, size)
        else:  # every unasked one, and the rest again from the earlier tries
            again = [item for item in pool if item.id in asked]
            draw = fresh + rng.sample(again, size - len(fresh))
            rng.shuffle(draw)
            asked = set()
        asked |= {item.id for item in draw}
    return draw


def explain(items: list[QuizItem], answers: dict[str, str], kind: str) -> list[dict[str, object]]:
    """Each wrong or missing answer, in words: the question, what was chosen, the right answer, why, and the
    instruction rules it tests (shown between tries and on the final page).

    >>> mistakes = explain([RULE_ITEMS[1]], {"rule-form": "0"}, "intents")
    >>> mistakes[0]["chosen"], mistakes[0]["right"], mistakes[0]["rules"][0][:22]
    ('Acceptable', 'Not acceptable', 'Start each intent with')
    >>> explain([RULE_ITEMS[1]], {"rule-form": "1"}, "intents")
    []
    """
    from backend.campaigns.instructions import INSTRUCTIONS

    guide = INSTRUCTIONS[kind]
    mistakes: list[dict[str, object]] = []
    for number, item in enumerate(items, start=1):
        given = str(answers.get(item.id, "")).strip()
        if given == str(item.answer):
            continue
        chosen = item.options[int(given)] if given.isdigit() and int(given) < len(item.options) else "(no answer)"
        mistakes.append(
            {
                "number": number,
                "question": item.prompt,
                "chosen": chosen,
                "right": item.options[item.answer],
                "why": item.why,
                "rules": [guide.rule(rule).text for rule in item.rules],
            }
        )
    return mistakes


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
