"""``compstudio webhooks add|list|remove|test|deliveries|resend``: outgoing webhooks from the operator's shell."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from backend.webhooks import EVENTS, registry
from backend.webhooks.sender import WebhookSender


def _webhooks(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    ctx = context_from(args)
    db = ctx.database
    if args.action == "add":
        return registry.add_webhook(
            db, ctx.settings, None, name=args.name, url=args.url, events=args.events, secret=args.secret, operator=True
        )
    if args.action == "list":
        return registry.list_webhooks(db, None, operator=True)
    if args.action == "remove":
        return registry.remove_webhook(db, None, args.name, operator=True)
    if args.action == "deliveries":
        return registry.deliveries(db, None, args.name, args.limit, operator=True)
    if args.action == "resend":
        return registry.resend(db, None, args.delivery_id, operator=True)
    queued = registry.queue_test(db, None, args.name, operator=True)
    outcome = WebhookSender(ctx.settings, db).send(queued["delivery_id"])  # sent now, not by the app's thread
    return {**queued, **(asdict(outcome) if outcome else {"status": "not pending"})}


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    hooks = sub.add_parser("webhooks", help="outgoing webhooks: add, list, remove, test, deliveries, resend")
    actions = hooks.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", parents=[common], help="register an endpoint (prints its secret, once)")
    add.add_argument("name", help="a name for the endpoint, e.g. lab-pipeline")
    add.add_argument("--url", required=True, help="http(s) address that receives the events")
    add.add_argument("--events", default="", help=f"comma-separated, default all: {','.join(EVENTS)}")
    add.add_argument("--secret", default="", help="the signing secret (default: a random one, printed)")
    actions.add_parser("list", parents=[common], help="every endpoint with its delivery counts")
    for name, text in (("remove", "remove an endpoint and its queued deliveries"), ("test", "send a test event now")):
        p = actions.add_parser(name, parents=[common], help=text)
        p.add_argument("name")
    shown = actions.add_parser("deliveries", parents=[common], help="the last deliveries, newest first")
    shown.add_argument("--name", default=None, help="of this endpoint only")
    shown.add_argument("--limit", type=int, default=50)
    again = actions.add_parser("resend", parents=[common], help="queue a delivery again (by its id)")
    again.add_argument("delivery_id", type=int)
    hooks.set_defaults(handler=_webhooks)
