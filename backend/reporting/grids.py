"""Controlled comparisons (issue 14, part 5): one model over a grid of one setting, everything else fixed, and
the side-by-side table with paired tests (the ablations of MMComposition's Table 3 and ViLPAct's inputs).

Settings a grid can vary, each through a setting the runner already has (so each value is its own
prediction in the store, and a re-run computes only what is missing):

* ``image_size``: the model's ``max_image_side`` (images are shrunk to it before the model sees them);
  in the model's fingerprint, so in the prediction's settings hash.
* ``frames``: frames per video: the ``planning_frames`` setting (planning samples the observed window
  into that many frames; they are hashed into the prompt) and the model's ``frames_per_video`` (videos
  given as a path); both in the prediction key.
* ``input``: ``frames`` or ``text``: planning's ``mode`` (observed frames, or the observed action names);
  for VQA, the image(s) or none (the ``mmcomposition-blind`` benchmark). Item ids differ, so apart.
* ``icl_order``: the prompt order of the in-context examples (``structure_closer``, ``atom_closer``,
  ``random``; CoFe appendix C.3); the prompt differs, so its hash does.

Each value's run is the shared runner's (:func:`backend.inference.runner.run_eval`); its outcomes are read
back with :func:`backend.inference.paired.stored_outcomes` and compared with
:func:`backend.inference.comparison.compare_models` (paired bootstrap, exact McNemar, Holm across all pairs,
Cohen's h) on the items every value answered, paired by the underlying item (a planning question asked
in text mode is the same question as with frames).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.accounts.auth import require_role
from backend.errors import ValidationError
from backend.reporting.plots import IntervalChart, IntervalPoint
from backend.reporting.tables import Report, Table, pct

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.benchmarks import EvalItem
    from backend.inference.registry import ModelSpec

GRID_SETTINGS = {
    "image_size": "image size limit (the model's max_image_side, pixels)",
    "frames": "frames per video (planning_frames and the model's frames_per_video)",
    "input": "frames or text (planning: observed frames or action names; VQA: image(s) or none)",
    "icl_order": "prompt order of the in-context examples (structure_closer, atom_closer, random)",
}
INPUTS = ("frames", "text")


@dataclass(frozen=True)
class GridPoint:
    """One value of the grid: the context, benchmark and load options its run uses."""

    label: str
    value: str
    ctx: AppContext
    benchmark: str
    load_options: dict[str, Any]


def with_spec(ctx: AppContext, spec: ModelSpec) -> AppContext:
    """A context whose registry answers ``spec`` for its name (the app's registry is not changed; the shared
    pool reloads a model whose fingerprint changed)."""
    from backend.inference.registry import ModelRegistry

    ctx.models.is_builtin("")  # loads the provider modules' models into ctx.models.builtin
    registry = ModelRegistry(ctx.settings, providers=())
    for name, target in ctx.models.backends.items():
        registry.register_backend(name, target)
    for builtin in ctx.models.builtin.values():
        registry.register_model(builtin)
    registry.register_model(spec)
    return dataclasses.replace(ctx, models=registry)


def _int_value(setting: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ValidationError(f"{setting} takes whole numbers of at least 1, not {value!r}")
    return int(value)


def grid_point(
    ctx: AppContext, model: str, benchmark: str, setting: str, value: str, options: dict[str, Any]
) -> GridPoint:
    """The run of one grid value (a ``ValidationError`` says which setting/benchmark pairs exist)."""
    from backend.inference.registry import get_spec

    spec = get_spec(ctx, model)
    if setting == "image_size":
        side = _int_value(setting, value)
        return GridPoint(
            f"max_image_side={side}",
            value,
            with_spec(ctx, dataclasses.replace(spec, max_image_side=side)),
            benchmark,
            options,
        )
    if setting == "frames":
        frames = _int_value(setting, value)
        varied = with_spec(ctx, dataclasses.replace(spec, frames_per_video=frames))
        varied = dataclasses.replace(varied, settings=ctx.settings.replace(planning_frames=frames))
        return GridPoint(f"frames={frames}", value, varied, benchmark, options)
    if setting == "input":
        if value not in INPUTS:
            raise ValidationError(f"input takes frames or text, not {value!r}")
        if benchmark == "vilpact-planning":
            return GridPoint(f"input={value}", value, ctx, benchmark, options | {"mode": value})
        if benchmark == "mmcomposition":
            return GridPoint(
                f"input={value}", value, ctx, "mmcomposition-blind" if value == "text" else benchmark, options
            )
        raise ValidationError("the input grid (frames or text) applies to planning and VQA")
    if setting == "icl_order":
        from backend.icl.prompts import ORDERS

        if benchmark != "icl" or value not in ORDERS:
            raise ValidationError(f"icl_order applies to the icl benchmark, with values {', '.join(ORDERS)}")
        return GridPoint(f"order={value}", value, ctx, benchmark, options | {"order": value})
    raise ValidationError(f"unknown grid setting {setting!r}; choose one of {', '.join(GRID_SETTINGS)}")


def underlying_item(item: EvalItem) -> str:
    """The item a prediction is about, whatever the setting called it (planning: ``q7#text-r0`` is ``q7``).

    >>> from backend.inference.benchmarks import EvalItem
    >>> underlying_item(EvalItem("q7#text-r0", [], meta={"question_id": "q7"})), underlying_item(EvalItem("x", []))
    ('q7', 'x')
    """
    return str(item.meta.get("question_id") or item.meta.get("item_id") or item.item_id)


def parse_values(values: str | Sequence[str]) -> list[str]:
    """``"336, 672"`` or a list -> distinct stripped values, in order.

    >>> parse_values("336, 672,336")
    ['336', '672']
    """
    items = values.split(",") if isinstance(values, str) else list(values)
    return list(dict.fromkeys(v.strip() for v in items if v and v.strip()))


def run_grid(
    ctx: AppContext,
    username: str | None,
    model: str,
    benchmark: str,
    setting: str,
    values: str | Sequence[str],
    *,
    limit: int | None = None,
    load_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run ``model`` on ``benchmark`` once per value of ``setting`` (reviewers); the side-by-side results and
    the paired comparison of every pair of values on the items all of them answered."""
    from backend.inference.comparison import compare_models
    from backend.inference.paired import stored_outcomes
    from backend.inference.runner import run_eval
    from backend.planning.results import bootstrap_accuracy

    user = require_role(ctx.database, username, "reviewer")
    bench = ctx.benchmarks.named(benchmark).name  # a short name too (planning); NotFound names the valid ones
    chosen = parse_values(values)
    if len(chosen) < 2:
        raise ValidationError("a grid needs at least two different values of the setting, e.g. 336,672")
    points = [grid_point(ctx, model, bench, setting, v, dict(load_options or {})) for v in chosen]
    runs, outcomes = {}, {}
    samples = ctx.settings.bootstrap_samples
    for point in points:
        summary = run_eval(
            point.ctx, point.benchmark, model, limit=limit, actor=user.username, load_options=point.load_options
        )
        found = stored_outcomes(
            point.ctx, point.benchmark, model, point.load_options, underlying_item, limit, summary.settings_hash
        )
        if found:  # a point whose every call failed is reported, never paired (failed is not wrong)
            outcomes[point.label] = found
        accuracy = bootstrap_accuracy(list(found.values()), samples)
        reported = summary.as_dict()
        runs[point.label] = {
            "value": point.value,
            "benchmark": point.benchmark,
            "metric": summary.metric,
            "score": None if summary.score is None else round(summary.score, 4),
            "status": summary.status,
            "errors": summary.errors,
            **accuracy.as_dict(),
            **{
                k: reported[k]
                for k in ("items", "answered_rate", "refusal_rate", "parse_failure_rate", "newly_computed")
            },
        }
    return {
        "model": model,
        "benchmark": bench,
        "setting": setting,
        "values": [p.label for p in points],
        "limit": limit,
        "runs": runs,
        "comparison": compare_models(outcomes, samples),
    }


def grid_report(result: dict[str, Any]) -> Report:
    """The grid as tables (side by side; every pair with its paired tests) and an interval chart."""
    from backend.inference.comparison import comparison_rows

    side = [
        {
            result["setting"]: label,
            "benchmark": run["benchmark"],
            "status": run.get("status", "finished"),
            "fully right (%)": pct(run["accuracy"]) if run["n"] else None,  # no successful item: no score
            "ci95 low": pct(run["ci95"][0]) if run["n"] else None,
            "ci95 high": pct(run["ci95"][1]) if run["n"] else None,
            "n": run["n"],
            "errors": run.get("errors", 0),
            f"{run['metric']} (mean, %)": pct(run["score"]),
            "answered (%)": pct(run["answered_rate"]),
            "refused (%)": pct(run["refusal_rate"]),
            "unparsed (%)": pct(run["parse_failure_rate"]),
        }
        for label, run in result["runs"].items()
    ]
    title = f"{result['model']} on {result['benchmark']}: {GRID_SETTINGS[result['setting']]}"
    points = [
        IntervalPoint(label, result["model"], 100 * r["accuracy"], 100 * r["ci95"][0], 100 * r["ci95"][1])
        for label, r in result["runs"].items()
        if r["n"]
    ]
    common = result["comparison"]["common_items"]
    names = {"model A": "value A", "model B": "value B"}
    pairs = [{names.get(k, k): v for k, v in row.items()} for row in comparison_rows(result["comparison"])]
    return Report(
        title=title,
        tables=(
            Table("grid", title, side),
            Table(
                "grid_pairs", f"Paired tests on the {common} items every value answered (Holm across all pairs)", pairs
            ),
        ),
        charts={"grid_accuracy": IntervalChart(f"{result['model']}: fully right (95% interval)", points)},
        sections={"grid": result},
    )
