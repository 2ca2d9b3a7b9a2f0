"""Which page a person gets: one ``gr.Blocks`` per audience, built from the same tab modules (components.TABS).

The audiences are the identities of the access table that sign in (annotator, author, reviewer, admin: each
page holds the tabs that identity may open) and one page per crowd-study work tab (``worker-intents``,
``worker-planning``, ``worker-vqa``: a study worker sees only their study's tab). Each is mounted at
``/<audience>/`` (web/__init__.py) and admits only its audience (web/gate.py); ``/`` sends a signed-in person
to their audience's page, so a role change gives the new page on the next visit.

Each page has exactly one load event, which says who is signed in and runs each of its tabs' own
``TabHandle.on_load``, as one reply. What a page holds decides what is sent, not what is allowed: every event is
still checked by the access table (components/access.py) and the services' ``require_role``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.accounts import access, auth
from backend.campaigns.studies import WORK_TAB
from backend.campaigns.workers import study_view
from backend.context import AppContext
from components import TABS, TabSpec
from components.common import Caller, TabHandle, caller, esc
from components.events import Event, wire
from web.access_table import check_events
from web.lazy_tabs import build_lazy_tab, build_tab

log = logging.getLogger("compstudio.pages")

# the tab each identity lands on (the tab it works in)
LANDING_TAB = {"annotator": "intents", "author": "intents", "reviewer": "review", "admin": "admin"}
#: the identities that get a page of their own ("anyone" is sent to /login)
PEOPLE = ("annotator", "author", "reviewer", "admin")


@dataclass(frozen=True)
class Audience:
    """One audience: its name (and mount ``/<name>/``), the identity its rights follow, its tabs, its landing tab."""

    name: str
    identity: str
    tabs: tuple[TabSpec, ...]
    landing: str

    @property
    def path(self) -> str:
        return f"/{self.name}"


def all_audiences() -> dict[str, Audience]:
    """Every audience by name."""
    found = {
        identity: Audience(
            identity, identity, tuple(t for t in TABS if access.allows(t.min_role, identity)), LANDING_TAB[identity]
        )
        for identity in PEOPLE
    }
    for tab in WORK_TAB.values():
        found[f"worker-{tab}"] = Audience(f"worker-{tab}", "annotator", tuple(t for t in TABS if t.tab_id == tab), tab)
    return found


def caller_of(ctx: AppContext, username: str | None) -> Caller:
    """Who ``username`` is, in full: their identity, and the audience they belong to: their study's work tab for a
    crowd-study worker, else their identity; "anyone" when not signed in (or disabled). The gate asks once per
    request (web/gate.py) and keeps the answer in the request's scope."""
    identity = access.identity(ctx.database, username)
    audience = identity
    if identity in {"annotator", "author"} and username:
        study = study_view(ctx.database, username)
        if study:
            audience = f"worker-{study['work_tab']}"
    return Caller(username if identity != "anyone" else None, identity, audience)


@dataclass(frozen=True)
class Header:
    """The page's header: who is signed in, and Log out."""

    who: gr.Markdown
    logout: gr.Button


def build_audience(ctx: AppContext, audience: Audience, *, lazy: bool | None = None) -> gr.Blocks:
    """The Blocks of one audience: the header, its tabs (their inner tabs shown as its identity may open them),
    and its load event; every event guarded by the access table. ``lazy`` (default: the ``lazy_tabs`` setting):
    the tabs but the landing one are built on the person's first visit (web/lazy_tabs.py); ``False`` builds the
    whole page, every event in it (the access table is read from such pages)."""
    lazy = ctx.settings.lazy_tabs if lazy is None else lazy
    with gr.Blocks(title="CompStudio") as blocks:
        with gr.Row(elem_id="app-header"):
            gr.Markdown("# CompStudio · compositional generalization benchmarks", elem_id="app-title")
            who = gr.Markdown(elem_id="whoami")
            # signs out in this tab; /logout is web/signin.py's (both sign-in modes)
            logout = gr.Button("Log out", elem_id="logout", size="sm", variant="secondary", scale=0, min_width=100)
            logout.click(None, js="() => { window.location.assign('/logout'); }")
        # the headings inside the tabs start at h3 (### ...): a heading for screen readers keeps the levels one by one
        # under the page's h1 (axe's heading-order, issue 44)
        gr.Markdown("## Your tabs", elem_classes=["sr-only"], elem_id="tabs-heading")
        handles: list[TabHandle] = []
        with gr.Tabs(selected=audience.landing):
            for spec in audience.tabs:
                if lazy and spec.tab_id != audience.landing:  # built on the first visit (web/lazy_tabs.py)
                    build_lazy_tab(ctx, spec, audience.identity, blocks.load, tab_load)
                    continue
                handle = build_tab(ctx, spec)
                handle.tab.visible = True  # the tabs start hidden; this page holds only tabs its audience opens
                for inner, least in handle.inner_tabs:
                    inner.visible = access.allows(least, audience.identity)
                handles.append(handle)
        header = Header(who=who, logout=logout)
        fills = [c for h in handles if h.on_load for c in h.on_load[1]]
        outputs = [header.who, *dict.fromkeys(fills)]
        on_load = page_load(ctx, audience, header, handles, outputs)
        # the gate admits only this audience; each tab's part runs only for a role that sees the tab
        wire(ctx, [Event(page_event(audience.name), "annotator", on_load, blocks.load, None, outputs)])
    check_events(blocks)  # every event wired through the access table's guard (components/access.py)
    blocks.queue(default_concurrency_limit=4)
    return blocks


def page_event(audience: str) -> str:
    """The api_name (and access-table row) of an audience page's load event.

    >>> page_event("worker-intents")
    'page_load_worker_intents'
    """
    return "page_load_" + audience.replace("-", "_")


def tab_load(handle: TabHandle, request: gr.Request) -> dict:
    """One tab's part of the page load, as a dict of updates; a tab that fails to load is left as built
    (logged) so that the rest of the page still comes up."""
    assert handle.on_load is not None
    fn, outputs = handle.on_load
    try:
        result = fn(request)
    except Exception:  # noqa: BLE001 - one tab's failure must not blank the whole page
        log.exception("loading the %s tab failed", handle.tab.label)
        return {}
    if isinstance(result, dict):
        return result
    values = result if isinstance(result, (list, tuple)) else [result]
    return dict(zip(outputs, values, strict=True))


def page_load(
    ctx: AppContext, audience: Audience, header: Header, handles: list[TabHandle], outputs: list[Any]
) -> Callable[[gr.Request], dict]:
    """The load event of ``audience``'s page: who is signed in, then each of its tabs' own load, as one dict
    (one round trip)."""
    wanted = set(map(id, outputs))

    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        user = auth.get_user(ctx.database, name) if name else None
        if user is None or user.disabled:  # the gate admits nobody else; kept for a session ended meanwhile
            return {header.who: 'You are signed out: <a href="/login">sign in again</a>.'}
        text = f"Signed in as **{esc(user.username)}** ({user.role})"
        if user.has_role("admin") and ctx.notices:
            text += "".join(f"\n\n> ⚠️ {esc(notice)}" for notice in ctx.notices)
        study = study_view(ctx.database, user.username)
        if study:  # progress and, once done, the completion code are on the study page too
            text += f' · <a href="{study["page"]}" id="study-page-link">your study page</a>'
        updates: dict = {header.who: text}
        for handle in handles:
            opened = handle.filled_on_select and handle.tab.id == audience.landing  # its select event fills it
            if handle.on_load and not opened:
                updates.update(tab_load(handle, request))
        return {block: value for block, value in updates.items() if id(block) in wanted}

    return on_load
