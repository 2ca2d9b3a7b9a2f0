"""Planning commands: ``import planning``, ``export planning``, ``metrics planning``, ``planning ...``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import ImportFileError
from backend.storage.jsonl import read_jsonl
from backend.terminal import add_output_flags

if TYPE_CHECKING:
    from backend.context import AppContext


def _ctx(args: argparse.Namespace) -> AppContext:
    from backend.cli import context_from

    return context_from(args)


def _import(args: argparse.Namespace) -> Any:
    from backend.planning.questions import import_planning

    ctx = _ctx(args)
    return import_planning(
        ctx.database,
        args.dir,
        add_to_pool=not args.no_pool,
        annotators_per_question=ctx.settings.planning_annotators_per_question,
    )


def _export(args: argparse.Namespace) -> Any:
    from backend.planning.questions import COUNTED_STATUSES, export_planning

    statuses = ("released", "pending", "validated", "rejected") if args.all else COUNTED_STATUSES
    return export_planning(_ctx(args).database, args.out, statuses=statuses, source=args.source)


def read_prediction_lines(path: Path) -> list[dict]:
    """JSONL lines ``{"id", "reference": [names], "predictions": [[names], ...], "observed"?: [names]}``."""
    records = []
    for number, record in read_jsonl(path):
        ok = (
            isinstance(record, dict)
            and isinstance(record.get("reference"), list)
            and isinstance(record.get("predictions"), list)
            and all(isinstance(p, list) for p in record["predictions"])
        )
        if not ok:
            raise ImportFileError(str(path), number, 'expected {"id", "reference": [...], "predictions": [[...], ...]}')
        records.append(record)
    return records


def _metrics(args: argparse.Namespace) -> Any:
    from backend.planning.metrics import MetricOptions, compute_future_and_full
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir)
    options = MetricOptions(
        settings.planning_metrics_top_k,
        settings.planning_item_acc_denominator,
        settings.planning_pr_counting,
        settings.planning_dist_scope,
    )
    records = read_prediction_lines(args.predictions)
    if args.observed_from_db:
        from backend.planning.catalog import load_catalog
        from backend.planning.questions import get_question

        ctx = _ctx(args)
        catalog = load_catalog(ctx.database)
        for record in records:
            if record.get("observed") is None:
                record["observed"] = catalog.names(get_question(ctx.database, str(record["id"])).observed)
    return compute_future_and_full(records, options)


def _strips(args: argparse.Namespace) -> Any:
    from backend.planning.catalog import load_catalog
    from backend.planning.questions import list_questions
    from backend.planning.strips import distractor_report

    ctx = _ctx(args)
    return distractor_report(list_questions(ctx.database, ("released",)), load_catalog(ctx.database))


# answered, refused and unparsed apart (backend.inference.outcomes), in every summary this command prints
OUTCOME_KEYS = ("answered", "answered_rate", "refusals", "refusal_rate", "parse_failures", "parse_failure_rate")
_RUN_KEYS = ("status", "items", "newly_computed", "from_store", "seconds", *OUTCOME_KEYS, "errors", "manifest")


def _run(args: argparse.Namespace) -> Any:
    from backend.inference.runner import run_eval
    from backend.planning.evaluation import BENCHMARK
    from backend.planning.leaderboard import leaderboard
    from backend.terminal import progress_bar, show

    ctx = _ctx(args)
    summaries = {}
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        with progress_bar(f"planning / {model}") as update:
            summary = run_eval(
                ctx,
                BENCHMARK,
                model,
                limit=args.limit,
                load_options={"mode": args.mode, "circular": args.circular},
                progress=update,
            )
        summaries[model] = {k: summary.as_dict()[k] for k in _RUN_KEYS}
    board = leaderboard(ctx.database, args.baseline, args.circular, ctx.settings.bootstrap_samples, ctx)
    shown = show(args, {"runs": summaries, "leaderboard": _brief(board) if args.brief else board}, _run_table)
    from backend.cli import Finished, status_exit

    return Finished(shown, status_exit(s["status"] for s in summaries.values()))


def _run_table(result: dict) -> str:
    """The leaderboard as a table: each run's accuracy, interval and answers read."""
    from backend.terminal import pct, table

    board = result["leaderboard"]
    rows = [
        {
            "model": name,
            "run": entry.get("run"),
            "status": entry.get("status"),
            "errors": entry.get("errors"),
            "accuracy": entry.get("accuracy"),
            "ci95": entry.get("ci95"),
            "answered": pct(entry.get("answered_rate")),
            "unparsed": pct(entry.get("parse_failure_rate")),
            "consistency": entry.get("consistency_rate"),
        }
        for name, entry in board["runs"].items()
    ]
    return table(rows, title=f"planning: {board['questions']} questions, chance {board['chance']:.3f}")


