"""The Studies tab's panels called as plain functions (issue 43 §1, §6): a panel's handlers take the app context, its
handles and the request, so a test builds the panel once in a Blocks and calls them, with no server and no browser.
The same steps the browser test of the tab takes (tests/e2e/test_campaign.py): create a study, show its link, ask to
close it, close it, reopen the tab."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from backend.errors import PermissionDenied
from components.feedback import Mistake
from components.studies import create, listing, manage, on_open
from components.studies.flags import build_flags_panel, on_resume

HOST = "studio.test"


def _request(name: str) -> gr.Request:
    return gr.Request(username=name, headers={"host": HOST})


@pytest.fixture
def panels():
    with gr.Blocks():
        shown = listing.layout()
        form = create.layout()
        row = manage.layout()
    return shown, form, row


def _form() -> list:
    """The form's values in the order of ``CreatePanel.inputs`` (what the page sends): name, kind, platform, tasks,
    minutes, places, quiz size, pass mark, tries, completion and screen-out codes, return URL, id parameter, gold
    rate, partial-pay code, Prolific token and study id."""
    return ["Pilot", "intents", "prolific", 2, 60, 50, 5, 0.8, 2, "DONE42", "OUT7", "", "", 0, "", "", ""]


def test_a_study_is_created_linked_and_closed_by_calling_the_panels_handlers(ctx, panels):
    shown, form, row = panels
    auth.add_user(ctx.database, "boss", "admin", "password1")
    boss = _request("boss")
    assert len(form.inputs) == len(_form())

    made = create.on_create(ctx, form, shown, row, *_form(), boss)
    assert made[row.message] == "Created study **1**, “Pilot”. Its link is below."
    assert made[row.chosen] == 1 and made[row.address] == f"http://{HOST}"
    assert made[row.link].startswith(f"http://{HOST}/study/1?PROLIFIC_PID=") and "&sig=" in made[row.link]
    assert made[shown.table]["visible"] is True and made[shown.none_yet] == ""
    assert made[form.prolific_token] == ""  # the token is never sent back to the page

    linked = manage.on_link(ctx, row, 1, "https://crowd.example.org", boss)
    assert linked[row.link].startswith("https://crowd.example.org/study/1?")
    with pytest.raises(Mistake, match="number of the study"):
        manage.on_link(ctx, row, None, "", boss)

    asked = manage.on_close_ask(ctx, row, 1, boss)
    assert asked[row.closing] == 1 and asked[row.effect].startswith("⚠️ **")
    closed = manage.on_close_confirm(ctx, row, shown, asked[row.closing], "", boss)
    assert closed[row.message].startswith("Study **1** is closed: 0 worker(s)")
    assert closed[row.closing] is None

    reopened = on_open(ctx, shown, row, boss)
    frame = reopened[shown.table]["value"]
    assert list(frame["state"]) == ["closed"] and list(frame["name"]) == ["Pilot"]
    assert reopened[row.address] == f"http://{HOST}"
    assert manage.on_close_ask(ctx, row, 1, boss)[row.message] == "Study 1 is already closed."


def test_the_handlers_leave_the_role_check_to_the_backend(ctx, panels):
    shown, form, row = panels
    auth.add_user(ctx.database, "ann", "annotator", "password1")
    with pytest.raises(PermissionDenied):
        create.on_create(ctx, form, shown, row, *_form(), _request("ann"))
    # the tab's page-load part: a refused caller leaves the (hidden) tab as built
    assert on_open(ctx, shown, row, _request("ann")) == {shown.table: gr.update()}
    with gr.Blocks():
        flags = build_flags_panel(ctx)
    with pytest.raises(Mistake, match="paused worker"):
        on_resume(ctx, flags, "  ", _request("ann"))
