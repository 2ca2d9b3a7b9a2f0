"""``python -m backend report --models A,B --out DIR`` and ``python -m backend grid ...``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.terminal import add_pairs_flag


def _report(args: argparse.Namespace) -> Any:
    from backend.accounts.admin import operator
    from backend.cli import context_from
    from backend.reporting.exports import report_json, write_report
    from backend.reporting.report import build_report

    ctx = context_from(args)
    report = build_report(ctx, operator(ctx.database), args.models)
    if args.out is None:
        return report_json(report)
    return {"out": str(args.out), "files": write_report(report, args.out)}


def _grid(args: argparse.Namespace) -> Any:
    from backend.accounts.admin import operator
    from backend.cli import context_from
    from backend.inference.cli import _load_options
    from backend.reporting.exports import write_report
    from backend.reporting.grids import grid_report, run_grid

    ctx = context_from(args)
    result = run_grid(
        ctx,
        operator(ctx.database),
        args.model,
        args.benchmark,
        args.setting,
        args.values,
        limit=args.limit,
        load_options=_load_options(args.option),
    )
    if args.out is not None:
        result["files"] = write_report(grid_report(result), args.out)
    return result


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    from backend.reporting.grids import GRID_SETTINGS

    report = sub.add_parser(
        "report", parents=[common], help="one report of models across planning, VQA and in-context (stored results)"
    )
    report.add_argument("--models", required=True, help="comma-separated registered model names")
    report.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for CSV, Markdown, LaTeX, JSON and PNG/SVG plots (default: print JSON)",
    )
    report.set_defaults(handler=_report)

    grid = sub.add_parser(
        "grid", parents=[common], help="one model over a grid of one setting, side by side with paired tests"
    )
    grid.add_argument("--model", required=True, help="registered model name")
    grid.add_argument("--benchmark", required=True, help="planning, vqa, icl or any registered benchmark")
    grid.add_argument(
        "--setting",
        required=True,
        choices=list(GRID_SETTINGS),
        help="; ".join(f"{k}: {v}" for k, v in GRID_SETTINGS.items()),
    )
    grid.add_argument("--values", required=True, help="comma-separated values, e.g. 336,672 or frames,text")
    grid.add_argument("--limit", type=int, default=None, help="only the first N items")
    add_pairs_flag(grid, "benchmark-option", "a benchmark load option, repeatable")
    grid.add_argument("--out", type=Path, default=None, help="also write the tables and the chart to this folder")
    grid.set_defaults(handler=_grid)
