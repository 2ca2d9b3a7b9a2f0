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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


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
