"""``python -m backend study create|list|link|close|stats``: crowd studies from the operator's shell."""

from __future__ import annotations

import argparse
from typing import Any

from backend.campaigns import links, studies
from backend.errors import ValidationError


def _study(args: argparse.Namespace) -> Any:
    from backend.cli import context_from

    database = context_from(args).database
    if args.action == "create":
        return studies.create_study(
            database,
            None,
            name=args.name,
            kind=args.kind,
            tasks_per_worker=args.tasks,
            time_limit_minutes=args.time_limit,
            completion_code=args.completion_code,
            screenout_code=args.screenout_code,
            return_url=args.return_url,
            platform=args.platform,
            qualification_size=args.qualification_size,
            pass_mark=args.pass_mark,
            qualification_attempts=args.qualification_attempts,
            places=args.places or None,
            worker_param=args.id_param,
            gold_rate=args.gold_rate,
            partial_code=args.partial_code,
            prolific_token=args.prolific_token,
            prolific_study_id=args.prolific_study,
            operator=True,
        ).public()
    if args.action == "list":
        return studies.list_studies(database, None, operator=True)
    if args.action == "link":
        return links.link_for(database, None, args.study_id, args.base_url, operator=True)
    if args.action == "close":
        if not args.yes:  # closing cannot be undone: say what it does, close only with --yes
            preview = studies.closing_preview(database, None, args.study_id, operator=True)
            raise ValidationError(f"{preview['effect']} Run it again with --yes to close the study.")
        preview = studies.closing_preview(database, None, args.study_id, operator=True)
        closed = studies.close_study(database, None, args.study_id, operator=True).public()
        return {**closed, **{k: preview[k] for k in ("completion_on_close", "screenout_on_close")}}
    return studies.study_stats(database, None, args.study_id, operator=True)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    study = sub.add_parser("study", help="crowd studies: create, list, link, close, stats")
    actions = study.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", parents=[common], help="create a study (prints it, with its id)")
    create.add_argument("--name", required=True)
    create.add_argument("--kind", required=True, choices=studies.KINDS, help="the work: intents, planning or vqa")
    create.add_argument("--tasks", type=int, required=True, help="tasks one worker does")
    create.add_argument("--time-limit", type=int, default=60, help="minutes from the first visit (default 60)")
    create.add_argument(
        "--platform",
        default="prolific",
        choices=tuple(studies.PLATFORMS),
        help="prolific, connect (CloudResearch Connect) or generic (SONA, Clickworker, your own pool); mturk is "
        "archived: Mechanical Turk closed on 2026-09-30 and new MTurk studies are refused",
    )
    create.add_argument(
        "--id-param",
        default="",
        help="generic only: the link's worker id parameter (default worker; SONA: survey_code)",
    )
    create.add_argument("--gold-rate", type=float, default=0.0, help="share of gold items among the tasks (e.g. 0.2)")
    create.add_argument(
        "--partial-code", default="", help="paid to a worker left with no task free (default: the completion code)"
    )
    create.add_argument("--prolific-token", default="", help="a Prolific API token: arrivals are checked with Prolific")
    create.add_argument("--prolific-study", default="", help="the study's id on Prolific (with --prolific-token)")
    create.add_argument("--completion-code", required=True, help="shown when a worker finishes (required)")
    create.add_argument(
        "--screenout-code", default="", help="shown when a worker fails the qualification (required with one)"
    )
    create.add_argument(
        "--places", type=int, default=0, help="most workers doing tasks at once (0: what the pool needs)"
    )
    create.add_argument("--qualification-attempts", type=int, default=2, help="tries at the qualification (default 2)")
    create.add_argument(
        "--return-url",
        default=None,
        help="where finished workers go back to; {code} is replaced (default: the platform's)",
    )
    create.add_argument("--qualification-size", type=int, default=5, help="questions in the qualification (0: none)")
    create.add_argument("--pass-mark", type=float, default=0.8, help="share of right answers needed (default 0.8)")
    actions.add_parser("list", parents=[common], help="every study with its counts")
    link = actions.add_parser("link", parents=[common], help="the study link to paste into the platform")
    link.add_argument("study_id", type=int)
    link.add_argument("--base-url", required=True, help="the app's public address, e.g. https://studio.example.org")
    for name, text in (("close", "close a study (no new workers)"), ("stats", "started, qualified, finished, ...")):
        p = actions.add_parser(name, parents=[common], help=text)
        p.add_argument("study_id", type=int)
        if name == "close":
            p.add_argument("--yes", action="store_true", help="close it (without: only say what closing does)")
    study.set_defaults(handler=_study)
