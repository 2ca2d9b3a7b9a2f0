"""Crowd-worker quality's named endpoints for scripts (``gr.api``, on the scripts mount): admins' worker report,
blocking and invitations; reviewers' quality flags, resuming a paused worker and gold items. Each backend
function checks the caller's role again."""

from __future__ import annotations

import gradio as gr

from backend.accounts import invitations
from backend.campaigns import gold, quality, report
from backend.context import AppContext
from components.common import caller
from components.events import Event, bind, wire
from components.studies.invitations import app_url


def worker_report(ctx: AppContext, study_id: str | None, request: gr.Request) -> list:
    """Admins: one row per worker per study (state, tasks done, accepted, gold accuracy, active and completion
    minutes, flags); study_id may be null."""
    return report.worker_report(ctx.database, caller(ctx, request), study_id or None)


def worker_report_csv(ctx: AppContext, study_id: str | None, request: gr.Request) -> str:
    """Admins: the worker report as CSV text (for payment and bonuses)."""
    return report.report_csv(report.worker_report(ctx.database, caller(ctx, request), study_id or None))


def worker_block(ctx: AppContext, name: str, reason: str, request: gr.Request) -> dict:
    """Admins: block a worker (account disabled, leases freed now)."""
    return quality.block(ctx.database, caller(ctx, request), name, reason)


def worker_unblock(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Admins: unblock a worker."""
    return quality.unblock(ctx.database, caller(ctx, request), name)


def worker_return_to_pool(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Admins: return a blocked worker's unreviewed answers to the pool (exact N restored)."""
    return quality.return_to_pool(ctx.database, caller(ctx, request), name)


def quality_flags(ctx: AppContext, include_resolved: bool, request: gr.Request) -> list:
    """Reviewers: quality flags with the reason and the worker's state."""
    return quality.flags(ctx.database, caller(ctx, request), bool(include_resolved))


def worker_resume(ctx: AppContext, name: str, request: gr.Request) -> dict:
    """Reviewers: resume a paused worker (their open flags are resolved)."""
    return quality.resume(ctx.database, caller(ctx, request), name)


def gold_add(ctx: AppContext, kind: str, item_ids: list[str], request: gr.Request) -> dict:
    """Reviewers: make items gold (kind: intent, planning or vqa_answer); all or nothing."""
    return gold.add_gold(ctx.database, caller(ctx, request), kind, list(item_ids or []))


def gold_candidates(ctx: AppContext, kind: str, limit: int, request: gr.Request) -> list:
    """Reviewers: items that could become gold now."""
    return gold.candidates(ctx.database, caller(ctx, request), kind, int(limit or 50))


def gold_pending(ctx: AppContext, request: gr.Request) -> list:
    """Reviewers: gold intents below the agreement threshold, with the reference, waiting for a verdict."""
    return gold.pending_judgments(ctx.database, caller(ctx, request))


def gold_judge(ctx: AppContext, assignment_id: int, correct: bool, request: gr.Request) -> dict:
    """Reviewers: judge one gold answer (correct true/false)."""
    return gold.judge(ctx.database, ctx.settings, caller(ctx, request), int(assignment_id), bool(correct))


def invitation_create(ctx: AppContext, role: str, request: gr.Request) -> dict:
    """Admins: a one-time sign-up link with a role (the token is returned once)."""
    return invitations.create_invitation(ctx.database, ctx.settings, caller(ctx, request), role, app_url(request))


def invitation_list(ctx: AppContext, request: gr.Request) -> list:
    """Admins: invitations (without tokens) and who used them."""
    return invitations.list_invitations(ctx.database, caller(ctx, request))


def endpoints(ctx: AppContext) -> list[Event]:
    """Admins: the worker report, blocking and invitations; reviewers: flags, resuming and gold items."""
    return [
        Event("worker_report", "admin", bind(worker_report, ctx)),
        Event("worker_report_csv", "admin", bind(worker_report_csv, ctx)),
        Event("worker_block", "admin", bind(worker_block, ctx)),
        Event("worker_unblock", "admin", bind(worker_unblock, ctx)),
        Event("worker_return_to_pool", "admin", bind(worker_return_to_pool, ctx)),
        Event("quality_flags", "reviewer", bind(quality_flags, ctx)),
        Event("worker_resume", "reviewer", bind(worker_resume, ctx)),
        Event("gold_add", "reviewer", bind(gold_add, ctx)),
        Event("gold_candidates", "reviewer", bind(gold_candidates, ctx)),
        Event("gold_pending", "reviewer", bind(gold_pending, ctx)),
        Event("gold_judge", "reviewer", bind(gold_judge, ctx)),
        Event("invitation_create", "admin", bind(invitation_create, ctx)),
        Event("invitation_list", "admin", bind(invitation_list, ctx)),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
