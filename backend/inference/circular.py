"""Circular evaluation of single-choice items: every rotation of the options, right only if right under all
(issue 14, part 2; the CircularEval of MMBench, Liu et al. 2023, §3.2, with all k shifts).

Rotation ``r`` of an item with ``k`` options shows, at position ``i``, the option originally at
``(i + r) mod k`` (:func:`rotation_order`); the key's letter moves with it, the key does not. Per item,
from the original option chosen under each rotation (None: refused, unparsed or more than one letter):

* **complete**: every one of the ``k`` rotations has a stored answer (a re-run computes only the missing
  ones; an incomplete item is left out of both rates and counted in ``incomplete``);
* **circular right**: the key chosen under every rotation;
* **consistent**: the *same underlying option* chosen under every rotation (right or wrong); a rotation
  without an answer breaks consistency. Consistency rate = consistent items / complete items.

A model that always answers "A" is consistent on no item with more than one option; one that always
picks the same option whatever its position is consistent on every item.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from backend.inference.parsing import LETTERS

if TYPE_CHECKING:
    from backend.inference.benchmarks import EvalItem


def rotation_order(k: int, rotation: int) -> list[int]:
    """Original option index shown at each position under ``rotation``.

    >>> rotation_order(4, 1)
    [1, 2, 3, 0]
    """
    return [(i + rotation) % k for i in range(k)]


def original_index(letter_position: int | None, k: int, rotation: int) -> int | None:
    """The original option behind the letter at ``letter_position`` of a rotated item.

    >>> original_index(3, 4, 1)  # rotation 1 shows option 0 at position 3 ("D")
    0
    """
    return None if letter_position is None else (letter_position + rotation) % k


@dataclass(frozen=True)
class CircularOutcome:
    complete: bool
    right: bool  # the key under every rotation (False while incomplete)
    consistent: bool  # one underlying option under every rotation (False while incomplete)


def circular_outcome(chosen: Mapping[int, int | None], key: int, k: int) -> CircularOutcome:
    """Outcome of one item from ``rotation -> original option chosen``.

    >>> circular_outcome({0: 2, 1: 2, 2: 2}, key=2, k=3)
    CircularOutcome(complete=True, right=True, consistent=True)
    >>> circular_outcome({0: 1, 1: 1, 2: 1}, key=2, k=3)  # always the same wrong option
    CircularOutcome(complete=True, right=False, consistent=True)
    >>> circular_outcome({0: 2, 1: 2}, key=2, k=3)
    CircularOutcome(complete=False, right=False, consistent=False)
    """
    if any(r not in chosen for r in range(k)):
        return CircularOutcome(False, False, False)
    picks = {chosen[r] for r in range(k)}
    consistent = len(picks) == 1 and None not in picks
    return CircularOutcome(True, consistent and picks == {key}, consistent)


def circular_summary(outcomes: Iterable[CircularOutcome]) -> dict:
    """Counts and rates over the complete items.

    >>> o = [CircularOutcome(True, True, True), CircularOutcome(True, False, True),
    ...      CircularOutcome(True, False, False), CircularOutcome(False, False, False)]
    >>> circular_summary(o)  # doctest: +NORMALIZE_WHITESPACE
    {'items': 4, 'complete': 3, 'incomplete': 1, 'circular_correct': 1, 'circular_accuracy': 0.3333,
     'consistent': 2, 'consistency_rate': 0.6667}
    """
    outcomes = list(outcomes)
    done = [o for o in outcomes if o.complete]
    right, consistent = sum(o.right for o in done), sum(o.consistent for o in done)
    return {
        "items": len(outcomes),
        "complete": len(done),
        "incomplete": len(outcomes) - len(done),
        "circular_correct": right,
        "circular_accuracy": round(right / len(done), 4) if done else 0.0,
        "consistent": consistent,
        "consistency_rate": round(consistent / len(done), 4) if done else 0.0,
    }


def rotated(item: EvalItem, rotation: int) -> EvalItem:
    """``item`` under ``rotation`` (a single-choice item): the options shifted, the key's letter moved with its
    option; id ``<id>#r<rotation>`` (rotation 0 keeps the id); ``meta`` gains ``item_id`` and ``rotation``.

    >>> from backend.inference.benchmarks import EvalItem
    >>> r = rotated(EvalItem("q", [], ("cat", "dog", "cow"), frozenset("B"), meta={"choice_type": "single"}), 1)
    >>> r.item_id, r.options, sorted(r.answer), r.meta["rotation"]
    ('q#r1', ('dog', 'cow', 'cat'), ['A'], 1)
    """
    order = rotation_order(len(item.options), rotation)
    answer = (
        frozenset(LETTERS[order.index(LETTERS.index(a))] for a in item.answer)
        if isinstance(item.answer, frozenset)
        else item.answer
    )
    return replace(
        item,
        item_id=f"{item.item_id}#r{rotation}" if rotation else item.item_id,
        options=tuple(item.options[i] for i in order),
        answer=answer,
        meta={**item.meta, "item_id": item.item_id, "rotation": rotation},
    )


def rotated_choices(
    items: Sequence[EvalItem], answers: Mapping[str, Sequence[str]]
) -> tuple[dict[str, dict[int, int | None]], dict[str, tuple[int, int]], list[tuple[str, int, int]]]:
    """From the rotated single-choice ``items`` and the letters answered per rotated item id: base id ->
    rotation -> the original option chosen (one letter read: that option; anything else: None), base id ->
    (key's original index, k), and (base id, position chosen, k) of every answer read as one letter."""
    chosen: dict[str, dict[int, int | None]] = {}
    keys: dict[str, tuple[int, int]] = {}
    picks: list[tuple[str, int, int]] = []
    for item in items:
        if item.meta.get("choice_type") != "single":
            continue
        base, rotation, k = item.meta["item_id"], item.meta["rotation"], len(item.options)
        if rotation == 0:
            keys[base] = (LETTERS.index(next(iter(item.answer))), k)
        if item.item_id in answers:
            letters = list(answers[item.item_id])
            position = LETTERS.index(letters[0]) if len(letters) == 1 else None
            chosen.setdefault(base, {})[rotation] = original_index(position, k, rotation)
            if position is not None:
                picks.append((base, position, k))
    return chosen, keys, picks


def circular_outcomes(
    items: Sequence[EvalItem], answers: Mapping[str, Sequence[str]]
) -> dict[str, tuple[CircularOutcome, bool]]:
    """Per single-choice item (its base id): its :class:`CircularOutcome` and whether rotation 0 was answered
    right, from the rotated ``items`` (:func:`rotated`, or :func:`backend.vqa.models.eval_item` with a rotation)
    and the letters answered per rotated item id (one letter read: that option; anything else: none)."""
    chosen, keys, _ = rotated_choices(items, answers)
    return {
        base: (circular_outcome(chosen.get(base, {}), key, k), chosen.get(base, {}).get(0) == key)
        for base, (key, k) in keys.items()
    }


def circular_report(items: Sequence[EvalItem], answers: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Circular figures (:func:`circular_summary`, and ``plain_accuracy``: rotation 0 right, over the same
    complete items) from :func:`circular_outcomes`. Worked by hand in tests/test_vqa_circular.py."""
    outcomes = circular_outcomes(items, answers)
    summary = circular_summary(outcome for outcome, _ in outcomes.values())
    complete = [plain for outcome, plain in outcomes.values() if outcome.complete]
    return {**summary, "plain_accuracy": round(sum(complete) / len(complete), 4) if complete else 0.0}
