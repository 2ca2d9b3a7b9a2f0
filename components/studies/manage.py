"""The Studies tab's row for one study: show its link (``studies_link``) and close it after a confirmation that
says what happens to the workers in it (``studies_close_ask``, ``studies_close_confirm``,
``studies_close_cancel``); and the tab's message line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.campaigns import links, studies
from backend.context import AppContext
from components.common import caller, esc
from components.events import Event, bind
from components.feedback import QUIET, Mistake, shown_in
from components.studies.listing import ListPanel, public_address, studies_shown


@dataclass(frozen=True)
class ManagePanel:
    """The chosen study, the app's address for its link, the link, the close confirmation and the message."""

    chosen: gr.Number
    address: gr.Textbox
    show_link: gr.Button
    close: gr.Button
    confirm_box: gr.Group
    effect: gr.Markdown
    confirm: gr.Button
    cancel: gr.Button
    closing: gr.State  # the study the confirmation is about (not whatever the id box says by then)
    link: gr.Textbox
    message: gr.Markdown


def layout() -> ManagePanel:
    with gr.Row():
        chosen = gr.Number(label="Study id", precision=0, value=None, elem_id="study-id")
        address = gr.Textbox(label="The app's public address", elem_id="study-address")
        show_link = gr.Button("Show its link", elem_id="study-show-link")
        close = gr.Button("Close the study…", variant="stop", elem_id="study-close")
    with gr.Group(visible=False, elem_id="study-close-confirm") as confirm_box:
        effect = gr.Markdown(elem_id="study-close-effect")
        with gr.Row():
            confirm = gr.Button("Yes, close it", variant="stop", elem_id="study-close-yes")
            cancel = gr.Button("Cancel", elem_id="study-close-cancel")
    closing = gr.State(None)
    link = gr.Textbox(label="Study link (paste it into the platform)", buttons=["copy"], elem_id="study-link")
    message = gr.Markdown(elem_id="study-message")
    return ManagePanel(chosen, address, show_link, close, confirm_box, effect, confirm, cancel, closing, link, message)


def _study_id(value: Any) -> int:
    if value in (None, ""):
        raise Mistake("Enter the number of the study (the id column of the table).")
    return int(value)


def on_link(ctx: AppContext, p: ManagePanel, study_id: Any, base: str, request: gr.Request) -> dict:
    """The chosen study's link, for the address typed (else the one the browser reached)."""
    base = (base or "").strip() or public_address(request)
    made = links.link_for(ctx.database, caller(ctx, request), _study_id(study_id), base)
    return {p.link: made["link"], p.address: base, p.message: ""}


def on_close_ask(ctx: AppContext, p: ManagePanel, study_id: Any, request: gr.Request) -> dict:
    """What closing the chosen study would do to the workers in it, with Yes and Cancel."""
    preview = studies.closing_preview(ctx.database, caller(ctx, request), _study_id(study_id))
    if preview["status"] != "open":
        return {
            p.confirm_box: gr.Group(visible=False),
            p.closing: None,
            p.message: f"Study {preview['study_id']} is already closed.",
        }
    return {
        p.confirm_box: gr.Group(visible=True),
        p.effect: f"⚠️ **{esc(preview['effect'])}**",
        p.closing: preview["study_id"],
        p.message: "",
    }


def on_close_confirm(
    ctx: AppContext, p: ManagePanel, listing: ListPanel, study_id: int | None, base: str, request: gr.Request
) -> dict:
    """Close the study the confirmation was about; say which code its workers get."""
    if study_id is None:
        raise Mistake("Press “Close the study…” first and read what closing does.")
    me = caller(ctx, request)
    preview = studies.closing_preview(ctx.database, me, int(study_id))
    closed = studies.close_study(ctx.database, me, int(study_id))
    return {
        **studies_shown(ctx, me, listing, (base or "").strip() or public_address(request)),
        p.confirm_box: gr.Group(visible=False),
        p.closing: None,
        p.message: (
            f"Study **{closed.id}** is closed: {preview['completion_on_close']} worker(s) who did at least one "
            f"task get the completion code, {preview['screenout_on_close']} still in the qualification or "
            "without a task get the screen-out code."
        ),
    }


def on_close_cancel(p: ManagePanel) -> dict:
    return {p.confirm_box: gr.Group(visible=False), p.closing: None, p.message: "Nothing was closed."}


def events(ctx: AppContext, p: ManagePanel, listing: ListPanel) -> list[Event]:
    def shown(fn: Callable[..., dict], *front: Any) -> Callable[..., dict]:
        return bind(shown_in(p.message)(fn), ctx, p, *front)

    linked = [p.link, p.address, p.message]
    asked = [p.confirm_box, p.effect, p.closing, p.message]
    closed = [listing.table, listing.none_yet, listing.pool, p.confirm_box, p.closing, p.message]
    cancelled = [p.confirm_box, p.closing, p.message]
    return [
        Event("studies_link", "admin", shown(on_link), p.show_link.click, [p.chosen, p.address], linked, QUIET),
        Event("studies_close_ask", "admin", shown(on_close_ask), p.close.click, [p.chosen], asked, QUIET),
        Event(
            "studies_close_confirm",
            "admin",
            shown(on_close_confirm, listing),
            p.confirm.click,
            [p.closing, p.address],
            closed,
            QUIET,
        ),
        Event("studies_close_cancel", "admin", bind(on_close_cancel, p), p.cancel.click, None, cancelled),
    ]
