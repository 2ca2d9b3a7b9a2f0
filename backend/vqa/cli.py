"""VQA commands: ``score vqa``, ``import vqa``, ``export vqa``, ``vqa grant-author``, ``vqa run``, ``vqa vote``,
``vqa people`` (people as runs beside the models) and ``vqa position-bias`` (what circular evaluation reveals).

``score vqa`` needs no database: it reads the items (``questions.json`` of a released-layout folder, or an
items JSONL) and the predictions JSONL and prints overall, per-dimension and per-category scores, with the
random-choice expectation beside them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.accounts.admin import operator
from backend.errors import ImportFileError, ValidationError
from backend.storage.jsonl import read_jsonl
from backend.terminal import add_output_flags
from backend.vqa.io import FORMATS
from backend.vqa.items import VqaItem, make_item, parse_letters

if TYPE_CHECKING:
    from backend.context import AppContext


def _context(args: argparse.Namespace) -> AppContext:
    from backend.cli import context_from

    return context_from(args)


def read_items_file(path: Path) -> list[VqaItem]:
    """Items (keys included) from a released-layout folder / its questions.json, or an items JSONL."""
    from backend.vqa.io import _options_list

    path = Path(path)
    if path.is_dir():
        path = path / "questions.json"
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        records: Sequence[tuple[int | None, Any]] = [(None, r) for r in json.loads(text)]
    else:
        records = read_jsonl(path)
    items, seen = [], set()
    for index, (line, record) in enumerate(records, start=1):
        options, problems = _options_list(record.get("options"))
        answer = parse_letters(record.get("answer"))
        item_id = str(record.get("id") or index)
        if item_id in seen:
            problems.append(f"duplicate id {item_id!r}")
        seen.add(item_id)
        try:
            if problems:
                raise ValidationError(problems)
            items.append(
                make_item(
                    category=str(record.get("category") or ""),
                    question=str(record.get("question") or ""),
                    options=options,
                    answer=answer,
                    images=["-"],
                    choice_type=record.get("choice_type") or ("single" if len(answer) == 1 else "indefinite"),
                    item_id=item_id,
                )
            )
        except ValidationError as exc:
            raise ImportFileError(str(path), line, f"question {index}: {exc}") from None
    return items


def _score(args: argparse.Namespace) -> dict[str, Any]:
    from backend.vqa.runs import read_predictions_file
    from backend.vqa.scoring import random_table, score_predictions

    items = read_items_file(args.items)
    predictions = read_predictions_file(args.predictions, {i.id for i in items})
    result = score_predictions(items, predictions).as_dict()
    result["missing_predictions"] = result["questions"] - result["answered"]
    result["random_choice"] = random_table(items).as_dict()
    return result


def _import(args: argparse.Namespace) -> dict[str, Any]:
    from backend.vqa.io import import_items

    ctx = _context(args)
    return import_items(ctx.database, ctx.settings, args.source, args.format, actor="cli")


def _export(args: argparse.Namespace) -> dict[str, Any]:
    from backend.vqa.io import export_items

    ctx = _context(args)
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    return export_items(ctx.database, ctx.settings, args.out, args.format, ids=ids, status=args.status)


def _grant(args: argparse.Namespace) -> dict[str, Any]:
    from backend.storage import audit
    from backend.vqa.permissions import has_permission

    ctx = _context(args)
    from backend.accounts import auth

    if auth.get_user(ctx.database, args.name) is None:
        raise ValidationError(f"no user named {args.name!r}")
    with ctx.database.write() as db:
        if args.revoke:
            db.conn.execute("DELETE FROM vqa_permissions WHERE username = ? AND permission = 'author'", (args.name,))
        else:
            db.conn.execute(
                "INSERT OR IGNORE INTO vqa_permissions (username, permission, granted_by, granted_at) "
                "VALUES (?, 'author', 'cli', datetime('now'))",
                (args.name,),
            )
        audit(
            db,
            "cli",
            "vqa.permission.revoke" if args.revoke else "vqa.permission.grant",
            args.name,
            {"permission": "author"},
        )
    return {"user": args.name, "author": has_permission(ctx.database, args.name, "author")}


def _run(args: argparse.Namespace) -> Any:
    from backend.inference.overrides import generation_overrides, parse_pairs
    from backend.terminal import progress_bar, show, summary_table
    from backend.vqa.models import run_model

    ctx = _context(args)
    gen = generation_overrides(parse_pairs(args.gen, "--gen")) or None
    with progress_bar(f"vqa / {args.model}") as update:
        result = run_model(
            ctx,
            operator(ctx.database),
            args.model,
            blind=args.blind,
            image_mode=args.image_mode,
            circular=args.circular,
            gen=gen,
            limit=args.limit,
            progress=update,
        )
    from backend.cli import Finished, status_exit

    return Finished(show(args, result, summary_table), status_exit([result.get("status")]))


def _vote(args: argparse.Namespace) -> Any:
    from backend.terminal import progress_bar, show, table
    from backend.vqa.models import vote_difficulty

    ctx = _context(args)
    panel = [m.strip() for m in args.panel.split(",")] if args.panel else None
    with progress_bar("difficulty vote") as update:
        result = vote_difficulty(ctx, operator(ctx.database), panel, progress=update, limit=args.limit)
    return show(args, result, lambda r: table([{k: v for k, v in r.items() if not isinstance(v, (dict, list))}]))


def _people(args: argparse.Namespace) -> Any:
    from backend.humans.paired import people_rows
    from backend.reporting.leaderboards import paper_table
    from backend.terminal import show, table
    from backend.vqa.runs import comparison, leaderboard, run_manifests

    ctx = _context(args)
    user = operator(ctx.database)
    rows = leaderboard(ctx, user)
    people = [r for r in rows if r["kind"] == "people"]
    manifests = run_manifests(ctx)
    result = {
        "people": people,
        "manifests": {r["name"]: manifests.get(r["name"]) for r in people},
        "paper_table": paper_table(rows),
        "people_vs_models": comparison(ctx, user, samples=ctx.settings.bootstrap_samples)["people_vs_models"],
    }

    def render(out: dict[str, Any]) -> str:
        return "\n\n".join(
            (
                table(out["paper_table"], title="VQA per category (%), as MMComposition's Table 2 prints it"),
                table(
                    people_rows(out["people_vs_models"]), title="Each model against people, on the items both answered"
                ),
            )
        )

    return show(args, result, render)


def _position_bias(args: argparse.Namespace) -> Any:
    from backend.reporting.leaderboards import position_rows
    from backend.terminal import show, table
    from backend.vqa.circular import position_report

    ctx = _context(args)
    result = position_report(ctx, operator(ctx.database), args.models or None)
    return show(args, result, lambda out: table(position_rows(out["models"]), title="What circular evaluation reveals"))


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    if "score" not in groups:  # shared with other benchmarks' ``score KIND`` commands
        groups["score"] = sub.add_parser("score", help="score predictions against a benchmark's items").add_subparsers(
            dest="kind", required=True
        )
    vqa = groups["score"].add_parser("vqa", help="MMComposition partial-credit scores (paper section 3.2)")
    vqa.add_argument(
        "--items",
        type=Path,
        required=True,
        help="a released-layout folder (questions.json) or an items JSONL, with answers",
    )
    vqa.add_argument("--predictions", type=Path, required=True, help='JSONL of {"id": ..., "answer": ["A", "C"]}')
    vqa.set_defaults(handler=_score)

    imp = groups["import"].add_parser("vqa", parents=[common], help="import VQA items (all or nothing)")
    imp.add_argument("source", type=Path, help="released-layout folder, or an items JSONL file")
    imp.add_argument("--format", choices=FORMATS, default="released")
    imp.set_defaults(handler=_import)

    exp = groups["export"].add_parser("vqa", parents=[common], help="export VQA items")
    exp.add_argument("--out", type=Path, required=True, help="a new folder")
    exp.add_argument("--format", choices=FORMATS, default="released")
    exp.add_argument("--status", choices=("draft", "verified", "rejected"), default=None)
    exp.add_argument("--ids", default=None, help="comma-separated item ids (in this order)")
    exp.set_defaults(handler=_export)

    tools = sub.add_parser("vqa", help="VQA administration").add_subparsers(dest="action", required=True)
    grant = tools.add_parser("grant-author", parents=[common], help="give (or --revoke) the author permission")
    grant.add_argument("name")
    grant.add_argument("--revoke", action="store_true")
    grant.set_defaults(handler=_grant)
    run = tools.add_parser("run", parents=[common], help="answer the verified items with a registered model")
    run.add_argument("model")
    run.add_argument("--blind", action="store_true", help="question and options only, no image")
    run.add_argument("--image-mode", choices=("composite", "separate"), default=None)
    run.add_argument(
        "--circular",
        action="store_true",
        help="also ask every rotation of each single-choice item's options (right only if right under all)",
    )
    run.add_argument("--limit", type=int, default=None, help="only the first N questions (every rotation of each)")
    run.add_argument(
        "--gen",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generation setting, repeatable: max_new_tokens, temperature, top_p, seed, stop (the run is named after them)",
    )
    add_output_flags(run)
    run.set_defaults(handler=_run)
    vote = tools.add_parser("vote", parents=[common], help="difficulty voting by a panel of models")
    vote.add_argument("--panel", default=None, help="comma-separated model names (default: setting vqa_panel)")
    vote.add_argument("--limit", type=int, default=None, help="only the first N questions")
    add_output_flags(vote)
    vote.set_defaults(handler=_vote)
    people = tools.add_parser(
        "people",
        parents=[common],
        help="people's answers as runs (majority, one annotator's mean, best annotator) beside the models, the "
        "paper-style table and each model against people on the items both answered",
    )
    add_output_flags(people)
    people.set_defaults(handler=_people)
    bias = tools.add_parser(
        "position-bias",
        parents=[common],
        help="what circular evaluation reveals per model: flips under rotation, answers per position against "
        "uniform (chi-squared), generation vs likelihood disagreement",
    )
    bias.add_argument("models", nargs="*", help="registered model names (default: every model with data)")
    add_output_flags(bias)
    bias.set_defaults(handler=_position_bias)
