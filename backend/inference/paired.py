"""Paired comparison of models from the prediction store, for any registered benchmark (issue 14, part 3).

The items are loaded as the benchmark would give them now and looked up by ``(item id, prompt hash)`` under
each model's current settings, so a stale answer (other prompt, other settings) never enters. An item is
right when its stored score is 1 (exact match, a fully right choice); a refused or unread answer is wrong;
a failed call or an item never asked is absent. Planning and VQA have their own readers
(:func:`backend.planning.leaderboard.compare`, :func:`backend.vqa.runs.comparison`), which also add their
blind baselines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.benchmarks import EvalItem


def stored_outcomes(
    ctx: AppContext,
    benchmark: str,
    model: str,
    load_options: dict[str, Any] | None = None,
    key: Callable[[EvalItem], str] | None = None,
    limit: int | None = None,
    shash: str | None = None,
) -> dict[str, bool]:
    """Item id (or ``key(item)``, to pair items across settings that name them apart) -> right, for the items
    (the first ``limit`` of them) ``model`` has a stored, non-failed answer for under ``shash`` (after a run: the
    run's key; default: what views read, :func:`backend.inference.reading.read_key`)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.prepared import prepare
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec
    from backend.inference.store import lookup

    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    stored = lookup(ctx.database, spec.name, bench.name, shash or read_key(ctx, bench, spec).settings_hash)
    out = {}
    for prepared in prepare(bench, bench.load_items(ctx, **(load_options or {}))[:limit], ctx.digests):
        row = stored.get((prepared.item.item_id, prepared.prompt_hash))
        if row is not None and row.status != "error":
            out[key(prepared.item) if key else prepared.item.item_id] = (row.score or 0.0) >= 1.0
    return out


def compare_stored(
    ctx: AppContext,
    benchmark: str,
    models: Sequence[str],
    load_options: dict[str, Any] | None = None,
    samples: int = 2000,
) -> dict[str, Any]:
    """:func:`backend.inference.comparison.compare_models` of ``models`` on ``benchmark``, with each
    model's accuracy over the items it answered (``runs``) beside the common-item comparison; ``notes``: the
    sentence of each model whose server is unreachable (its last run's results are compared,
    :mod:`backend.inference.reading`)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.comparison import compare_models
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec

    bench = get_benchmark(ctx, benchmark)
    total = len(bench.load_items(ctx, **(load_options or {})))
    keys = {model: read_key(ctx, bench, get_spec(ctx, model)) for model in models}
    every = {
        model: stored_outcomes(ctx, benchmark, model, load_options, shash=keys[model].settings_hash) for model in models
    }
    outcomes = {model: o for model, o in every.items() if o}  # no successful item: never ranked or paired
    runs = {
        model: {
            "run": f"{len(o)} of {total}",
            "n": len(o),
            "accuracy": round(sum(o.values()) / len(o), 4) if o else 0.0,
        }
        for model, o in outcomes.items()
    }
    return {
        "benchmark": benchmark,
        "items": total,
        "runs": runs,
        "not_ranked": [model for model, o in every.items() if not o],
        "comparison": compare_models(outcomes, samples),
        "notes": {model: key.note for model, key in keys.items() if key.note},
    }
