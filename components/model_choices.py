"""The one model registry, read live: a tab's model pickers are refilled from it whenever the tab opens, so a
model saved in the Models tab is offered at once in Planning, VQA, In-context examples and Results (issue 24,
issue 44 §7).

Its handler (one event per tab, named by ``api_name``, each an ``annotator`` row of the access table) answers reviewers only; for
anyone else it changes nothing (the pickers sit in reviewer-only panels)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from backend.accounts import auth
from backend.context import AppContext
from backend.inference.registry import model_names
from components.access import listen
from components.common import caller


def offer_models_on_open(
    ctx: AppContext,
    tab: gr.Tab,
    pickers: Sequence[gr.Dropdown],
    api_name: str,
    names_of: Callable[[AppContext, str], list[str]] | None = None,
) -> None:
    """Refill ``pickers`` with the registry's model names when ``tab`` is selected (``api_name``: stable, unique);
    ``names_of(ctx, username)``: the names a tab offers, when not all (in-context: the models that write text)."""

    def on_open(request: gr.Request) -> dict[Any, Any]:
        user = auth.get_user(ctx.database, caller(ctx, request) or "")
        if user is None or user.disabled or not user.has_role("reviewer"):
            return {picker: gr.update() for picker in pickers}
        names = names_of(ctx, user.username) if names_of is not None else model_names(ctx)
        return {picker: gr.update(choices=names) for picker in pickers}

    listen(
        ctx,
        tab.select,
        on_open,
        None,
        list(pickers),
        api_name=api_name,
        api_visibility="private",
        show_progress="hidden",
        queue=False,
    )
