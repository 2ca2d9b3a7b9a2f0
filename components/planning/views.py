"""How the planning tab shows a question, its counts and its results, on the page and as JSON: shared by its
panels (components/planning/) and its named endpoints (components/planning/api.py). Everything a person or a
file wrote is escaped."""

from __future__ import annotations

from typing import Any

import gradio as gr

from backend.accounts import auth
from backend.campaigns.instructions import PLANNING as PLANNING_INSTRUCTIONS
from backend.context import AppContext
from backend.errors import CompStudioError
from backend.planning import service, validation
from backend.planning.questions import CHOICE_LETTERS
from components.common import esc
from components.player import empty_value, player_value

NONE_LABEL = "None is plausible"
CHECK_HELP = PLANNING_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)


def question_markdown(view: service.QuestionView, show_key: bool) -> str:
    """The question; ``show_key`` (reviewers) adds the key and each choice's STRIPS verdict, which annotators
    checking the question must not see (they would bias the human check)."""
    q = view.question
    lines = [f"### Question {esc(q.id)}  ·  scene: {esc(q.scene or '?')}  ·  status: {esc(q.status)}"]
    if view.text_only_reason:
        lines.append(f"> **Text only.** {esc(view.text_only_reason)}")
    observed = "; ".join(esc(n) for n in view.observed_names) or "(no action yet)"
    lines += [f"**Observed actions (first 20%):** {observed}", f"**Intent:** {esc(q.intent)}", ""]
    for index, (names, check) in enumerate(zip(view.choice_names, view.checks, strict=True)):
        line = f"**{CHOICE_LETTERS[index]}.** {esc(', '.join(names))}"
        if show_key:
            key = " ✅ key" if index == q.answer_index else ""
            line += f"  \n  _STRIPS: {esc(check)}_{key}"
        lines.append(line)
    return "\n\n".join(lines)


def is_reviewer(ctx: AppContext, name: str | None) -> bool:
    user = auth.get_user(ctx.database, name) if name else None
    return bool(user and not user.disabled and user.has_role("reviewer"))


def clip_update(view: service.QuestionView, username: str | None = None, submit: str | None = None) -> Any:
    """The observed-window player (components/player.py), hidden for a text-only question (the question says
    why): it plays the window's clip, cannot go past its end, and its timeline shows only the observed actions."""
    if view.clip is None:
        return gr.update(value=empty_value(), visible=False)
    value = player_value(
        view.clip, view.actions, user=username, window=view.window, submit=submit, key=view.question.id
    )
    return gr.update(value=value, visible=True)


def counts_markdown(counts: dict[str, int]) -> str:
    if counts["left_for_you"] == 0:
        return f"**Checked by you:** {counts['mine_total']} · nothing left for you to check"
    return f"**Checked by you:** {counts['mine_total']} · **questions left for you:** {counts['left_for_you']}"


def human_markdown(h: dict) -> str:
    return (
        f"**Human accuracy against the key:** per check {h['per_check']['accuracy']:.3f} "
        f"(n={h['per_check']['n']}), per question by majority {h['per_question_majority']['accuracy']:.3f} "
        f"(n={h['per_question_majority']['n']}); 'none is plausible' {h['none_plausible_share']:.1%}."
    )


def results_json(ctx: AppContext, name: str | None, baseline: str | None, circular: bool) -> dict:
    """The leaderboard with human accuracy, and (reviewers; empty for others) the disagreement queue."""
    found = service.results(ctx, name, baseline, circular)
    try:
        found["disagreements"] = validation.disagreement_queue(ctx.database, name)
    except CompStudioError:
        found["disagreements"] = []
    return found


def question_json(view: service.QuestionView, show_key: bool) -> dict:
    """The question as JSON; the key and the STRIPS verdicts only with ``show_key`` (reviewers)."""
    q = view.question
    return {
        "id": q.id,
        "scene": q.scene,
        "status": q.status,
        "intent": q.intent,
        "observed": view.observed_names,
        "choices": view.choice_names,
        "strips_checks": view.checks if show_key else None,
        "clip": view.clip,
        "text_only_reason": view.text_only_reason,
        "answer_index": q.answer_index if show_key else None,
    }
