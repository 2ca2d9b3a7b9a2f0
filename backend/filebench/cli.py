"""``compstudio benchmarks [list] | add NAME --from SOURCE | show NAME | remove NAME``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.terminal import add_output_flags, show, table


def _list(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.filebench.benchmark import is_file_benchmark
    from backend.inference.benchmarks import list_benchmarks

    ctx = context_from(args)
    rows = [
        {"name": b.name, "description": b.description, "metric": b.metric, "from_file": is_file_benchmark(ctx, b.name)}
        for b in list_benchmarks(ctx).values()
    ]
    return show(args, rows, table)


def _add(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.filebench.importer import import_benchmark

    ctx = context_from(args)
    return import_benchmark(
        ctx.settings.data_dir,
        args.name,
        args.source,
        builtin=ctx.benchmarks.builtin_names(),
        description=args.description,
        metric=args.metric,
        replace=args.replace,
    )


def _show(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.errors import NotFound
    from backend.filebench.benchmark import FileBenchmarks, is_file_benchmark

    ctx = context_from(args)
    if not is_file_benchmark(ctx, args.name):
        raise NotFound(f"no benchmark {args.name!r} imported from a file (compstudio benchmarks list)")
    return FileBenchmarks(ctx.settings.data_dir).metadata(args.name)


def _remove(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.filebench.importer import remove_benchmark

    ctx = context_from(args)
    remove_benchmark(ctx.settings.data_dir, args.name)
    return {"removed": args.name, "note": "stored answers are kept; importing it again reuses those that still apply"}


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    from backend.filebench.importer import METRICS

    # --data-dir on the action too, without its default overwriting one given before the action
    data_dir = argparse.ArgumentParser(add_help=False)
    data_dir.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, help="data folder")
    benchmarks = sub.add_parser("benchmarks", parents=[common], help="registered benchmarks; add one from a file")
    add_output_flags(benchmarks)
    benchmarks.set_defaults(handler=_list)
    actions = benchmarks.add_subparsers(dest="action")
    listing = actions.add_parser("list", parents=[data_dir], help="every benchmark (built in and from files)")
    add_output_flags(listing)
    listing.set_defaults(handler=_list)
    add = actions.add_parser(
        "add", parents=[data_dir], help="a multiple-choice benchmark from a JSONL, JSON or Parquet file, or hf:repo"
    )
    add.add_argument("name", help="the benchmark's name (letters, digits, '.', '_', '-')")
    add.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="SOURCE",
        help="items.jsonl, items.json, items.parquet, or hf:owner/dataset[@revision][:split] (docs/file-benchmarks.md)",
    )
    add.add_argument("--description", default="", help="shown in the benchmark list")
    add.add_argument(
        "--metric", choices=METRICS, default="accuracy", help="exact match, or MMComposition's partial credit"
    )
    add.add_argument("--replace", action="store_true", help="import again over a benchmark of the same name")
    add.set_defaults(handler=_add)
    show_one = actions.add_parser("show", parents=[data_dir], help="what an imported benchmark holds")
    show_one.add_argument("name")
    show_one.set_defaults(handler=_show)
    remove = actions.add_parser("remove", parents=[data_dir], help="remove an imported benchmark (answers are kept)")
    remove.add_argument("name")
    remove.set_defaults(handler=_remove)
