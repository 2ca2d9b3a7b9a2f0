"""``python -m backend users add|list|set-role|disable|enable``: account management from the operator's shell."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from backend.accounts import auth


def _users(args: argparse.Namespace) -> Any:
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


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
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
