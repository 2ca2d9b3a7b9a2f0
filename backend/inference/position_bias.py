"""What circular evaluation reveals about a model (issue 41, Must 5): does its answer follow the option's content
or its position?

Under circular evaluation (:mod:`backend.inference.circular`) every single-choice item is asked once per rotation
of its options, so each option, the key included, stands once at every position. Three figures, each a pure
function with a worked example computed by hand:

* **flip rate**: of the rotated askings (rotations 1 .. k-1 of items answered under every rotation), the share
  whose underlying option differs from the one chosen under rotation 0 (the options as authored). 0 for a model
  that follows content; a model that always answers "A" flips on every rotation of every item;
* **position shares**: the share of answers at each letter position, against the uniform share a model that
  follows content would give on rotated items (the key is at each position equally often), with Pearson's χ²
  goodness-of-fit test (``scipy.stats.chisquare``). Items with k options contribute 1/k of an answer to each of
  their k positions' expected count, so items of different sizes mix;
* **method disagreement**: for a model run both ways (options scored by ``generate`` and parsed, or by
  ``likelihood``), the share of items both answered where they chose different options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from backend.inference.parsing import LETTERS

if TYPE_CHECKING:
    from backend.inference.benchmarks import EvalItem


def flip_rate(chosen: Mapping[str, Mapping[int, int | None]], options: Mapping[str, int]) -> dict:
    """Flips from rotation 0's choice, over the complete items (every rotation answered).

    ``chosen``: item -> rotation -> the original option chosen (None: no single option read, which counts as
    a flip); ``options``: item -> k.

    By hand: item a (3 options) picks option 2 under all three rotations: 0 flips of 2; item b (3 options)
    picks 0, 1, 2 (it always answers "A": rotation r shows option r first): 2 flips of 2; item c misses a
    rotation: left out. Flip rate 2 / 4 = 0.5.

    >>> flip_rate({"a": {0: 2, 1: 2, 2: 2}, "b": {0: 0, 1: 1, 2: 2}, "c": {0: 1}}, {"a": 3, "b": 3, "c": 3})
    {'items': 2, 'askings': 4, 'flips': 2, 'flip_rate': 0.5, 'items_flipped': 1}
    """
    askings = flips = flipped = 0
    items = 0
    for item, by_rotation in chosen.items():
        k = options[item]
        if k < 2 or any(r not in by_rotation for r in range(k)):
            continue
        items += 1
        first = by_rotation[0]
        mine = sum(1 for r in range(1, k) if first is None or by_rotation[r] != first)
        askings, flips, flipped = askings + k - 1, flips + mine, flipped + (mine > 0)
    rate = round(flips / askings, 4) if askings else None
    return {"items": items, "askings": askings, "flips": flips, "flip_rate": rate, "items_flipped": flipped}


def position_shares(picks: Sequence[tuple[int, int]]) -> dict:
    """Answers per letter position against uniform, with Pearson's χ² goodness of fit.

    ``picks``: (position chosen, number of options) of each answer read as one letter.

    By hand: twelve answers to 4-option items, 6 at A and 2 at each of B, C, D. Expected 3 at each;
    χ² = (9 + 1 + 1 + 1) / 3 = 4 with 3 degrees of freedom, p = 0.2615 (the χ²₃ tail at 4).

    >>> out = position_shares([(0, 4)] * 6 + [(1, 4)] * 2 + [(2, 4)] * 2 + [(3, 4)] * 2)
    >>> out["observed"], out["expected"], out["shares"]["A"], out["chi2"], out["dof"], out["p_value"]
    ({'A': 6, 'B': 2, 'C': 2, 'D': 2}, {'A': 3.0, 'B': 3.0, 'C': 3.0, 'D': 3.0}, 0.5, 4.0, 3, 0.2615)

    Mixed sizes: a 2-option item adds 1/2 to A and B. Two answers at A, one to a 2-option and one to a
    4-option item: expected A 0.75, B 0.75, C 0.25, D 0.25.

    >>> position_shares([(0, 2), (0, 4)])["expected"]
    {'A': 0.75, 'B': 0.75, 'C': 0.25, 'D': 0.25}
    """
    from scipy.stats import chisquare

    width = max((k for _, k in picks), default=0)
    observed = [0] * width
    expected = [0.0] * width
    for position, k in picks:
        observed[position] += 1
        for j in range(k):
            expected[j] += 1 / k
    letters = LETTERS[:width]
    out: dict = {
        "answers": len(picks),
        "observed": dict(zip(letters, observed, strict=True)),
        "expected": {letter: round(e, 4) for letter, e in zip(letters, expected, strict=True)},
        "shares": {letter: round(o / len(picks), 4) for letter, o in zip(letters, observed, strict=True)}
        if picks
        else {},
        "chi2": None,
        "dof": None,
        "p_value": None,
    }
    if width >= 2 and picks:
        statistic, p = chisquare(observed, expected)
        out |= {"chi2": round(float(statistic), 4), "dof": width - 1, "p_value": round(float(p), 4)}
    return out


def method_disagreement(generated: Mapping[str, Sequence[str]], likelihood: Mapping[str, Sequence[str]]) -> dict:
    """The share of items both ways answered where they chose different options (letter sets compared).

    By hand: q1 A/A, q2 B/C, q3 C/C, q4 only generated: 1 of 3 items disagree.

    >>> method_disagreement({"q1": "A", "q2": "B", "q3": "C", "q4": "D"}, {"q1": "A", "q2": "C", "q3": "C"})
    {'items': 3, 'disagree': 1, 'disagreement_rate': 0.3333}
    """
    shared = sorted(set(generated) & set(likelihood))
    differ = sum(1 for q in shared if set(generated[q]) != set(likelihood[q]))
    return {
        "items": len(shared),
        "disagree": differ,
        "disagreement_rate": round(differ / len(shared), 4) if shared else None,
    }


def circular_figures(items: Sequence[EvalItem], answers: Mapping[str, Sequence[str]]) -> dict:
    """The flip rate and the position shares of one run from its rotated ``items`` and the letters answered per
    rotated item id (:func:`backend.inference.circular.rotated_choices`); the shares count the complete items
    only, where every option stood at every position once.

    >>> from backend.inference.benchmarks import EvalItem
    >>> from backend.inference.circular import rotated
    >>> base = EvalItem("q", [], ("cat", "dog"), frozenset("A"), meta={"choice_type": "single"})
    >>> items = [rotated(base, 0), rotated(base, 1)]
    >>> out = circular_figures(items, {"q": "A", "q#r1": "A"})  # always "A": cat, then dog
    >>> out["flip"]["flip_rate"], out["positions"]["observed"]
    (1.0, {'A': 2, 'B': 0})
    """
    from backend.inference.circular import rotated_choices

    chosen, keys, picks = rotated_choices(items, answers)
    flips = flip_rate(chosen, {base: k for base, (_, k) in keys.items()})
    complete = {b for b, by_rotation in chosen.items() if b in keys and len(by_rotation) == keys[b][1]}
    positions = position_shares([(position, k) for base, position, k in picks if base in complete])
    return {"flip": flips, "positions": positions}
