"""The video workbench (issue 27): one player for every tab where a person judges a video, built on ``gr.HTML``'s
public hooks (``html_template``, ``css_template``, ``js_on_load``, ``watch``), not on ``gr.Video``'s DOM.

What it draws, from one JSON value (:func:`player_value`):

* the video (``<video>``, the file served by Gradio's file route from the media folder), or a flagged note when
  there is no file, with the timeline still drawn;
* the action timeline: one button per action ("<name> <start>–<end> s") at its place on the time axis, actions
  that overlap in lanes (backend/vilpact/timeline.py), the action(s) on screen highlighted as the video plays,
  click or Enter seeks to an action's start, ``[`` / ``]`` to the previous / next one;
* "Playback speed" (0.5–2×), kept per person in the browser's localStorage under the person's name: it is a
  preference of that person on that device, needs no server round trip on every task, and nothing else reads it
  (docs/decisions.md, "The player keeps the speed in the browser");
* keys: Space/k, j/l and ←/→ (∓5 s), ``,``/``.`` one frame at the file's own rate (read on the server), ``?``;
  none fires while the person types in a text field, except Ctrl+Enter, which presses the tab's submit button;
* "Watched N%": the share of the video covered by ``HTMLMediaElement.played`` (media time, so 2× counts, and a
  seek ahead covers nothing), with the ranges played before a reload (``played``, kept by the server as the
  player sends them: ``keep_played``). The tab sends it with its submit (``watched_share_js``) and the server
  checks it; once it meets the floor, the page's "watch first" warning (``.cs-watch-problem``) goes;
* a window limit (planning's observed window): no play or seek past ``limit`` seconds;
* inspection marks (``marks=True``): per action "not in the video" / "out of order", and "an action is missing
  between the first and the last", read by the tab's submit (``marks_js``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import gradio as gr

from backend.vilpact.timeline import timeline_bars
from backend.vilpact.video import PLAYBACK_SPEEDS as SPEEDS
from backend.vilpact.video import video_facts

FILE_ROUTE = "gradio_api/file="  # Gradio's public file route; the media folder is in launch(allowed_paths=...)

KEYS = (
    ("Space or k", "play / pause"),
    ("j or ←", "back 5 s"),
    ("l or →", "forward 5 s"),
    (", / .", "one frame back / forward"),
    ("[ / ]", "previous / next action"),
    ("Enter on an action", "go to its start"),
    ("?", "show or hide these keys"),
    ("Ctrl+Enter", "submit (also while typing)"),
)


def player_value(
    video: str | Path | None,
    actions: Iterable[tuple[str, float, float]],
    *,
    user: str | None = None,
    window: tuple[float, float] | None = None,
    submit: str | None = None,
    marks: bool = False,
    need_share: float | None = None,
    key: str | None = None,
    played: list[list[float]] | None = None,
    keep_played: dict[str, str] | None = None,
) -> str:
    """The player's value (JSON): the video's URL, frame rate and duration read from the file, the timeline's
    bars, and what the tab asks of the player. ``window``: the clip shows only that window of the source video
    (its actions shifted to the clip's time, nothing after it). ``submit``: the CSS selector of the button
    Ctrl+Enter presses. ``need_share``: the share the watch check needs (shown beside "Watched N%"). ``key``: what
    is judged (a sequence and round): a new key draws a fresh player (played ranges, marks) even when the video
    and actions are the same as the last task's. ``played``: the ranges played before (kept by the server), counted
    with what is played now; ``keep_played``: where the player sends its played ranges as it plays
    (``{"url": "/api/<name>", "item": id}``, posted as ``{"data": [item, ranges]}``)."""
    facts = video_facts(video)
    bars = timeline_bars(actions, window)
    duration = facts.duration
    if window is not None:
        duration = min(duration, window[1] - window[0]) if duration else window[1] - window[0]
    if not duration:
        duration = max((bar["end"] for bar in bars), default=0.0) or None
    return json.dumps(
        {
            "src": f"{FILE_ROUTE}{Path(video).resolve()}" if video else None,
            "fps": facts.fps,
            "duration": duration,
            "limit": (window[1] - window[0]) if window is not None else None,
            "actions": bars,
            "user": user or "",
            "submit": submit,
            "marks": marks,
            "need": need_share,
            "key": key,
            "played": played or [],
            "keep": keep_played,
        }
    )


def empty_value() -> str:
    return json.dumps(None)


def watched_share_js(player_id: str, n_inputs: int) -> str:
    """An event's ``js``: the inputs unchanged, and the player's watched share as the last one."""
    names = ", ".join(f"a{i}" for i in range(n_inputs - 1))
    lead = f"{names}, " if names else ""
    return f"({lead}_share) => [{lead}window.csPlayerShare ? window.csPlayerShare({player_id!r}) : null]"


def marks_js(player_id: str, n_inputs: int) -> str:
    """An event's ``js``: the inputs unchanged, and the player's inspection marks (JSON text) as the last one."""
    names = ", ".join(f"a{i}" for i in range(n_inputs - 1))
    lead = f"{names}, " if names else ""
    return f"({lead}_marks) => [{lead}window.csPlayerMarks ? window.csPlayerMarks({player_id!r}) : null]"


def build_player(elem_id: str, visible: bool = True) -> gr.HTML:
    """The player component (its value from :func:`player_value`)."""
    return gr.HTML(
        value=empty_value(),
        html_template='<div class="csp" data-player="1"></div>',
        css_template=CSS,
        js_on_load=JS.replace("__KEYS__", json.dumps(KEYS)).replace("__SPEEDS__", json.dumps(SPEEDS)),
        elem_id=elem_id,
        elem_classes=["cs-player"],
        visible=visible,
        apply_default_css=True,
        padding=False,
    )


def _asset(name: str) -> str:
    return (Path(__file__).resolve().parent.parent / "assets" / "player" / name).read_text(encoding="utf-8")


JS = _asset("player.js")
CSS = _asset("player.css")
