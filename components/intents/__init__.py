"""The intent-annotation tab (annotators): one panel, the work on one sequence (components/intents/work.py), and
the named API endpoints intent_next / intent_submit / intent_skip / intent_viewed / intent_draft / intent_played
that scripts, the load tests and the page's own script use (components/intents/api.py; also served on the lean
``POST /api/<name>`` routes, web/scripts.py)."""

from __future__ import annotations

from backend.context import AppContext
from components.common import TabHandle
from components.events import bind
from components.intents import api
from components.intents.view import INSTRUCTIONS
from components.intents.work import build_work_panel, on_load
from components.opening import tab_frame

__all__ = ["INSTRUCTIONS", "api", "build_intents_tab"]


def build_intents_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("intents") as tab:
        work = build_work_panel(ctx)
    return TabHandle(tab=tab, on_load=(bind(on_load, ctx, work), work.outputs))
