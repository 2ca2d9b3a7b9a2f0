"""The planning tab's named JSON endpoints for scripts: planning_questions, planning_question, planning_next_check,
planning_submit_check, planning_author, planning_ask, planning_run, planning_results. Every backend function
checks the caller's role again."""

from __future__ import annotations

from dataclasses import asdict

import gradio as gr

from backend.context import AppContext
from backend.planning import service, validation
from backend.planning.authoring import author_question
from components.common import caller
from components.events import FAST, Event, bind, wire
from components.planning.views import is_reviewer, question_json, results_json


def planning_questions(ctx: AppContext, request: gr.Request) -> list[str]:
    """The ids of the questions that count or wait for checks."""
    return service.question_ids(ctx, caller(ctx, request))


def planning_question(ctx: AppContext, question_id: str, request: gr.Request) -> dict:
    """A question, text only (no clip); for reviewers with its choices' STRIPS checks and the key
    (answer_index), which annotators do not see (null)."""
    name = caller(ctx, request)
    return question_json(service.view_question(ctx, name, question_id, with_clip=False), is_reviewer(ctx, name))


def planning_next_check(ctx: AppContext, request: gr.Request) -> dict:
    """Your current or next question to check (no key, no STRIPS verdicts), or {"question": null} when
    none is left; ``left_for_you`` counts the questions left for you, this one included; a crowd-study
    worker also gets ``study`` (tasks done of the quota and, once done, the completion code)."""
    name = caller(ctx, request)
    task = validation.next_question(ctx.database, name, ctx.settings.lease_minutes, ctx.settings)
    left = validation.check_counts(ctx.database, name)["left_for_you"]
    study = validation.study_of(ctx.database, name)  # a crowd-study worker: quota and, once done, the code
    extra = {"study": study} if study else {}
    if task is None:
        return {"question": None, "left_for_you": left, **extra}
    view = service.build_view(ctx, task.question, with_clip=False)
    return {"question": question_json(view, False), "expires_at": task.expires_at, "left_for_you": left, **extra}


def planning_submit_check(
    ctx: AppContext, question_id: str, plausible_choice: int, seconds_spent: float | None, request: gr.Request
) -> dict:
    """Store your check: plausible_choice 0-5, or -1 for "none is plausible"."""
    return validation.submit_check(
        ctx.database, caller(ctx, request), question_id, int(plausible_choice), seconds_spent, ctx.settings
    )


def planning_ask(ctx: AppContext, question_id: str, model: str, mode: str, request: gr.Request) -> dict:
    """One model's live answer to one question (mode "frames" or "text"; reviewers)."""
    return asdict(service.ask_model(ctx, caller(ctx, request), question_id, model, mode or "frames"))


def planning_run(
    ctx: AppContext, model: str, mode: str, circular: bool, limit: int | None, request: gr.Request
) -> dict:
    """A batch run over the questions that count (reviewers); resumes from the prediction store."""
    return service.run_batch(
        ctx, caller(ctx, request), model, mode or "frames", bool(circular), int(limit) if limit else None
    )


def planning_results(ctx: AppContext, baseline: str | None, circular: bool, request: gr.Request) -> dict:
    """The leaderboard (intervals, McNemar against baseline), human accuracy, the disagreement queue."""
    return results_json(ctx, caller(ctx, request), baseline or None, bool(circular))


def planning_author(ctx: AppContext, sequence_id: str, intent: str | None, request: gr.Request) -> dict:
    """Author a new question from a sequence (reviewers; intent null: the sequence's first high-level
    intent); it goes to annotators' checks before it counts."""
    question = author_question(
        ctx.database,
        caller(ctx, request),
        (sequence_id or "").strip(),
        (intent or "").strip() or None,
        annotators_per_question=ctx.settings.planning_annotators_per_question,
    )
    return question_json(service.build_view(ctx, question, with_clip=False), True)


def endpoints(ctx: AppContext) -> list[Event]:
    return [
        Event("planning_questions", "annotator", bind(planning_questions, ctx), options=FAST),
        Event("planning_question", "annotator", bind(planning_question, ctx), options=FAST),
        Event("planning_next_check", "annotator", bind(planning_next_check, ctx), options=FAST),
        Event("planning_submit_check", "annotator", bind(planning_submit_check, ctx), options=FAST),
        Event("planning_author", "reviewer", bind(planning_author, ctx), options=FAST),
        Event("planning_ask", "reviewer", bind(planning_ask, ctx), model=True),
        Event("planning_run", "reviewer", bind(planning_run, ctx), model=True),
        Event("planning_results", "annotator", bind(planning_results, ctx)),
    ]


def register(ctx: AppContext) -> None:
    wire(ctx, endpoints(ctx))
