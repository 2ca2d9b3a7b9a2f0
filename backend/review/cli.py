"""Review commands: ``export dataset``, ``import dataset``, ``publish``, ``review dashboard``, ``review compare``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.review import dashboard, dataset, publish
from backend.review.agreement import wilcoxon_from_csv

if TYPE_CHECKING:
    from backend.context import AppContext


def _ctx(args: argparse.Namespace) -> AppContext:
    from backend.cli import context_from

    return context_from(args)


def _export(args: argparse.Namespace) -> Any:
    return dataset.export_dataset(_ctx(args).database, args.format, args.out, include_released=not args.no_released)


def _import(args: argparse.Namespace) -> Any:
    return dataset.import_dataset(_ctx(args).database, args.dir)


def _publish(args: argparse.Namespace) -> Any:
    ctx = _ctx(args)
    return publish.publish(ctx.database, ctx.settings, args.repo, private=args.private)


def _dashboard(args: argparse.Namespace) -> Any:
    db = _ctx(args).database
    return {
        "rounds": dashboard.per_round(db),
        "annotators": dashboard.per_annotator(db),
        "totals": dashboard.totals(db),
    }


def _compare(args: argparse.Namespace) -> Any:
    return wilcoxon_from_csv(args.csv.read_bytes(), args.a, args.b)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    export = groups["export"].add_parser("dataset", parents=[common], help="export the final reviewed dataset")
    export.add_argument("--format", choices=dataset.FORMATS, default="jsonl")
    export.add_argument("--out", type=Path, required=True, help="folder to write the data file and README.md into")
    export.add_argument(
        "--no-released",
        action="store_true",
        help="leave out sequences whose intents come only from the ViLPAct release",
    )
    export.set_defaults(handler=_export)

    imp = groups["import"].add_parser("dataset", parents=[common], help="import an exported dataset folder")
    imp.add_argument("dir", type=Path, help="folder with dataset.jsonl or dataset.parquet")
    imp.set_defaults(handler=_import)

    pub = sub.add_parser("publish", parents=[common], help="push the final dataset to a Hugging Face dataset repo")
    pub.add_argument("--repo", required=True, help="OWNER/NAME")
    pub.add_argument("--private", action="store_true")
    pub.set_defaults(handler=_publish)

    review = sub.add_parser("review", help="review figures and statistics")
    actions = review.add_subparsers(dest="action", required=True)
    actions.add_parser("dashboard", parents=[common], help="per-round and per-annotator figures").set_defaults(
        handler=_dashboard
    )
    compare = actions.add_parser("compare", parents=[common], help="Wilcoxon signed-rank on two paired CSV columns")
    compare.add_argument("csv", type=Path)
    compare.add_argument("--a", default=None, help="first column (default: the CSV's first)")
    compare.add_argument("--b", default=None, help="second column (default: the CSV's second)")
    compare.set_defaults(handler=_compare)
