"""What each person's page holds, and its load event (issue 17; served by components/role_pages.py).

One page per identity of the access table (anyone, annotator, author, reviewer, admin: the tabs that identity may
open) and one per crowd-study work tab (``worker-intents``, ``worker-planning``, ``worker-vqa``: a study worker
sees only their study's tab). Each page has exactly one load event, which says who is signed in, changes what
differs from how the page starts, and runs each of its tabs' own ``TabHandle.on_load``, as one reply.
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
from components.access import listen
from components.common import TabHandle, caller, esc
from components.role_pages import Page, inside

log = logging.getLogger("compstudio.pages")

# the tab each identity lands on (the tab it works in)
LANDING_TAB = {"annotator": "intents", "author": "intents", "reviewer": "review", "admin": "admin"}


@dataclass(frozen=True)
class Header:
    """The page's header: who is signed in, Log out, and the tabs (whose selection the load may change)."""

    who: gr.Markdown
    logout: gr.Button
    tabs: gr.Tabs


def page_name_of(ctx: AppContext, username: str | None) -> str:
    """The page ``username`` gets: their study's work tab for a crowd-study worker, else their identity."""
    identity = access.identity(ctx.database, username)
    if identity in {"annotator", "author"} and username:
        study = study_view(ctx.database, username)
        if study:
            return f"worker-{study['work_tab']}"
    return identity


def page_specs(handles: list[TabHandle]) -> dict[str, tuple[str, list[TabHandle], str]]:
    """Each page's name -> (the identity its rights follow, its tabs, the tab it lands on)."""
    specs = {
        identity: (identity, [h for h in handles if access.allows(h.min_role, identity)], LANDING_TAB.get(identity, ""))
        for identity in access.IDENTITIES
    }
    for tab in WORK_TAB.values():
        specs[f"worker-{tab}"] = ("annotator", [h for h in handles if h.tab.id == tab], tab)
    return specs


def plan_pages(ctx: AppContext, demo: gr.Blocks, header: Header, handles: list[TabHandle]) -> dict[str, Page]:
    """Make each page's load event (inside ``demo``'s context) and return the pages (``app.build_demo`` adds the
    endpoints once the Blocks are built)."""
    oauth = ctx.settings.effective_auth_mode == "oauth"
    top = {h.tab._id for h in handles}
    least = {h.tab._id: h.min_role for h in handles} | {t._id: r for h in handles for t, r in h.inner_tabs}
    pages = {}
    for name, (identity, page_handles, landing) in page_specs(handles).items():
        kept = {h.tab._id for h in page_handles}
        hidden = frozenset(
            block for block, role in least.items() if not access.allows(role, identity) or (block in top - kept)
        )
        fills = [c for h in page_handles if h.on_load for c in h.on_load[1] if not inside(c, hidden)]
        outputs = [header.who, header.logout, header.tabs, *(h.tab for h in page_handles), *dict.fromkeys(fills)]
        on_load = page_load(ctx, name, landing, header, page_handles, outputs)
        load = listen(ctx, demo.load, on_load, None, outputs, api_visibility="private", api_name=page_event(name))["id"]
        props = page_props(landing, page_handles, identity, header, oauth) if page_handles else {}
        pages[name] = Page(identity=identity, hidden=hidden, load=load, props=props)
    return pages


def page_event(page: str) -> str:
    """The api_name (and access-table row) of a page's load event.

    >>> page_event("worker-intents")
    'page_load_worker_intents'
    """
    return "page_load_" + page.replace("-", "_")


def page_props(landing: str, handles: list[TabHandle], identity: str, header: Header, oauth: bool) -> dict[int, dict]:
    """What a page starts with: its tabs shown, its landing tab selected, Log out shown (password sign-in)."""
    return {
        header.tabs._id: {"selected": landing},
        header.logout._id: {"visible": not oauth},
        **{h.tab._id: {"visible": True} for h in handles},
        **{
            tab._id: {"visible": True} for h in handles for tab, least in h.inner_tabs if access.allows(least, identity)
        },
    }


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
    ctx: AppContext, page: str, page_landing: str, header: Header, handles: list[TabHandle], outputs: list[Any]
) -> Callable[[gr.Request], dict]:
    """The load event of page ``page``: who is signed in, what differs from how the page starts, then each of
    its tabs' own load, as one dict (one round trip)."""
    oauth = ctx.settings.effective_auth_mode == "oauth"
    wanted = set(map(id, outputs))

    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        user = auth.get_user(ctx.database, name) if name else None
        if user is None or user.disabled:
            text = "Not signed in." + (" Use **Sign in with Hugging Face**." if oauth else "")
            hide = {h.tab: gr.Tab(visible=False) for h in handles}
            return {header.who: text, header.logout: gr.update(visible=False), **hide}
        text = f"Signed in as **{esc(user.username)}** ({user.role})"
        if user.has_role("admin") and ctx.notices:
            text += "".join(f"\n\n> ⚠️ {esc(notice)}" for notice in ctx.notices)
        if page_name_of(ctx, user.username) != page:  # changed since the page was sent
            text += " · your role has changed: **reload the page** to see your tabs"
        # each role lands on the tab it works in (a crowd-study worker: their study's); nothing is leased
        # until an annotator is on the Annotate tab
        study = study_view(ctx.database, user.username)
        if study:  # progress and, once done, the completion code are on the study page too
            text += f' · <a href="{study["page"]}" id="study-page-link">your study page</a>'
        landing = study["work_tab"] if study else LANDING_TAB.get(user.role, "")
        if landing not in {h.tab.id for h in handles if user.has_role(h.min_role)}:
            landing = page_landing
        # the page starts with its tabs shown and its landing tab selected (page_props): only what differs for
        # this person is changed
        updates: dict = {header.who: text}
        updates.update({h.tab: gr.Tab(visible=False) for h in handles if not user.has_role(h.min_role)})
        if landing != page_landing:
            updates[header.tabs] = gr.Tabs(selected=landing)
        for handle in handles:  # a tab the person cannot see is not filled
            opened = handle.filled_on_select and handle.tab.id == landing  # its select event fills it
            if handle.on_load and user.has_role(handle.min_role) and not opened:
                updates.update(tab_load(handle, request))
        return {block: value for block, value in updates.items() if id(block) in wanted}

    return on_load
