"""``python -m backend users add|import|invite|list|set-role|disable|enable``: account management from the
operator's shell."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import Any

from backend.accounts import auth


def _users(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    if args.action == "add":
        return asdict(auth.add_user(ctx.database, args.name, args.role, args.password))
    if args.action == "import":
        from backend.accounts.bulk import import_users

        out = args.passwords_out or args.file.with_name(f"{args.file.stem}.passwords.csv")
        return import_users(ctx.database, args.file, out)
    if args.action == "invite":
        from backend.accounts.admin import operator
        from backend.accounts.invitations import create_invitation

        return create_invitation(ctx.database, ctx.settings, operator(ctx.database), args.role, args.base_url)
    if args.action == "list":
        return [asdict(u) for u in auth.list_users(ctx.database)]
    if args.action == "set-role":
        return asdict(auth.set_role(ctx.database, args.name, args.role))
    if args.action == "disable":
        return asdict(auth.set_disabled(ctx.database, args.name, True))
    return asdict(auth.set_disabled(ctx.database, args.name, False))


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    users = sub.add_parser("users", help="manage accounts")
    actions = users.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", parents=[common], help="create an account")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=auth.ROLES)
    add.add_argument("--password", required=True)
    bulk = actions.add_parser("import", parents=[common], help="create accounts from a CSV (all or nothing)")
    bulk.add_argument("file", type=Path, help="CSV with columns username,role[,password]")
    bulk.add_argument(
        "--passwords-out",
        type=Path,
        default=None,
        help="where generated passwords go (0600; default FILE.passwords.csv)",
    )
    invite = actions.add_parser("invite", parents=[common], help="a one-time sign-up link with a role")
    invite.add_argument("--role", required=True, choices=auth.ROLES)
    invite.add_argument("--base-url", default="http://127.0.0.1:7860", help="the app's public address")
    actions.add_parser("list", parents=[common], help="list accounts")
    set_role = actions.add_parser("set-role", parents=[common], help="change a role")
    set_role.add_argument("name")
    set_role.add_argument("role", choices=auth.ROLES)
    for name in ("disable", "enable"):
        p = actions.add_parser(name, parents=[common], help=f"{name} an account")
        p.add_argument("name")
    users.set_defaults(handler=_users)
