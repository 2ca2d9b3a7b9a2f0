"""The one model registry, read live: a tab's model pickers are refilled from it whenever the tab opens, so a
model saved in the Models tab is offered at once in Planning, VQA, In-context examples and Results (issue 24,
issue 44 §7).

One event per tab (``<tab>_models_open``), declared here as an :class:`~components.events.Event` callable by any
signed-in account (``annotator``: the tabs open for annotators too); its handler answers reviewers only, and for
anyone else changes nothing (the pickers sit in reviewer-only panels). A module beside the tabs, not inside the
Models tab's package: Planning, VQA, In-context examples and Results call :func:`offer_models_on_open`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from backend.accounts import auth
from backend.context import AppContext
from backend.inference.registry import model_names
from components.common import caller
from components.events import Event, bind, wire

#: who may call a ``<tab>_models_open`` event (the handler answers reviewers only)
LEAST = "annotator"


def on_open(
    ctx: AppContext,
    pickers: Sequence[gr.Dropdown],
    names_of: Callable[[AppContext, str], list[str]] | None,
    request: gr.Request,
) -> dict[Any, Any]:
    """The registry's names in every picker, for reviewers; no change for anyone else."""
    user = auth.get_user(ctx.database, caller(ctx, request) or "")
    if user is None or user.disabled or not user.has_role("reviewer"):
        return {picker: gr.update() for picker in pickers}
    names = names_of(ctx, user.username) if names_of is not None else model_names(ctx)
    return {picker: gr.update(choices=names) for picker in pickers}


def models_open_event(
    ctx: AppContext,
    tab: gr.Tab,
    pickers: Sequence[gr.Dropdown],
    api_name: str,
    names_of: Callable[[AppContext, str], list[str]] | None = None,
) -> Event:
    """The event that refills ``pickers`` when ``tab`` is selected (for a tab that wires its own events)."""
    handler = bind(on_open, ctx, list(pickers), names_of)
    options = {"show_progress": "hidden", "queue": False}
    return Event(api_name, LEAST, handler, tab.select, None, list(pickers), options)


def offer_models_on_open(
    ctx: AppContext,
    tab: gr.Tab,
    pickers: Sequence[gr.Dropdown],
    api_name: str,
    names_of: Callable[[AppContext, str], list[str]] | None = None,
) -> None:
    """Refill ``pickers`` with the registry's model names when ``tab`` is selected (``api_name``: stable, unique);
    ``names_of(ctx, username)``: the names a tab offers, when not all (in-context: the models that write text)."""
    wire(ctx, [models_open_event(ctx, tab, pickers, api_name, names_of)])
