"""Core commands: users, ViLPAct import, intent export, settings."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from backend import auth
from backend.intents.export import FORMATS, export_intents
from backend.settings import settings_markdown
from backend.vilpact.importer import import_vilpact


def _users(args: argparse.Namespace):
    from backend.cli import context_from

    ctx = context_from(args)
    if args.action == "add":
        return asdict(auth.add_user(ctx.database, args.name, args.role, args.password))
    if args.action == "list":
        return [asdict(u) for u in auth.list_users(ctx.database)]
    if args.action == "set-role":
        return asdict(auth.set_role(ctx.database, args.name, args.role))
    if args.action == "disable":
        return asdict(auth.set_disabled(ctx.database, args.name, True))
    return asdict(auth.set_disabled(ctx.database, args.name, False))


def _import_vilpact(args: argparse.Namespace):
    from backend.cli import context_from

    ctx = context_from(args)
    return import_vilpact(
        ctx.database, args.dir, videos=args.videos, add_to_pool=not args.no_pool,
        annotators_per_sequence=ctx.settings.annotators_per_sequence,
    ).as_dict()


def _export_intents(args: argparse.Namespace):
    from backend.cli import context_from

    return export_intents(context_from(args).database, args.format, args.out, source=args.source)


README_START, README_END = "<!-- settings:start -->", "<!-- settings:end -->"


def _settings(args: argparse.Namespace):
    if args.update_readme:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        text = readme.read_text(encoding="utf-8")
        head, _, rest = text.partition(README_START)
        _, _, tail = rest.partition(README_END)
        readme.write_text(f"{head}{README_START}\n{settings_markdown()}\n{README_END}{tail}", encoding="utf-8")
        return {"updated": str(readme)}
    if args.markdown:
        print(settings_markdown())
        return None
    from backend.settings import load_settings

    return {k: v for k, v in asdict(load_settings()).items()}


def register(sub, groups, common) -> None:
    users = sub.add_parser("users", help="manage accounts")
    actions = users.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", parents=[common], help="create an account")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=auth.ROLES)
    add.add_argument("--password", required=True)
    actions.add_parser("list", parents=[common], help="list accounts")
    set_role = actions.add_parser("set-role", parents=[common], help="change a role")
    set_role.add_argument("name")
    set_role.add_argument("role", choices=auth.ROLES)
    for name in ("disable", "enable"):
        p = actions.add_parser(name, parents=[common], help=f"{name} an account")
        p.add_argument("name")
    users.set_defaults(handler=_users)

    vilpact = groups["import"].add_parser("vilpact", parents=[common], help="import ViLPAct's released data")
    vilpact.add_argument("dir", type=Path, help="the release's data/ folder")
    vilpact.add_argument("--videos", type=Path, default=None, help="folder of <id>.mp4 Charades videos")
    vilpact.add_argument("--no-pool", action="store_true", help="do not put the sequences in the annotation pool")
    vilpact.set_defaults(handler=_import_vilpact)

    intents = groups["export"].add_parser("intents", parents=[common], help="export intent annotations")
    intents.add_argument("--format", choices=FORMATS, default="jsonl")
    intents.add_argument("--out", type=Path, required=True)
    intents.add_argument("--source", choices=("live", "imported"), default=None, help="only this source")
    intents.set_defaults(handler=_export_intents)

    settings = sub.add_parser("settings", help="show settings (or the README table with --markdown)")
    settings.add_argument("--markdown", action="store_true")
    settings.add_argument("--update-readme", action="store_true", help="rewrite the settings table in README.md")
    settings.set_defaults(handler=_settings)
