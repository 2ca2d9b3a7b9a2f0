"""The Studies tab (admins), one panel module each: the list of crowd studies with their counts and links
(listing.py), the form that creates one (create.py), and the row that shows a study's link and closes it after a
confirmation (manage.py). The worker-quality panels that other tabs hold live here too: Review's "Worker quality"
(flags.py), Admin's crowd workers (workers.py) and invitation links (invitations.py). Named endpoints for scripts:
api.py (study_*) and quality_api.py (worker_*, quality_flags, gold_*, invitation_*). Handlers only call
backend/campaigns and backend/accounts/invitations, which check the caller's role every time."""

from __future__ import annotations

from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.errors import PermissionDenied
from components.common import TabHandle, caller
from components.events import Event, bind, wire
from components.opening import tab_frame
from components.studies import create, listing, manage
from components.studies.listing import ListPanel, public_address, studies_shown
from components.studies.manage import ManagePanel


def build_studies_tab(ctx: AppContext) -> TabHandle:
    with tab_frame("studies", visible=False) as tab:
        shown = listing.layout()
        form = create.layout()
        row = manage.layout()
    wire(ctx, [*create.events(ctx, form, shown, row), *manage.events(ctx, row, shown), *events(ctx, tab, shown, row)])
    return TabHandle(tab=tab, on_load=(bind(on_open, ctx, shown, row), opened(shown, row)), filled_on_select=True)


def on_open(ctx: AppContext, shown: ListPanel, row: ManagePanel, request: gr.Request) -> dict:
    """The studies and their counts as they are now (page load and each visit of the tab)."""
    try:
        base = public_address(request)
        return {**studies_shown(ctx, caller(ctx, request), shown, base), row.address: base}
    except PermissionDenied:  # not an admin: the tab is hidden
        return {shown.table: gr.update()}


def opened(shown: ListPanel, row: ManagePanel) -> list[Any]:
    """What opening the tab fills (its part of the page load too)."""
    return [shown.table, shown.none_yet, row.address, shown.pool]


def events(ctx: AppContext, tab: gr.Tab, shown: ListPanel, row: ManagePanel) -> list[Event]:
    """The tab's own event: opening it fills the list."""
    fill = bind(on_open, ctx, shown, row)
    return [Event("studies_open", "admin", fill, tab.select, None, opened(shown, row), {"show_progress": "hidden"})]
