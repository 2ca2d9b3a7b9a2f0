"""What the intent-annotation panel shows for a task payload (``backend.intents.service``): the progress line,
the task's header, the player's value, the problems beside the fields, and :func:`render`, the panel's outputs
by component, with the panel's handles (:class:`IntentsPanel`). Pure functions of the payload: no events here
(components/intents/work.py lays the panel out and wires them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.campaigns.instructions import INTENTS as INTENT_INSTRUCTIONS
from backend.errors import CompStudioError, WatchTooShort
from components.common import esc
from components.player import empty_value, player_value
from components.study_status import study_end, study_line


@dataclass(frozen=True)
class IntentsPanel:
    progress: gr.Markdown
    current: gr.Textbox  # held by the page (not gr.State), so a submit after a server restart still knows it
    start: gr.Button
    player: gr.Column
    video: gr.HTML  # the player (components/player.py)
    details: gr.Markdown
    form: gr.Column
    concrete: gr.Textbox
    high_level: gr.Textbox
    message: gr.Markdown
    submit: gr.Button
    draft_status: gr.Markdown
    last_saved: gr.Markdown
    typed_at: gr.Number
    watched: gr.Number
    skip_box: gr.Accordion
    reason: gr.Textbox
    skip_message: gr.Markdown
    skip: gr.Button
    zone: gr.Textbox  # the browser's time zone (the drafts' js sets it): "Draft saved at" on the person's clock

    @property
    def outputs(self) -> list[Any]:
        return [
            self.current,
            self.progress,
            self.details,
            self.player,
            self.video,
            self.form,
            self.skip_box,
            self.concrete,
            self.high_level,
            self.submit,
            self.message,
            self.draft_status,
            self.last_saved,
            self.start,
        ]


INSTRUCTIONS = INTENT_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)
PLAYER_ID = "intent-video"
SUBMIT_LABEL = "Submit"  # "(Ctrl+Enter)" is added by CSS where there is a keyboard (web/look.py's CSS)


def progress_line(progress: dict[str, int]) -> str:
    line = (
        f"**Mine today:** {progress['mine_today']} · **mine in total:** {progress['mine_total']} · "
        f"**sequences left for you:** {progress['left_for_me']}"
    )
    others = progress["left_in_pool"] - progress["left_for_me"]
    if others > 0:
        line += f" · {others} more still open for other annotators"
    return line


def problems_markdown(exc: CompStudioError) -> str:
    if isinstance(exc, WatchTooShort):  # the player hides it once the watching meets the floor (player.js)
        return "\n\n".join(f'<span class="cs-watch-problem">⚠️ {esc(problem)}</span>' for problem in exc.problems)
    return problem_lines(getattr(exc, "problems", None) or [str(exc)])


def problem_lines(problems: list[str]) -> str:
    return "\n".join(f"⚠️ {esc(problem)}" + "  " for problem in problems)


def task_markdown(task: dict[str, Any]) -> str:
    lines = [
        f"### Sequence {esc(task['sequence_id'])} · round {task['round']} · {esc(task['scene'] or 'scene unknown')}",
        # read by the page's script to flush the draft as the page closes (app.py, APP_JS)
        f'<span id="intent-sequence">{esc(task["sequence_id"])}</span>',
    ]  # hidden by CSS
    if task["source"] == "demo":
        lines.append("> **Demo content**: a generated video, not real data.")
    if task["video_missing"]:
        lines.append("> ⚠️ **No video file for this sequence**: judge from the action timeline only.")
    if task.get("guidance"):
        lines.append(f"> **Reviewer guidance from the previous round:** {esc(task['guidance'])}")
    # the actions are the player's timeline, each a button with its name and times (components/player.py)
    return "\n".join(lines)


def task_player(task: dict[str, Any], username: str | None, need_share: float | None) -> str:
    """The player's value for a task: its video, its actions on the timeline, Ctrl+Enter on Submit."""
    actions = [(a["name"], a["start"], a["end"]) for a in task["actions"]]
    return player_value(
        task["video"],
        actions,
        user=username,
        submit="#intent-submit",
        need_share=need_share,
        key=f"{task['sequence_id']}/{task['round']}",
        played=task.get("played") or [],
        keep_played={"url": "/api/intent_played", "item": task["sequence_id"]},
    )


def render(
    p: IntentsPanel, payload: dict[str, Any], username: str | None = None, need_share: float | None = None
) -> dict:
    """The panel's outputs, by component, for a ``next_intent_task`` / ``submit_intents`` payload; ``need_share``:
    the watch check's share, shown by the player (None: no check)."""
    task, study = payload["task"], payload.get("study")
    base = {
        p.progress: study_line(study) if study else progress_line(payload["progress"]),
        p.draft_status: "",
        p.message: "",
        p.start: gr.update(visible=False),
    }
    if payload.get("stored"):
        stored = payload["stored"]
        base[p.last_saved] = (
            f"**Saved for {esc(stored['sequence_id'])}:** concrete “{esc(stored['concrete_intent'])}” · "
            f"high-level “{esc(stored['high_level_intent'])}”"
        )
    if task is None:  # nothing left: say so, and show no empty player, form or Skip
        return {**base, **_nothing_left(p, payload)}
    draft = task["draft"] or {}
    return {
        **base,
        p.current: task["sequence_id"],
        p.details: task_markdown(task),
        p.player: gr.update(visible=True),
        p.form: gr.update(visible=True),
        p.skip_box: gr.update(visible=True),
        p.video: task_player(task, username, need_share if task["must_view"] else None),
        p.concrete: draft.get("concrete_intent", ""),
        p.high_level: draft.get("high_level_intent", ""),
        # always usable: a short watch is refused by the server with "Watched N%" beside the fields
        p.submit: gr.update(interactive=True, value=SUBMIT_LABEL),
    }


def _nothing_left(p: IntentsPanel, payload: dict[str, Any]) -> dict:
    study = payload.get("study")
    if study:
        details = study_end(study, "intents")
    elif payload.get("paused"):
        details = f"### {esc(payload['paused'])}"
    else:
        details = "### Nothing left for you to annotate. Thank you!"
    return {
        p.current: None,
        p.video: empty_value(),
        p.concrete: "",
        p.high_level: "",
        p.details: details,
        p.player: gr.update(visible=False),
        p.form: gr.update(visible=False),
        p.skip_box: gr.update(visible=False),
        p.submit: gr.update(interactive=False),
    }
