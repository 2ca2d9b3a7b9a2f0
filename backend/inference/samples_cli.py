"""``compstudio samples``: a stored run's samples (or two runs' disagreements) as JSON lines or CSV.

::

    compstudio samples --model M --benchmark B [--benchmark-option key=value] [--run ID]
        [--filter wrong|unparsed|refused|inconsistent|...] [--category C] [--search TEXT]
        [--vs M2 | --vs-run ID] [--format jsonl|csv] [--out FILE]
    compstudio samples --runs [--model M] [--benchmark B]

Rows go to ``--out`` (then a JSON summary is printed) or to standard output. Fields: ``item_id``, ``category``,
``answer`` (the key), ``raw_output``, ``parsed``, ``outcome``, ``score``, ``rotation``, ``prompt_sha256``,
``key`` (the prediction's stored key); with ``--vs``, one row per item only one of the two runs got right.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from backend.errors import ValidationError
from backend.terminal import add_pairs_flag

FORMATS = ("jsonl", "csv")


def _cell(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value


def write_rows(rows: Iterable[dict[str, Any]], handle: IO[str], fmt: str) -> int:
    """Write ``rows`` as JSON lines or CSV (nested values as JSON); returns how many were written."""
    if fmt not in FORMATS:
        raise ValidationError(f"--format must be one of {', '.join(FORMATS)}")
    count = 0
    writer: csv.DictWriter[str] | None = None
    for row in rows:
        if fmt == "jsonl":
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        else:
            if writer is None:
                writer = csv.DictWriter(handle, fieldnames=list(row), lineterminator="\n")
                writer.writeheader()
            writer.writerow({k: _cell(v) for k, v in row.items()})
        count += 1
    return count


def _options(pairs: list[str] | None) -> dict[str, str] | None:
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"--benchmark-option takes key=value, not {pair!r}")
        options[key.strip()] = value.strip()
    return options or None


def _samples(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference import samples
    from backend.inference.samples_detail import compare_runs

    ctx = context_from(args)
    benchmark = ctx.benchmarks.canonical(args.benchmark)  # short names as `compare` takes them
    if args.runs:
        return [run.as_dict() for run in samples.list_runs(ctx.database, args.model, benchmark)]
    if args.run is not None:
        run = samples.get_run(ctx.database, args.run)
    elif args.model and benchmark:
        run = samples.find_run(ctx.database, args.model, benchmark, _options(args.option))
    else:
        raise ValidationError("name a run: --model M --benchmark B (or --run ID; list them with --runs)")
    if args.vs or args.vs_run is not None:
        other = (
            samples.get_run(ctx.database, args.vs_run)
            if args.vs_run is not None
            else samples.find_run(ctx.database, args.vs, run.benchmark, run.load_options)
        )
        comparison = compare_runs(ctx, run.run_id, other.run_id, everything=True)
        rows: Iterable[dict[str, Any]] = (r.export_row(run, other) for r in comparison.rows)
        summary: dict[str, Any] = {
            "run": run.run_id,
            "vs_run": other.run_id,
            "common": comparison.common,
            "a_only_right": comparison.a_only_right,
            "b_only_right": comparison.b_only_right,
        }
    else:
        query = samples.SampleQuery(filter=args.filter, category=args.category or "", search=args.search or "")
        rows = (s.export_row() for s in samples.iter_samples(ctx, run.run_id, query))
        summary = {"run": run.run_id, "model": run.model, "benchmark": run.benchmark, "filter": args.filter}
    if args.out is None:
        write_rows(rows, sys.stdout, args.format)
        return None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()  # written whole, so a failed read leaves no half file
    count = write_rows(rows, buffer, args.format)
    args.out.write_text(buffer.getvalue(), encoding="utf-8")
    return summary | {"rows": count, "out": str(args.out), "format": args.format}


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    from backend.inference.samples import FILTERS

    parser = sub.add_parser(
        "samples", parents=[common], help="a stored run's samples (or two runs' disagreements) as JSON lines or CSV"
    )
    parser.add_argument("--model", default=None, help="the run's model")
    parser.add_argument("--benchmark", default=None, help="the run's benchmark (planning, vqa, icl or any name)")
    add_pairs_flag(parser, "benchmark-option", "the run's benchmark load options (repeatable)")
    parser.add_argument("--run", type=int, default=None, help="a run id instead of --model/--benchmark")
    parser.add_argument("--filter", default="all", choices=list(FILTERS), help="which samples (default: all)")
    parser.add_argument("--category", default=None, help="only this category (planning: scene)")
    parser.add_argument("--search", default=None, help="only samples whose raw output contains this text")
    parser.add_argument("--vs", default=None, metavar="M2", help="the items only one of the two models got right")
    parser.add_argument("--vs-run", type=int, default=None, help="as --vs, with a run id")
    parser.add_argument("--format", default="jsonl", choices=FORMATS)
    parser.add_argument("--out", type=Path, default=None, help="write the rows here (default: standard output)")
    parser.add_argument("--runs", action="store_true", help="list the stored runs instead")
    parser.set_defaults(handler=_samples)
