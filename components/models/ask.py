"""The "Ask a model" panel other benchmark tabs put under their current item: one live answer from a registered
model, on the page's shared model queue (:func:`backend.inference.service.ask_model` checks the caller's role)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference import service
from backend.inference.benchmarks import EvalItem
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import Mistake, shown_in


def format_answer(answer) -> str:
    """Markdown for an "Ask a model" result (model text escaped)."""
    verdict = {1.0: "correct", 0.0: "wrong"}.get(answer.score, "n/a" if answer.score is None else f"{answer.score:.2f}")
    latency = f"{answer.latency_ms:.0f} ms" if answer.latency_ms is not None else "n/a"
    lines = [
        f"**Parsed answer:** {esc(answer.parsed)} · **expected:** {esc(answer.correct_answer)} · **{verdict}** · "
        f"latency {latency}{' (from the store)' if answer.from_store else ''}",
        f"**Raw output:**\n\n<pre>{esc(answer.raw_output) if answer.raw_output is not None else ''}</pre>",
    ]
    if answer.error:
        lines.append(f"**Error:** {esc(answer.error)}")
    lines.append(f"<details><summary>Prompt</summary><pre>{esc(answer.prompt)}</pre></details>")
    return "\n\n".join(lines)


def on_ask(
    ctx: AppContext,
    benchmark: str,
    item_of: Callable[[Any], EvalItem],
    shown: gr.Markdown,
    name: str,
    value: Any,
    request: gr.Request,
) -> dict[Any, Any]:
    """The chosen model's answer to the item on screen (``value``: what ``item_of`` reads the item from)."""
    if not name:
        raise Mistake("Choose a model.")
    return {shown: format_answer(service.ask_model(ctx, caller(ctx, request), benchmark, name, item_of(value)))}


def build_ask_model(
    ctx: AppContext,
    benchmark: str,
    item_of: Callable[[Any], EvalItem],
    item_input: Any,
    api_name: str,
    elem_id: str | None = None,
    least: str = "reviewer",
) -> gr.Dropdown:
    """An "Ask a model" panel for the current item of a benchmark tab.

    ``item_of(value_of_item_input)`` returns the :class:`EvalItem` on screen (e.g. from a ``gr.State`` or
    hidden textbox holding the item id). The call runs on the shared
    ``models`` queue; the backend checks the caller's role. Its event is ``api_name``, callable by ``least`` and
    above. Returns the model dropdown (fill its choices on load with the registry's names).
    """
    with gr.Row():
        chosen = gr.Dropdown([], label="Model", scale=3, allow_custom_value=True, elem_id=elem_id)
        ask = gr.Button("Ask a model", scale=1)
    shown = gr.Markdown()
    # a mistake (no model, an unknown one) is said where the answer would be
    handler = shown_in(shown)(bind(on_ask, ctx, benchmark, item_of, shown))
    wire(ctx, [Event(api_name, least, handler, ask.click, [chosen, item_input], [shown], model=True)])
    return chosen
