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
        )
    finally:
        bar.close()
    return summary.as_dict()


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
        "--judge", default=None, help="a registered model that reads unparsed answers (off by default)"
    )
    evaluate.set_defaults(handler=_eval)

    models = sub.add_parser("models", help="the model registry (<data-dir>/models.json)")
    actions = models.add_subparsers(dest="action", required=True)
    actions.add_parser("list", parents=[common], help="list registered models")
    models.set_defaults(handler=_models)

    export = groups["export"].add_parser("predictions", parents=[common], help="stored model answers as JSON lines")
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--model", default=None, help="only this model")
    export.add_argument("--benchmark", default=None, help="only this benchmark")
    export.set_defaults(handler=_export_predictions)

    benchmarks = sub.add_parser("benchmarks", parents=[common], help="list registered benchmarks")
    benchmarks.set_defaults(handler=_benchmarks)
