"""``python -m backend gold ...`` and ``python -m backend workers ...``: gold items, quality flags, blocking,
returning answers to the pool, and the worker report, from the operator's shell. The CLI is trusted: it acts
as the operator (:func:`backend.accounts.admin.operator`, the first enabled admin account), so every change is
audited under a person."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend.accounts.admin import operator
from backend.campaigns import gold, quality, report
from backend.errors import ValidationError


def _gold(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    admin = operator(ctx.database)
    if args.action == "add":
        ids = list(args.items) or gold.candidates(ctx.database, admin, args.kind, args.auto)
        if not ids:
            raise ValidationError(f"no {args.kind} item can be gold now: none has a validated answer and is unstarted")
        return gold.add_gold(ctx.database, admin, args.kind, ids)
    if args.action == "candidates":
        return gold.candidates(ctx.database, admin, args.kind, args.limit)
    gold.retire_gold(ctx.database, admin, args.kind, args.item)
    return {"retired": args.item}


def _workers(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    db, admin = ctx.database, operator(ctx.database)
    if args.action == "report":
        rows = report.worker_report(db, admin, args.study)
        if args.csv:
            Path(args.csv).write_text(report.report_csv(rows), encoding="utf-8")
            return {"workers": len(rows), "csv": str(args.csv)}
        return rows
    if args.action == "flags":
        return quality.flags(db, admin, include_resolved=args.all)
    if args.action == "block":
        return quality.block(db, admin, args.name, args.reason)
    if args.action == "unblock":
        return quality.unblock(db, admin, args.name)
    if args.action == "resume":
        return quality.resume(db, admin, args.name)
    return quality.return_to_pool(db, admin, args.name)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    gold_cmd = sub.add_parser("gold", help="gold items mixed into workers' streams")
    actions = gold_cmd.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", parents=[common], help="make items gold (all or nothing)")
    add.add_argument("kind", choices=sorted(gold.GOLD_KINDS))
    add.add_argument("items", nargs="*", help="item ids (none: take --auto candidates)")
    add.add_argument("--auto", type=int, default=20, help="without ids: how many candidates to take")
    cand = actions.add_parser("candidates", parents=[common], help="items that could be gold now")
    cand.add_argument("kind", choices=sorted(gold.GOLD_KINDS))
    cand.add_argument("--limit", type=int, default=50)
    retire = actions.add_parser("retire", parents=[common], help="stop handing an item out as gold")
    retire.add_argument("kind", choices=sorted(gold.GOLD_KINDS))
    retire.add_argument("item")
    gold_cmd.set_defaults(handler=_gold)

    workers = sub.add_parser("workers", help="worker quality, blocking and the payment report")
    acts = workers.add_subparsers(dest="action", required=True)
    rep = acts.add_parser("report", parents=[common], help="per-worker report (JSON, or CSV with --csv)")
    rep.add_argument("--study", default=None, help="only this study's workers")
    rep.add_argument("--csv", default=None, help="write the CSV for payment to this file")
    flags = acts.add_parser("flags", parents=[common], help="open quality flags and why")
    flags.add_argument("--all", action="store_true", help="resolved ones too")
    block = acts.add_parser("block", parents=[common], help="block a worker (frees their leases now)")
    block.add_argument("name")
    block.add_argument("--reason", default="")
    for name, text in (
        ("unblock", "unblock a worker"),
        ("resume", "resume a paused worker"),
        ("return", "return a blocked worker's unreviewed answers to the pool"),
    ):
        acts.add_parser(name, parents=[common], help=text).add_argument("name")
    workers.set_defaults(handler=_workers)
