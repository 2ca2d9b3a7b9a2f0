"""The Models tab (reviewers and admins), one panel module each: the model registry, batch runs with progress and
recent runs (registry.py), the registry editor (form.py), the replicas ``compstudio serve`` started (replicas.py);
their tables' text in text.py, the named JSON endpoints in api.py.

Also :func:`build_ask_model` (ask.py), the "Ask a model" panel other benchmark tabs put under their current item,
and :func:`run_summary_markdown`, a finished run as the Planning tab shows it too. Model events run on the page's
queue ``concurrency_id="models"`` (``Event(..., model=True)``); the limit across pages, routes and commands is the
model pool's (``ctx.pool.slot()``, setting ``model_concurrency``), which every model call takes in ``backend/``.
"""

from __future__ import annotations

import dataclasses

from backend.context import AppContext
from components.common import TabHandle
from components.events import bind, wire
from components.models import form, registry, replicas
from components.models.ask import build_ask_model
from components.models.text import run_summary_markdown
from components.opening import tab_frame

__all__ = ["build_ask_model", "build_models_tab", "run_summary_markdown"]


def build_models_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("models", visible=False) as tab:
        models = registry.layout(tab)
        editor = form.layout(ctx)
        served = replicas.layout(tab)  # compstudio serve's replicas and their state
    models = dataclasses.replace(models, start_from=editor.start_from)  # a save refreshes the editor's picker too
    wire(ctx, [*replicas.events(ctx, served), *form.events(ctx, editor, models), *registry.events(ctx, models)])
    return TabHandle(tab, on_load=(bind(registry.on_load, ctx, models), models.view), filled_on_select=True)
