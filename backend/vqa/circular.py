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
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from backend.inference.benchmarks import get_benchmark
from backend.inference.circular import circular_report

__all__ = [
    "both_ways_twin",
    "circular_report",
    "circular_results",
    "position_bias",
]  # circular_report lives with the other circular functions

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.registry import ModelSpec


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


def both_ways_twin(specs: Mapping[str, ModelSpec], name: str) -> str | None:
    """The model registered with the same weights and settings as ``name`` but the other ``scoring``
    (``generate`` or ``likelihood``): the same model run both ways. None when there is none.

    >>> from backend.inference.registry import ModelSpec
    >>> specs = {m.name: m for m in (ModelSpec("g", "transformers", "p"),
    ...          ModelSpec("l", "transformers", "p", scoring="likelihood"), ModelSpec("o", "transformers", "q"))}
    >>> both_ways_twin(specs, "g"), both_ways_twin(specs, "l"), both_ways_twin(specs, "o")
    ('l', 'g', None)
    """
    mine = specs[name]
    for other in specs.values():
        if other.name != name and other.scoring != mine.scoring:
            if replace(mine, name=other.name, scoring=other.scoring, description=other.description) == other:
                return other.name
    return None


def flip_rates(ctx: AppContext, models: Sequence[str]) -> dict[str, float | None]:
    """Each registered model's flip rate under rotation (:func:`position_bias`; None: not run circular, or not a
    registered model), the rotated items built once."""
    from backend.errors import CompStudioError
    from backend.vqa.models import BENCHMARK

    items = get_benchmark(ctx, BENCHMARK).load_items(ctx, image_mode=None, ids=None, circular=True)
    out: dict[str, float | None] = {}
    for model in models:
        try:
            out[model] = position_bias(ctx, model, items=items)["flip"]["flip_rate"]
        except CompStudioError:
            out[model] = None
    return out


def position_bias(
    ctx: AppContext, model: str, *, image_mode: str | None = None, items: list | None = None
) -> dict[str, Any]:
    """What circular evaluation reveals about ``model`` on the verified items (:mod:`backend.inference.position_bias`):
    its flip rate under rotation, its answers per position against uniform (χ²), its circular accuracy and
    consistency, and, when it is registered the other way too (:func:`both_ways_twin`), the share of items where
    generation and likelihood chose differently. Read from the store under the current settings; nothing runs."""
    from backend.inference.position_bias import circular_figures, method_disagreement
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec, list_models
    from backend.vqa.models import BENCHMARK, _stored_letters

    bench = get_benchmark(ctx, BENCHMARK)
    if items is None:
        items = bench.load_items(ctx, image_mode=image_mode, ids=None, circular=True)

    def letters(name: str, chosen: list) -> dict[str, tuple[str, ...]]:
        key = read_key(ctx, bench, get_spec(ctx, name))
        answers, statuses = _stored_letters(ctx, BENCHMARK, name, chosen, key.settings_hash)
        return {i: a for i, (a, _raw) in answers.items() if statuses.get(i) != "error"}

    mine = letters(model, items)
    out: dict[str, Any] = {"model": model, **circular_figures(items, mine)}
    report = circular_report(items, mine)
    out["circular"] = {k: report[k] for k in ("complete", "circular_accuracy", "consistency_rate", "plain_accuracy")}
    specs = list_models(ctx)
    twin = both_ways_twin(specs, model) if model in specs else None
    out["both_ways"] = None
    if twin is not None:
        plain = [i for i in items if i.meta.get("rotation", 0) == 0]
        theirs = letters(twin, plain)
        first = {i.item_id: mine[i.item_id] for i in plain if i.item_id in mine}
        generated, scored = (first, theirs) if specs[model].scoring == "generate" else (theirs, first)
        out["both_ways"] = {"twin": twin, **method_disagreement(generated, scored)}
    return out


def position_report(ctx: AppContext, username: str | None, models: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`position_bias` of ``models`` (default: every registered model with rotated answers stored or run
    both ways), for reviewers; ``people``: what the runs of people reveal (people answer the options in their
    authored order, so there is no rotation to measure: said, not computed)."""
    from backend.accounts import auth
    from backend.errors import NotFound
    from backend.inference.registry import list_models
    from backend.vqa.models import BENCHMARK

    auth.require_role(ctx.database, username, "reviewer")
    specs = list_models(ctx)
    unknown = [m for m in models or [] if m not in specs]
    if unknown:
        raise NotFound(f"no registered model named {', '.join(unknown)}; registered: {', '.join(specs)}")
    items = get_benchmark(ctx, BENCHMARK).load_items(ctx, image_mode=None, ids=None, circular=True)
    figures = [position_bias(ctx, m, items=items) for m in (models or list(specs))]
    if models is None:
        figures = [f for f in figures if f["flip"]["items"] or (f["both_ways"] and f["both_ways"]["items"])]
    return {
        "models": figures,
        "people": "people answered each item once, its options as authored: no rotation to measure (the figures "
        "apply to people only where a study shows rotated options)",
    }
