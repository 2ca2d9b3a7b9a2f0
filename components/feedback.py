"""Mistakes a person made (no choice, two ticks on a single-choice item, a task that ran out): one message
they see at once, and their work left as it is.

Raising ``gr.Error`` marks every output of the event with an "Error" badge that covers it and takes its
clicks (docs/decisions.md, "Errors a person caused"). Handlers whose outputs include what the person is
choosing or watching call ``refusal`` instead: a toast (``gr.Warning``), a message next to the field, one
line in the server log, and no change to the other outputs.
"""

from __future__ import annotations

import logging

import gradio as gr

from components.common import esc

log = logging.getLogger("compstudio.ui")


def refusal(message: str, who: str | None = None) -> str:
    """Toast ``message``, log one line, and return it as Markdown for a message component by the field."""
    text = str(message)
    text = text[:1].upper() + text[1:]
    log.warning("refused %s: %s", who or "(not signed in)", text)
    gr.Warning(text)
    return f"⚠️ **{esc(text)}**"
