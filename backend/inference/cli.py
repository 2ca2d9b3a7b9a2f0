"""``python -m backend eval ...`` and ``python -m backend models ...``."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from backend.inference.overrides import parse_pairs
from backend.terminal import add_output_flags, add_pairs_flag, progress_bar, show, summary_table


def _eval(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.run_config import reproduces, run_config_from_args, use_model
    from backend.inference.runner import run_eval

    ctx = context_from(args)
    config = run_config_from_args(args)
    model, note = use_model(ctx, config)
    with progress_bar(f"{config.benchmark} / {model}") as update:
        summary = run_eval(
            ctx,
            config.benchmark,
            model,
            limit=config.limit,
            retry_failed=config.retry_failed,
            judge=config.judge,
            progress=update,
            actor="cli",
            load_options=config.options or None,
            gen=config.gen or None,
        )
    result = summary.as_dict()
    options, shash = config.options or None, summary.settings_hash
    result.update(benchmark_report(ctx, config.benchmark, model, options, config.limit, config.gen, shash))
    if note:
        result["note"] = note
    check = reproduces(config, summary)
    if check is not None:
        result["reproduces"] = check
    if args.out is not None:
        from backend.inference.store import write_run_folder

        result["out"] = write_run_folder(ctx.database, args.out, result, set(summary.item_keys))
        if summary.config:
            shutil.copyfile(summary.config, args.out / "run.yaml")
            result["out"]["run.yaml"] = str(args.out / "run.yaml")
    from backend.cli import Finished, status_exit

    return Finished(show(args, result, summary_table), status_exit([summary.status]))


def benchmark_report(
    ctx: Any,
    benchmark: str,
    model: str,
    options: dict[str, Any] | None,
    limit: int | None,
    gen: Any,
    shash: str | None = None,
) -> dict[str, Any]:
    """What a benchmark adds to a run's summary (its answers, under the run's key ``shash``): the benchmark's own
    ``report`` (CoFe: exact match per category; file benchmarks: per category and circular figures)."""
    report = ctx.benchmarks.get(benchmark).report
    return report(ctx, model, options, limit, gen or None, shash=shash) if report is not None else {}


def _load_options(pairs: list[str] | None) -> dict[str, str] | None:
    """``--option key=value`` pairs as the benchmark's load options (e.g. ``setting=high_diversity``)."""
    return parse_pairs(pairs, "--benchmark-option") or None


def _compare(args: argparse.Namespace) -> Any:
    """Paired comparison on the items every model answered. A benchmark with a comparison of its own runs it
    (planning and VQA add their blind baselines); ``--circular`` needs the benchmark's circular comparison."""
    from backend.cli import context_from
    from backend.errors import ValidationError
    from backend.inference.benchmarks import CIRCULAR_COMPARE_ONLY, CompareAsked

    ctx = context_from(args)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    samples = ctx.settings.bootstrap_samples
    options = parse_pairs(args.option, "--benchmark-option")
    spec = ctx.benchmarks.named(args.benchmark)
    if spec.compare is not None:
        asked = CompareAsked(models, samples, args.circular, options, baseline_run=not args.no_baseline_run)
        return spec.run_compare(ctx, asked)
    circular = spec.compare_circular if args.circular else None
    if args.circular and circular is None:
        raise ValidationError(CIRCULAR_COMPARE_ONLY)
    if not models or len(models) < 2:
        raise ValidationError("name at least two models: --models A,B")
    if circular is not None:
        return circular(ctx, spec.name, models, samples)
    from backend.inference.paired import compare_stored

    return compare_stored(ctx, spec.name, models, options, samples)


def _export_predictions(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.store import export_predictions

    return export_predictions(context_from(args).database, args.out, model=args.model, benchmark=args.benchmark)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    evaluate = sub.add_parser("eval", parents=[common], help="evaluate a model on a benchmark (resumable)")
    evaluate.add_argument("--benchmark", default=None, help="benchmark name (compstudio benchmarks list)")
    evaluate.add_argument("--model", default=None, help="model name from the registry (compstudio models list)")
    evaluate.add_argument(
        "--config",
        type=Path,
        default=None,
        help="a run file (run.yaml: model, benchmark, limit, gen, options, judge); every run writes one beside it",
    )
    evaluate.add_argument("--limit", type=int, default=None, help="only the first N items")
    evaluate.add_argument(
        "--gen",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generation setting for this run, repeatable: max_new_tokens, temperature, top_p, seed, stop (a|b)",
    )
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
    add_pairs_flag(
        evaluate,
        "benchmark-option",
        "a benchmark load option, repeatable (icl: bank, tests, setting, n, order, seed, fictional, matching; "
        "file benchmarks: circular=true, category; planning: mode, circular)",
    )
    add_output_flags(evaluate)
    evaluate.set_defaults(handler=_eval)

    comp = sub.add_parser(
        "compare", parents=[common], help="paired comparison of models (bootstrap, exact McNemar, Holm, Cohen's h)"
    )
    comp.add_argument("--benchmark", required=True, help="planning, vqa, or any registered benchmark (icl, ...)")
    comp.add_argument(
        "--models", default=None, help="comma-separated models (VQA: run names); default: every stored run"
    )
    comp.add_argument("--circular", action="store_true", help="planning and file benchmarks: compare circular outcomes")
    comp.add_argument(
        "--no-baseline-run", action="store_true", help="planning: do not answer missing questions with bigram-prior"
    )
    add_pairs_flag(comp, "benchmark-option", "a benchmark load option, repeatable (e.g. icl: setting=random)")
    comp.set_defaults(handler=_compare)

    export = groups["export"].add_parser(
        "predictions", parents=[common], help="stored model answers as JSON lines, with OUT.manifest.json"
    )
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--model", default=None, help="only this model")
    export.add_argument("--benchmark", default=None, help="only this benchmark")
    export.set_defaults(handler=_export_predictions)
