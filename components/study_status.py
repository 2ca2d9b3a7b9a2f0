"""What the task tabs say to a crowd-study worker: their progress line and, once done, the completion code."""

from __future__ import annotations

import html
from typing import Any

from components.common import esc


def study_line(study: dict[str, Any]) -> str:
    """A study worker's progress line, e.g. "**Study Pilot:** 1 of 3 tasks done"."""
    return f"**Study {esc(study['name'])}:** {study['done']} of {study['quota']} tasks done"


def study_end(study: dict[str, Any], tab: str) -> str:
    """What a study worker's task tab ``tab`` shows when no task is handed out: the completion code and the
    return link once finished, else why there is none."""
    if study.get("full"):
        lines = ["### This study is full: every place was taken before you started. This is not your doing."]
        if study.get("screenout_code"):
            lines.append(
                f'Your screen-out code (it pays you for your time): <strong id="study-completion-code">'
                f"{esc(study['screenout_code'])}</strong>"
            )
        if study.get("screenout_url"):
            lines.append(
                f'<a id="study-return-link" href="{html.escape(study["screenout_url"])}">Return to the platform</a>'
            )
        return "\n\n".join(lines)
    if study["status"] != "finished":
        if study["work_tab"] != tab:
            return f"### No task here for your study. Its tasks are on the **{esc(study['work_tab'])}** tab."
        return "### No task is free for you right now. Please try again in a few minutes."
    lines = ["### You have finished this study. Thank you!"]
    if study["completion_code"]:
        lines.append(
            f'Your completion code: <strong id="study-completion-code">{esc(study["completion_code"])}</strong>'
        )
    if study["return_url"]:
        lines.append(f'<a id="study-return-link" href="{html.escape(study["return_url"])}">Return to the platform</a>')
    return "\n\n".join(lines)
