"""``python -m backend icl build ...``, ``import icl`` and ``export icl``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.icl.matching import MATCHING
from backend.icl.prompts import ORDERS
from backend.icl.selection import preset_weights
from backend.icl.selectors import SelectorSpec, setting_names
from backend.terminal import add_output_flags, progress_bar, show, summary_table

MATCHING_CLI_HELP = (
    "equation 2's sides (CoFe presets only): both (default), source_only (appendix D, Table 6) or target_only "
    "(section 5 / appendix C.6: also drops test cases whose sentence rule a chosen example covers)"
)


def cache_dir(data_dir: Path | None) -> Path:
    from backend.settings import load_settings

    return load_settings(data_dir=data_dir).data_dir / "cache" / "icl"


def spec_from_args(args: argparse.Namespace) -> SelectorSpec:
    from backend.errors import ValidationError

    if not 0 <= args.mmr_lambda <= 1 or args.mmr_pool < 1:
        raise ValidationError("--mmr-lambda must be between 0 and 1 and --mmr-pool at least 1")
    return SelectorSpec(
        name=args.setting,
        weights=preset_weights(args.setting, args),
        seed=args.seed,
        mmr_lambda=args.mmr_lambda,
        mmr_pool=args.mmr_pool,
        embedding_model=args.embedding_model,
    )


def _build(args: argparse.Namespace) -> Any:
    from backend.icl.build import build_file

    summary = build_file(
        args.bank,
        args.tests,
        spec_from_args(args),
        args.out,
        n=args.n,
        order=args.order,
        seed=args.seed,
        fictional=args.fictional,
        cache_dir=cache_dir(args.data_dir),
    )
    if args.markdown:
        print(summary["markdown"])
        return None
    return summary


def _import(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.icl.store import import_set

    return import_set(
        context_from(args).database,
        "cli",
        args.file,
        args.name,
        args.kind,
        category=args.category,
        replace=args.replace,
    )


def _export(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.icl.store import export_set

    return export_set(context_from(args).database, args.name, args.out)


def _eval(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.icl.evaluation import evaluate_by_category

    options = {
        "setting": args.setting,
        "n": args.n,
        "order": args.order,
        "seed": args.seed,
        "fictional": args.fictional,
        "matching": args.matching,
    }
    if args.bank:
        options["bank"] = args.bank
    if args.tests:
        options["tests"] = args.tests
    with progress_bar(f"icl / {args.model}") as update:
        result = evaluate_by_category(context_from(args), args.model, options, limit=args.limit, progress=update)
    from backend.cli import Finished, status_exit

    return Finished(show(args, result, summary_table), status_exit([result.get("status")]))


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    icl = sub.add_parser("icl", help="in-context example selection (CoFe)")
    actions = icl.add_subparsers(dest="icl_action", required=True)
    build = actions.add_parser("build", parents=[common], help="select examples and write prompts for test cases")
    build.add_argument("--bank", type=Path, required=True, help="JSONL example bank")
    build.add_argument("--tests", type=Path, nargs="+", required=True, help="JSONL test case file(s)")
    build.add_argument("--setting", default="full_similarity", choices=setting_names())
    build.add_argument("--out", type=Path, required=True, help="JSONL output, one line per test case")
    build.add_argument("--n", type=int, default=10, help="examples per test case")
    build.add_argument("--order", choices=ORDERS, default="structure_closer")
    build.add_argument("--seed", type=int, default=0, help="for random order, random selection, fictional words")
    build.add_argument("--fictional", action="store_true", help="appendix C.7: fictional target-side words")
    build.add_argument("--w-p", dest="w_p", type=float, default=None, help="override the preset's w_p")
    build.add_argument("--w-s", dest="w_s", type=float, default=None, help="override the preset's w_s")
    build.add_argument("--w-c", dest="w_c", type=float, default=None, help="override the preset's w_c")
    build.add_argument(
        "--diversity", action=argparse.BooleanOptionalAction, default=None, help="override the preset's S(C) term"
    )
    build.add_argument(
        "--primitive-once",
        dest="primitive_once",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="count a test primitive only until an example covers it (default: on)",
    )
    build.add_argument("--matching", choices=list(MATCHING), default=None, help=MATCHING_CLI_HELP)
    build.add_argument("--mmr-lambda", type=float, default=0.5)
    build.add_argument("--mmr-pool", type=int, default=100)
    build.add_argument("--embedding-model", default=None, help="default: the embedding_model setting")
    build.add_argument("--markdown", action="store_true", help="print the Table 2 summary as Markdown")
    build.set_defaults(handler=_build)

    ev = actions.add_parser("eval", parents=[common], help="run a model on stored sets: exact match per category")
    ev.add_argument("--model", required=True, help="registered model name (python -m backend models)")
    ev.add_argument("--bank", default=None, help="stored bank set (default: the newest)")
    ev.add_argument("--tests", nargs="+", default=None, help="stored test sets (default: all)")
    ev.add_argument("--setting", default="full_similarity", choices=setting_names())
    ev.add_argument("--n", type=int, default=10)
    ev.add_argument("--order", choices=ORDERS, default="structure_closer")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--fictional", action="store_true")
    ev.add_argument("--matching", choices=list(MATCHING), default="both", help=MATCHING_CLI_HELP)
    ev.add_argument("--limit", type=int, default=None, help="only the first N test cases")
    add_output_flags(ev)
    ev.set_defaults(handler=_eval)

    imp = groups["import"].add_parser("icl", parents=[common], help="import an example bank or test set (JSONL)")
    imp.add_argument("name", help="name of the set")
    imp.add_argument("file", type=Path)
    imp.add_argument("--kind", choices=("bank", "tests"), required=True)
    imp.add_argument("--category", default=None, help="category of lines without one (tests: from the file name)")
    imp.add_argument("--replace", action="store_true", help="replace a set with the same name")
    imp.set_defaults(handler=_import)

    exp = groups["export"].add_parser("icl", parents=[common], help="export an example set as JSONL")
    exp.add_argument("name")
    exp.add_argument("--out", type=Path, required=True)
    exp.set_defaults(handler=_export)
