"""Role-checked entry points of the planning tab (every Gradio event is an HTTP endpoint)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from backend.accounts.auth import require_role
from backend.errors import MediaError
from backend.planning.catalog import load_catalog
from backend.planning.questions import PlanningQuestion, get_question, list_question_ids
from backend.planning.strips import check_question

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.runner import Progress
    from backend.inference.service import Answer


@dataclass(frozen=True)
class QuestionView:
    question: PlanningQuestion
    observed_names: list[str]
    choice_names: list[list[str]]
    checks: list[str]
    clip: str | None
    text_only_reason: str | None
    # the observed window (start, end s in the source video) and the sequence's actions, for the player's
    # timeline (backend/vilpact/timeline.py keeps only what the window shows)
    window: tuple[float, float] | None = None
    actions: tuple[tuple[str, float, float], ...] = ()


def question_ids(ctx: AppContext, username: str | None) -> list[str]:
    require_role(ctx.database, username, "annotator")
    return list_question_ids(ctx.database, ("released", "validated", "pending"))


def view_question(ctx: AppContext, username: str | None, question_id: str, with_clip: bool = True) -> QuestionView:
    """A question with its choices' STRIPS checks and its observed-window clip (or why it is text only)."""
    require_role(ctx.database, username, "annotator")
    return build_view(ctx, get_question(ctx.database, question_id), with_clip)


def build_view(ctx: AppContext, question: PlanningQuestion, with_clip: bool = True) -> QuestionView:
    from backend.planning.media import observed_window_clip, observed_window_seconds

    catalog = load_catalog(ctx.database)
    checks = [c.describe(catalog) for c in check_question(question, catalog)]
    clip, reason = None, None
    row = ctx.database.query_one("SELECT video_path, actions FROM sequences WHERE id = ?", (question.sequence_id,))
    window = observed_window_seconds(question.ob_start_frame, question.ob_end_frame)
    if not row or not row["video_path"]:
        reason = "No video file for this question (Charades videos are not bundled): text only."
    elif with_clip:
        try:
            clip = str(observed_window_clip(ctx.settings, row["video_path"], *window))
        except MediaError as exc:
            reason = f"{exc} — text only."
    actions = tuple(
        (a["name"], float(a["start"]), float(a["end"])) for a in (json.loads(row["actions"]) if row else [])
    )
    return QuestionView(
        question,
        catalog.names(question.observed),
        [catalog.names(c) for c in question.choices],
        checks,
        clip,
        reason,
        window,
        actions,
    )


def ask_model(ctx: AppContext, username: str | None, question_id: str, model: str, mode: str = "frames") -> Answer:
    """Ask one model one question live (through the prediction store; reviewers and admins)."""
    from backend.inference.service import ask_model as ask
    from backend.planning.evaluation import BENCHMARK, planning_item

    require_role(ctx.database, username, "reviewer")
    question = get_question(ctx.database, question_id)
    return ask(ctx, username, BENCHMARK, model, planning_item(ctx, question, load_catalog(ctx.database), mode))


def run_batch(
    ctx: AppContext,
    username: str | None,
    model: str,
    mode: str = "frames",
    circular: bool = False,
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict:
    """A batch run over the questions that count (reviewers and admins); resumes from the store."""
    from backend.inference.runner import run_eval
    from backend.planning.evaluation import BENCHMARK

    user = require_role(ctx.database, username, "reviewer")
    summary = run_eval(
        ctx,
        BENCHMARK,
        model,
        limit=limit,
        progress=progress,
        actor=user.username,
        load_options={"mode": mode, "circular": circular},
    )
    return summary.as_dict()


def results(
    ctx: AppContext, username: str | None, baseline: str | None = "bigram-prior", circular: bool = False
) -> dict:
    """The leaderboard (everyone signed in) and human accuracy against the key."""
    from backend.planning.leaderboard import leaderboard
    from backend.planning.validation import human_accuracy

    require_role(ctx.database, username, "annotator")
    board = leaderboard(ctx.database, baseline, circular, ctx.settings.bootstrap_samples, ctx)
    board["human_accuracy"] = human_accuracy(ctx.database, ctx.settings.bootstrap_samples)
    return board
