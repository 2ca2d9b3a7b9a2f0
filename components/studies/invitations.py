"""Admin's invitation links (issue 16 §4): a one-time sign-up link with a role. Built inside the Admin tab
(components/admin.py); the handler only calls backend/accounts/invitations, which checks the admin role."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import gradio as gr

from backend.accounts import invitations
from backend.accounts.auth import ROLES
from backend.context import AppContext
from components.common import caller, esc
from components.events import Event, bind, wire
from components.feedback import shown_in


@dataclass(frozen=True)
class InvitationsPanel:
    role: gr.Dropdown
    create: gr.Button
    link: gr.Textbox
    message: gr.Markdown


def layout() -> InvitationsPanel:
    gr.Markdown("A link signs up **one** person with the role chosen here; they pick their own user name and password.")
    with gr.Row():
        role = gr.Dropdown(list(ROLES), value="annotator", label="Role", elem_id="invite-role")
        create = gr.Button("Create invitation link", elem_id="invite-create")
    link = gr.Textbox(label="Invitation link (shown once: copy it now)", interactive=False, elem_id="invite-link")
    message = gr.Markdown(elem_id="invite-message")
    return InvitationsPanel(role=role, create=create, link=link, message=message)


def app_url(request: gr.Request) -> str:
    """The app's address as the browser sees it (for invitation links): the scheme and host of the page that made
    the call. Not its path: that is the admin's own mount (``/admin/``), and ``/invite`` is the shell's, at the root."""
    page = request.headers.get("referer") or request.headers.get("origin") or ""
    parts = urlsplit(page)
    if parts.scheme and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return f"http://{request.headers.get('host', '127.0.0.1')}"


def on_create(ctx: AppContext, p: InvitationsPanel, chosen: str, request: gr.Request) -> dict:
    made = invitations.create_invitation(ctx.database, ctx.settings, caller(ctx, request), chosen, app_url(request))
    return {p.link: made["link"], p.message: f"Valid until {esc(made['expires_at'][:16])} UTC, for one sign-up."}


def events(ctx: AppContext, p: InvitationsPanel) -> list[Event]:
    create = bind(shown_in(p.message)(on_create), ctx, p)
    return [Event("admin_invitations_create", "admin", create, p.create.click, [p.role], [p.link, p.message])]


def build_invitations_panel(ctx: AppContext) -> InvitationsPanel:
    """Admin tab: one-time sign-up links with a role."""
    p = layout()
    wire(ctx, events(ctx, p))
    return p
