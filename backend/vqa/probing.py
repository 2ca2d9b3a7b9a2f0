"""The probing builder of paper section 3.1: pick x in {1, 2, 3, 4} true captions of an image and 4 - x
conflicting captions, shuffle them into four options, and key the true ones (an indefinite-choice item)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from backend.errors import ValidationError
from backend.vqa.items import LETTERS

PROBING_QUESTION = "Which of the following descriptions are correct for the image? Select all that apply."
PROBING_OPTIONS = 4


@dataclass(frozen=True)
class ProbingDraft:
    question: str
    options: tuple[str, ...]
    answer: tuple[str, ...]
    true_count: int
    choice_type: str = "indefinite"
    category: str = "VL Composition Probing"


def _clean(captions: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for caption in captions:
        text = (caption or "").strip()
        if text and text not in seen:
            seen.append(text)
    return seen


def build_probing(
    true_captions: Sequence[str],
    conflict_captions: Sequence[str],
    true_count: int | None = None,
    seed: int | None = None,
    question: str = PROBING_QUESTION,
) -> ProbingDraft:
    """Four shuffled options: ``true_count`` true captions (random in 1..4 when None, limited by what is
    available) and ``4 - true_count`` conflicting ones; the key is the letters of the true captions.

    >>> draft = build_probing(["a cat", "green eyes"], ["a dog", "blue eyes", "a red collar"], true_count=2, seed=1)
    >>> len(draft.options), len(draft.answer), sorted(draft.options[LETTERS.index(a)] for a in draft.answer)
    (4, 2, ['a cat', 'green eyes'])
    """
    true_list, conflict_list = _clean(true_captions), _clean(conflict_captions)
    overlap = set(true_list) & set(conflict_list)
    problems = [f'"{c}" is listed as both true and conflicting' for c in sorted(overlap)]
    rng = random.Random(seed)
    if true_count is None:
        possible = [
            x
            for x in range(1, PROBING_OPTIONS + 1)
            if x <= len(true_list) and PROBING_OPTIONS - x <= len(conflict_list)
        ]
        if not possible:
            problems.append(
                f"need x true and 4 - x conflicting captions for some x in 1..4; have {len(true_list)} true and "
                f"{len(conflict_list)} conflicting"
            )
        else:
            true_count = rng.choice(possible)
    elif not 1 <= true_count <= PROBING_OPTIONS:
        problems.append(f"the number of true captions x must be 1, 2, 3 or 4, not {true_count}")
    if true_count is not None and 1 <= true_count <= PROBING_OPTIONS:
        if len(true_list) < true_count:
            problems.append(f"x = {true_count} needs {true_count} true captions; {len(true_list)} given")
        if len(conflict_list) < PROBING_OPTIONS - true_count:
            problems.append(
                f"x = {true_count} needs {PROBING_OPTIONS - true_count} conflicting captions; {len(conflict_list)} given"
            )
    if problems:
        raise ValidationError(problems)
    assert true_count is not None
    chosen = [(c, True) for c in rng.sample(true_list, true_count)]
    chosen += [(c, False) for c in rng.sample(conflict_list, PROBING_OPTIONS - true_count)]
    rng.shuffle(chosen)
    answer = tuple(LETTERS[i] for i, (_, correct) in enumerate(chosen) if correct)
    return ProbingDraft(question, tuple(c for c, _ in chosen), answer, true_count)
