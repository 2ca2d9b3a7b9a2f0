"""The Studies tab's named endpoints for scripts (``gr.api``, on the scripts mount): admins create, list, link,
close and count studies; a study worker reads their own state, takes the qualification and leaves. Each backend
function checks the caller's role again (the study worker's own ones answer "not in a crowd study" to others)."""

from __future__ import annotations

import gradio as gr

from backend.campaigns import links, studies, workers
from backend.context import AppContext
from components.common import caller
from components.events import Event, bind, wire
from components.studies.listing import public_address


def study_create(
    ctx: AppContext,
    name: str,
    kind: str,
    tasks_per_worker: int,
    time_limit_minutes: int,
    completion_code: str,
    screenout_code: str,
    return_url: str,
    platform: str,
    qualification_size: int,
    pass_mark: float,
    request: gr.Request,
    places: int | None = None,
    qualification_attempts: int = 2,
    worker_param: str = "",
    gold_rate: float = 0.0,
    partial_code: str = "",
    prolific_token: str = "",
    prolific_study_id: str = "",
) -> dict:
    """Create a study; return_url "" takes the platform's default; places null or 0: what the pool needs;
    platform prolific, connect or generic (mturk is archived: refused); worker_param names the generic
    platform's id parameter; prolific_token with prolific_study_id checks arrivals against Prolific.
    Returns the study (never its secret nor the token)."""
    return studies.create_study(
        ctx.database,
        caller(ctx, request),
        name=name,
        kind=kind,
        tasks_per_worker=int(tasks_per_worker),
        time_limit_minutes=int(time_limit_minutes),
        completion_code=completion_code,
        screenout_code=screenout_code,
        return_url=return_url or None,
        platform=platform,
        qualification_size=int(qualification_size),
        pass_mark=float(pass_mark),
        places=int(places) if places else None,
        qualification_attempts=int(qualification_attempts),
        worker_param=worker_param or "",
        gold_rate=float(gold_rate or 0),
        partial_code=partial_code or "",
        prolific_token=prolific_token or "",
        prolific_study_id=prolific_study_id or "",
    ).public()


def study_list(ctx: AppContext, request: gr.Request) -> list:
    """Every study with qualifying / working / screened_out / finished / returned / median_minutes."""
    return studies.list_studies(ctx.database, caller(ctx, request))


def study_link(ctx: AppContext, study_id: int, base_url: str, request: gr.Request) -> dict:
    """The study link to paste into the platform; base_url is the app's public address."""
    return links.link_for(ctx.database, caller(ctx, request), int(study_id), base_url or public_address(request))


def study_close(ctx: AppContext, study_id: int, request: gr.Request) -> dict:
    """Close a study: no new workers; those in it see their completion code."""
    return studies.close_study(ctx.database, caller(ctx, request), int(study_id)).public()


def study_stats(ctx: AppContext, study_id: int, request: gr.Request) -> dict:
    """One study's counts."""
    return studies.study_stats(ctx.database, caller(ctx, request), int(study_id))


def study_me(ctx: AppContext, request: gr.Request) -> dict:
    """A study worker's own state: status, tasks done of the quota, the completion code once finished, and
    while not yet qualified the questions of their next try (without answers), tries_left and the mistakes of
    their last try explained."""
    return workers.my_study(ctx.database, caller(ctx, request))


def study_qualify(ctx: AppContext, answers: dict, request: gr.Request) -> dict:
    """One try at the qualification: answers maps question id to the chosen option's index."""
    me = caller(ctx, request)
    study_id = workers.my_study(ctx.database, me)["study_id"]
    done = workers.take_qualification(ctx.database, me, study_id, {str(k): str(v) for k, v in answers.items()})
    return {
        "status": done.worker.status,
        "right": done.result.right,
        "asked": done.result.asked,
        "passed": done.result.passed,
        "tries_left": done.tries_left,
        "mistakes": done.mistakes,
        "full": done.worker.turned_away_at is not None,  # passed when the last place had gone: screened out
    }


def study_leave(ctx: AppContext, request: gr.Request) -> dict:
    """A study worker leaves (returns) their study; they cannot come back."""
    me = caller(ctx, request)
    return {"status": workers.leave_study(ctx.database, me, workers.my_study(ctx.database, me)["study_id"]).status}


def endpoints(ctx: AppContext) -> list[Event]:
    """Admins run studies; a study worker's own state and qualification (any signed-in account may ask; the backend
    answers "not in a crowd study" to others)."""
    return [
        Event("study_create", "admin", bind(study_create, ctx)),
        Event("study_list", "admin", bind(study_list, ctx)),
        Event("study_link", "admin", bind(study_link, ctx)),
        Event("study_close", "admin", bind(study_close, ctx)),
        Event("study_stats", "admin", bind(study_stats, ctx)),
        Event("study_me", "annotator", bind(study_me, ctx)),
        Event("study_qualify", "annotator", bind(study_qualify, ctx)),
        Event("study_leave", "annotator", bind(study_leave, ctx)),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
