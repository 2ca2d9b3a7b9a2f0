"""The planning and admin tabs' panel handlers called directly (issue 43 §1, §6): a panel is a frozen dataclass
of handles and its handlers are plain functions of (ctx, panel, inputs..., request), so a test builds the
layout inside a bare ``gr.Blocks`` and calls them with a real AppContext: no browser, no server, no guard."""

from __future__ import annotations

import time

import gradio as gr
import pytest
from planning_helpers import planning_context

from backend.accounts import auth
from backend.context import build_context
from backend.errors import PermissionDenied
from backend.planning import validation
from backend.settings import Settings
from components.admin import accounts
from components.feedback import Mistake
from components.planning import check

PASSWORD = "panel-password-1"


def test_check_panel_hands_a_question_without_its_key_and_saves_the_check(tmp_path, vilpact_dir):
    ctx = planning_context(tmp_path, vilpact_dir)
    auth.add_user(ctx.database, "ann", "annotator", PASSWORD)
    me = gr.Request(username="ann")
    with gr.Blocks():
        p = check.layout()
    shown = check.on_next(ctx, p, me)
    question = shown[p.current]
    assert question and shown[p.form]["visible"] is True and shown[p.status] == ""
    assert f"Question {question}" in shown[p.text] and "STRIPS" not in shown[p.text]  # nor the key
    assert "questions left for you" in shown[p.progress]

    refused = check.on_submit(ctx, p, question, time.time() - 5, None, me)
    assert set(refused) == {p.status} and "Mark one choice" in refused[p.status]  # the form is left as it is

    saved = check.on_submit(ctx, p, question, time.time() - 5, "C", me)
    assert saved[p.status] == f"Saved your check of {question}."
    assert saved[p.current] not in (None, question)  # the next question is shown
    assert validation.check_counts(ctx.database, "ann")["mine_total"] == 1


def test_accounts_panel_adds_an_account_and_refuses_what_it_must(tmp_path):
    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False))
    auth.add_user(ctx.database, "boss", "admin", PASSWORD)
    auth.add_user(ctx.database, "ann", "annotator", PASSWORD)
    with gr.Blocks():
        p = accounts.layout()
    added = accounts.on_add(ctx, p, "  newbie ", "reviewer", "a-long-password", gr.Request(username="boss"))
    assert added[p.message] == "Added **newbie** (reviewer)." and added[p.password] == ""
    assert "newbie" in set(added[p.users]["username"])
    assert added[p.count] == "**3 accounts**: 1 annotator, 1 reviewer, 1 admin"

    disabled = accounts.on_disable(ctx, p, "newbie", "reviewer", gr.Request(username="boss"))
    assert disabled[p.message] == "Disabled **newbie**." and disabled[p.count].endswith("· 1 disabled")
    with pytest.raises(Mistake, match="user name"):
        accounts.on_set_role(ctx, p, "   ", "admin", gr.Request(username="boss"))
    with pytest.raises(PermissionDenied):  # the backend checks the role whoever calls the handler
        accounts.on_add(ctx, p, "intruder", "admin", "a-long-password", gr.Request(username="ann"))
