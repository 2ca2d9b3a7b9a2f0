"""Circular evaluation of the single-choice VQA items (issue 14, part 2; as planning does with six rotations).

A single-choice item with k options is asked k times, once per rotation of its options
(:func:`backend.vqa.models.rotations`); each rotation is its own prediction in the store (item id
``<id>#r<r>``), so a re-run computes only the rotations that are missing. Indefinite-choice items are not
rotated (their partial credit does not reduce to one right option). Per model run:

* ``plain_accuracy``: rotation 0 (the options as authored) fully right, over the same complete items;
* ``circular_accuracy``: the key chosen under every rotation;
* ``consistency_rate``: the same underlying option chosen under every rotation, right or wrong
  (:mod:`backend.inference.circular` defines both precisely).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from backend.inference.benchmarks import EvalItem, get_benchmark
from backend.inference.circular import circular_outcome, circular_summary, original_index
from backend.vqa.items import LETTERS

if TYPE_CHECKING:
    from backend.context import AppContext


def circular_report(items: Sequence[EvalItem], answers: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Circular figures from the rotated ``items`` (:func:`backend.vqa.models.eval_item` with a rotation)
    and the letters answered per rotated item id (one letter read: that option; anything else: none).

    Worked by hand in tests/test_vqa_circular.py.
    """
    chosen: dict[str, dict[int, int | None]] = {}
    keys: dict[str, tuple[int, int]] = {}
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
    outcomes = {base: circular_outcome(chosen.get(base, {}), key, k) for base, (key, k) in keys.items()}
    summary = circular_summary(outcomes.values())
    complete = [base for base, outcome in outcomes.items() if outcome.complete]
    plain = sum(1 for base in complete if chosen[base][0] == keys[base][0])
    return {**summary, "plain_accuracy": round(plain / len(complete), 4) if complete else 0.0}


def circular_results(
    ctx: AppContext, model: str, *, blind: bool = False, image_mode: str | None = None, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """:func:`circular_report` of what the prediction store holds for ``model`` on the verified items
    (or ``ids``) under the current settings; nothing is computed."""
    from backend.vqa.models import BENCHMARK, BLIND_BENCHMARK, _stored_letters

    bench_name = BLIND_BENCHMARK if blind else BENCHMARK
    options = {"image_mode": image_mode, "ids": list(ids) if ids is not None else None, "circular": True}
    items = get_benchmark(ctx, bench_name).load_items(ctx, **options)
    answers, _ = _stored_letters(ctx, bench_name, model, items)
    return circular_report(items, {item_id: letters for item_id, (letters, _raw) in answers.items()})
