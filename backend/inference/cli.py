"""``python -m backend eval ...`` and ``python -m backend models ...``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _progress_bar() -> tuple[Any, Callable[[int, int], None]]:
    """A progress bar on standard error (tqdm, which transformers already depends on)."""
    from tqdm import tqdm

    bar = tqdm(total=0, file=sys.stderr, unit="item", dynamic_ncols=True)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    return bar, update


def _eval(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.runner import run_eval

    ctx = context_from(args)
    load_options = _load_options(args.option)
    bar, update = _progress_bar()
    try:
        summary = run_eval(
            ctx,
            args.benchmark,
            args.model,
            limit=args.limit,
            retry_failed=args.retry_failed,
            judge=args.judge,
            progress=update,
            actor="cli",
            load_options=load_options,
        )
    finally:
        bar.close()
    result = summary.as_dict()
    if args.benchmark == "icl":  # CoFe reports exact match per category, as `icl eval` does
        from backend.icl.evaluation import category_breakdown

        result.update(category_breakdown(ctx, args.model, load_options, args.limit))
    if args.out is not None:
        from backend.inference.store import write_run_folder

        result["out"] = write_run_folder(ctx.database, args.out, result, set(summary.item_keys))
    return result


def _load_options(pairs: list[str] | None) -> dict[str, str] | None:
    """``--option key=value`` pairs as the benchmark's load options (e.g. ``setting=high_diversity``)."""
    from backend.errors import ValidationError

    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"--option takes key=value, not {pair!r}")
        options[key.strip()] = value.strip()
    return options or None


def _compare(args: argparse.Namespace) -> Any:
    """Paired comparison on the items every model answered; planning and VQA add their blind baselines."""
    from backend.cli import context_from
    from backend.errors import ValidationError

    ctx = context_from(args)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    samples = ctx.settings.bootstrap_samples
    if args.benchmark in ("planning", "vilpact-planning"):
        from backend.inference.runner import run_eval
        from backend.planning.evaluation import BENCHMARK
        from backend.planning.leaderboard import BLIND_BASELINE, compare

        if not args.no_baseline_run:  # the blind prior needs no model: answer what it has not answered yet
            run_eval(ctx, BENCHMARK, BLIND_BASELINE, load_options={"mode": "text", "circular": args.circular})
        return compare(ctx.database, models, args.circular, samples, ctx)
    if args.circular:
        raise ValidationError("--circular applies to planning; for VQA run: python -m backend vqa run MODEL --circular")
    if args.benchmark in ("vqa", "mmcomposition"):
        from backend.vqa.cli import _cli_admin
        from backend.vqa.runs import comparison

        return comparison(ctx, _cli_admin(ctx), models, samples=samples)
    from backend.inference.paired import compare_stored

    if not models or len(models) < 2:
        raise ValidationError("name at least two models: --models A,B")
    options = dict(option.split("=", 1) for option in args.option)
    return compare_stored(ctx, args.benchmark, models, options, samples)


def _models(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.registry import list_models

    return [spec.as_dict() for spec in list_models(context_from(args)).values()]


def _benchmarks(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.benchmarks import list_benchmarks

    benchmarks = list_benchmarks(context_from(args)).values()
    return [{"name": b.name, "description": b.description, "metric": b.metric} for b in benchmarks]


def _export_predictions(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.store import export_predictions

    return export_predictions(context_from(args).database, args.out, model=args.model, benchmark=args.benchmark)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    evaluate = sub.add_parser("eval", parents=[common], help="evaluate a model on a benchmark (resumable)")
    evaluate.add_argument("--benchmark", required=True, help="benchmark name (python -m backend benchmarks)")
    evaluate.add_argument("--model", required=True, help="model name from the registry (python -m backend models list)")
    evaluate.add_argument("--limit", type=int, default=None, help="only the first N items")
    evaluate.add_argument("--retry-failed", action="store_true", help="recompute items whose call failed before")
    evaluate.add_argument(
        "--out",
        type=Path,
        default=None,
        help="also write DIR/summary.json, DIR/manifest.json and DIR/predictions.jsonl (this run's rows)",
    )
    evaluate.add_argument(
        "--judge",
        default=None,
        help="a registered model that reads unparsed answers, or 'off' (default: the answer_judge setting)",
    )
    evaluate.add_argument(
        "--option",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a benchmark load option, repeatable (icl: bank, tests, setting, n, order, seed, fictional, matching)",
    )
    evaluate.set_defaults(handler=_eval)

    comp = sub.add_parser(
        "compare", parents=[common], help="paired comparison of models (bootstrap, exact McNemar, Holm, Cohen's h)"
    )
    comp.add_argument("--benchmark", required=True, help="planning, vqa, or any registered benchmark (icl, ...)")
    comp.add_argument(
        "--models", default=None, help="comma-separated models (VQA: run names); default: every stored run"
    )
    comp.add_argument("--circular", action="store_true", help="planning: compare circular outcomes")
    comp.add_argument(
        "--no-baseline-run", action="store_true", help="planning: do not answer missing questions with bigram-prior"
    )
    comp.add_argument("--option", action="append", default=[], help="load option key=value (e.g. icl: setting=random)")
    comp.set_defaults(handler=_compare)

    models = sub.add_parser("models", help="the model registry (<data-dir>/models.json)")
    actions = models.add_subparsers(dest="action", required=True)
    actions.add_parser("list", parents=[common], help="list registered models")
    models.set_defaults(handler=_models)

    export = groups["export"].add_parser(
        "predictions", parents=[common], help="stored model answers as JSON lines, with OUT.manifest.json"
    )
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--model", default=None, help="only this model")
    export.add_argument("--benchmark", default=None, help="only this benchmark")
    export.set_defaults(handler=_export_predictions)

    benchmarks = sub.add_parser("benchmarks", parents=[common], help="list registered benchmarks")
    benchmarks.set_defaults(handler=_benchmarks)