def _brief(board: dict) -> dict:
    keep = ("accuracy", "ci95", "n", "run", "partial", "status", *OUTCOME_KEYS, "errors", "consistency_rate")
    return {
        "questions": board["questions"],
        "chance": board["chance"],
        "baseline": board["baseline"],
        "runs": {
            name: {**{k: r[k] for k in keep if k in r}, **{k: v for k, v in r.items() if k.startswith("mcnemar")}}
            for name, r in board["runs"].items()
        },
        "comparison": board["comparison"],
    }


def _results(args: argparse.Namespace) -> Any:
    from backend.planning.leaderboard import leaderboard

    ctx = _ctx(args)
    board = leaderboard(ctx.database, args.baseline, args.circular, ctx.settings.bootstrap_samples, ctx)
    return _brief(board) if args.brief else board


def _author(args: argparse.Namespace) -> Any:
    from backend.planning.authoring import create_question
    from backend.planning.questions import CHOICE_LETTERS

    ctx = _ctx(args)
    q = create_question(
        ctx.database,
        "cli",
        args.sequence,
        args.intent,
        seed=args.seed,
        annotators_per_question=ctx.settings.planning_annotators_per_question,
    )
    return {
        "id": q.id,
        "status": q.status,
        "answer": CHOICE_LETTERS[q.answer_index],
        "observed": list(q.observed),
        "choices": [list(c) for c in q.choices],
    }


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    imp = groups["import"].add_parser("planning", parents=[common], help="import ViLPAct's 510 planning questions")
    imp.add_argument("dir", type=Path, help="the release's data/ folder (import vilpact first)")
    imp.add_argument("--no-pool", action="store_true", help="do not put the questions in the annotation pool")
    imp.set_defaults(handler=_import)

    exp = groups["export"].add_parser("planning", parents=[common], help="export questions in the released layout")
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--all", action="store_true", help="also pending and rejected questions")
    exp.add_argument("--source", choices=("vilpact", "authored"), default=None)
    exp.set_defaults(handler=_export)

    if "metrics" not in groups:
        groups["metrics"] = sub.add_parser("metrics", help="compute metrics").add_subparsers(dest="kind", required=True)
    met = groups["metrics"].add_parser("planning", parents=[common], help="generative planning metrics (JSONL)")
    met.add_argument(
        "--predictions",
        type=Path,
        required=True,
        help='JSONL: {"id", "reference": [names], "predictions": [[names], ...], "observed"?: [names]}',
    )
    met.add_argument(
        "--observed-from-db",
        action="store_true",
        help="take each line's observed actions from the stored question with that id (full metrics)",
    )
    met.set_defaults(handler=_metrics)

    planning = sub.add_parser("planning", help="planning benchmark tools").add_subparsers(dest="action", required=True)
    strips = planning.add_parser("strips", parents=[common], help="count released distractors that are not executable")
    strips.set_defaults(handler=_strips)
    run = planning.add_parser("run", parents=[common], help="run models over the questions and print the leaderboard")
    run.add_argument("--models", default="nsplan-lite,bigram-prior,random")
    run.add_argument("--mode", choices=("frames", "text"), default="frames")
    run.add_argument("--circular", action="store_true", help="every rotation of the choices must be answered right")
    run.add_argument("--limit", type=int, default=None)
    run.add_argument("--baseline", default="bigram-prior")
    run.add_argument("--brief", action="store_true", help="only accuracies, intervals and McNemar tests")
    add_output_flags(run)
    run.set_defaults(handler=_run)
    res = planning.add_parser("results", parents=[common], help="the leaderboard from stored runs")
    res.add_argument("--baseline", default="bigram-prior")
    res.add_argument("--circular", action="store_true")
    res.add_argument("--brief", action="store_true")
    res.set_defaults(handler=_results)
    author = planning.add_parser("author", parents=[common], help="author a new question from a sequence")
    author.add_argument("sequence")
    author.add_argument("--intent", default=None)
    author.add_argument("--seed", type=int, default=0)
    author.set_defaults(handler=_author)
