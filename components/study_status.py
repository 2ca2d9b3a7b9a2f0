"""What the task tabs say to a crowd-study worker: their progress line and, once done, the completion code."""

from __future__ import annotations

import html
from typing import Any

from components.common import esc


def study_line(study: dict[str, Any]) -> str:
    """A study worker's progress line, e.g. "**Study Pilot:** 1 of 3 tasks done"."""
    return f"**Study {esc(study['name'])}:** {study['done']} of {study['quota']} tasks done"


def _code(label: str, code: str | None, url: str | None) -> list[str]:
    """The code as big as on the stand-alone study page (one click selects it), with the way back."""
    lines = []
    if code:
        lines.append(f'{label}<br><span id="study-completion-code">{esc(code)}</span>')
    if url:
        lines.append(f'<a id="study-return-link" href="{html.escape(url)}">Return to the platform</a>')
    return lines


def study_end(study: dict[str, Any], tab: str) -> str:
    """What a study worker's task tab ``tab`` shows when no task is handed out: the code they earned and the return
    link once their part ended, else why there is none and where to wait for one."""
    if study.get("full"):
        head = "### This study is full: every place was taken before you started. This is not your doing."
        return "\n\n".join(
            [
                head,
                *_code(
                    "Your screen-out code (it pays you for your time):",
                    study.get("screenout_code"),
                    study.get("screenout_url"),
                ),
            ]
        )
    if study.get("closed_early"):
        head = "### This study was closed before you did a task."
        return "\n\n".join(
            [
                head,
                *_code(
                    "Your screen-out code (it pays you for your time):",
                    study.get("screenout_code"),
                    study.get("screenout_url"),
                ),
            ]
        )
    if study["status"] != "finished":
        if study["work_tab"] != tab:
            return f"### No task here for your study. Its tasks are on the **{esc(study['work_tab'])}** tab."
        return (
            "### No task is free for you right now.\n\n"
            f'<a id="study-wait-link" href="/study/{int(study["study_id"])}/here?wait=1">Wait for a task</a>: that '
            "page checks again by itself and says how long it will wait; if none is free by then, it gives you your "
            "code for the tasks you did."
        )
    head = "### You have finished this study. Thank you!"
    if study.get("end_reason", "") and str(study["end_reason"]).startswith("no task free"):
        head = f"### No task came free in time. You are paid for the {study['done']} task(s) you did. Thank you!"
    return "\n\n".join([head, *_code("Your completion code:", study["completion_code"], study["return_url"])])
