"""People's answers beside a model's, item by item, for the Samples view (issue 41, Must 4).

For an item: how many people chose each option (``{"A": 2, "B": 1}``; an indefinite-choice answer is its letters
joined, ``"A+D"``; a planning check that finds no choice plausible is ``"none"``), in the options' authored order
(the letters of rotation 0). Two filters:

* **people split**: no answer has a strict majority of the item's answers (an item to check: its key, or its
  wording);
* **models wrong where people agree**: at least two people answered, at least two thirds of them gave the key,
  and the model's answer is not fully right (a gap between models and people).

Never shown to the people who write or verify items: the counts of an item the viewer wrote or verified are left
out for them (:func:`hidden_from`), so no one learns how people answered the items whose key they set.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from backend.storage import Database

PEOPLE_FILTERS = ("people_split", "people_agree_model_wrong")
CHOICE_LETTERS = "ABCDEF"


@dataclass(frozen=True)
class PeopleOnItem:
    """How people answered one item: answer label -> count, and the key's label."""

    counts: dict[str, int]
    key: str

    @property
    def answers(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "key": self.key, "answers": self.answers}


def label(letters: Iterable[str]) -> str:
    """An answer as the view names it.

    >>> label(["D", "A"]), label(["B"]), label([])
    ('A+D', 'B', 'none')
    """
    return "+".join(sorted(letters)) or "none"


def people_split(item: PeopleOnItem) -> bool:
    """No answer has a strict majority (two answers or more).

    >>> people_split(PeopleOnItem({"A": 1, "B": 1}, "A")), people_split(PeopleOnItem({"A": 2, "B": 1}, "A"))
    (True, False)
    >>> people_split(PeopleOnItem({"A": 1, "B": 1, "C": 1}, "A")), people_split(PeopleOnItem({"A": 1}, "A"))
    (True, False)
    """
    if item.answers < 2:
        return False
    return 2 * max(item.counts.values()) <= item.answers


def people_agree_on_key(item: PeopleOnItem) -> bool:
    """At least two people answered and at least two thirds of them gave the key.

    >>> people_agree_on_key(PeopleOnItem({"A": 2, "B": 1}, "A")), people_agree_on_key(PeopleOnItem({"A": 1}, "A"))
    (True, False)
    >>> people_agree_on_key(PeopleOnItem({"A": 2, "B": 2}, "A")), people_agree_on_key(PeopleOnItem({"B": 3}, "A"))
    (False, False)
    """
    return item.answers >= 2 and 3 * item.counts.get(item.key, 0) >= 2 * item.answers


def hidden_from(database: Database, viewer: str | None) -> set[str]:
    """The VQA items ``viewer`` wrote or verified, and the planning questions they authored: their people's
    answers are not shown to them."""
    if not viewer:
        return set()
    rows = database.query(
        """SELECT id FROM vqa_items WHERE author = :v
           UNION SELECT item_id FROM vqa_verifications WHERE verifier = :v
           UNION SELECT id FROM planning_questions WHERE created_by = :v AND source = 'authored'""",
        {"v": viewer},
    )
    return {r["id"] for r in rows}


def people_on_items(database: Database, benchmark: str, viewer: str | None = None) -> dict[str, PeopleOnItem]:
    """Item id -> how people answered it, for the VQA (``mmcomposition``) and planning (``vilpact-planning``)
    items; empty for other benchmarks. Crowd and experts together (the view counts answers, not runs)."""
    hidden = hidden_from(database, viewer)
    counts: dict[str, Counter[str]] = {}
    keys: dict[str, str] = {}
    if benchmark in ("mmcomposition", "mmcomposition-blind"):
        import json

        for r in database.query(
            "SELECT a.item_id, a.answer, i.answer AS key FROM vqa_answers a JOIN vqa_items i ON i.id = a.item_id"
        ):
            counts.setdefault(r["item_id"], Counter())[label(json.loads(r["answer"]))] += 1
            keys[r["item_id"]] = label(json.loads(r["key"]))
    elif benchmark == "vilpact-planning":
        rows = database.query(
            """SELECT c.question_id, c.plausible_choice, q.answer_index FROM planning_checks c
               JOIN planning_questions q ON q.id = c.question_id"""
        )
        for r in rows:
            choice = r["plausible_choice"]
            counts.setdefault(r["question_id"], Counter())[CHOICE_LETTERS[choice] if choice >= 0 else "none"] += 1
            keys[r["question_id"]] = CHOICE_LETTERS[r["answer_index"]]
    return {item: PeopleOnItem(dict(sorted(c.items())), keys[item]) for item, c in counts.items() if item not in hidden}


def filter_ids(people: Mapping[str, PeopleOnItem], name: str) -> list[str]:
    """The base item ids a people filter keeps before the model's outcome is looked at (``people_split``: the
    split items; ``people_agree_model_wrong``: the items people agree on; the view then keeps the wrong ones).

    >>> people = {"q1": PeopleOnItem({"A": 1, "B": 1}, "A"), "q2": PeopleOnItem({"A": 3}, "A")}
    >>> filter_ids(people, "people_split"), filter_ids(people, "people_agree_model_wrong")
    (['q1'], ['q2'])
    """
    test = people_split if name == "people_split" else people_agree_on_key
    return sorted(item for item, on in people.items() if test(on))


def counts_text(on: PeopleOnItem | None) -> str:
    """One cell: the counts per answer, the key marked.

    >>> counts_text(PeopleOnItem({"A": 2, "B": 1}, "A")), counts_text(None)
    ('A✓ 2 · B 1 (3 people)', '')
    """
    if on is None:
        return ""
    parts = [f"{answer}{'✓' if answer == on.key else ''} {n}" for answer, n in on.counts.items()]
    return f"{' · '.join(parts)} ({on.answers} {'person' if on.answers == 1 else 'people'})"
