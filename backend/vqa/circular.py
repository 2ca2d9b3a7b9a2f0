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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from backend.inference.benchmarks import get_benchmark
from backend.inference.circular import circular_report

__all__ = ["circular_report", "circular_results"]  # circular_report lives with the other circular functions

if TYPE_CHECKING:
    from backend.context import AppContext


def circular_results(
    ctx: AppContext, model: str, *, blind: bool = False, image_mode: str | None = None, ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """:func:`circular_report` of what the prediction store holds for ``model`` on the verified items
    (or ``ids``) under the current settings (:func:`backend.inference.reading.read_key`; ``note`` says when they
    are a served model's last run because its server is unreachable); nothing is computed."""
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec
    from backend.vqa.models import BENCHMARK, BLIND_BENCHMARK, _stored_letters

    bench_name = BLIND_BENCHMARK if blind else BENCHMARK
    options = {"image_mode": image_mode, "ids": list(ids) if ids is not None else None, "circular": True}
    bench = get_benchmark(ctx, bench_name)
    items = bench.load_items(ctx, **options)
    key = read_key(ctx, bench, get_spec(ctx, model))
    answers, _ = _stored_letters(ctx, bench_name, model, items, key.settings_hash)
    report = circular_report(items, {item_id: letters for item_id, (letters, _raw) in answers.items()})
    return {**report, "note": key.note} if key.note else report
