"""Tabs built on their first visit (setting ``lazy_tabs``; web/lazy_tabs.py, components/opening.py; issue 44, sign-in
speed): a page's config holds its landing tab only, every other tab is a guarded render of the same builder."""

from __future__ import annotations

import gradio as gr
import pytest

from backend.accounts import auth
from backend.context import build_context
from backend.settings import Settings
from components import TABS
from components.access import ACCESS_LEAST, ACCESS_NAME
from components.opening import opening, tab_frame, with_first_open
from web.access_table import access_table, check_events
from web.audiences import all_audiences, build_audience
from web.gradio_gaps import block_functions, render_function
from web.lazy_tabs import render_name

PASSWORD = "lazy-password-1"


@pytest.fixture(scope="module")
def lazy_ctx(tmp_path_factory):
    ctx = build_context(Settings(data_dir=tmp_path_factory.mktemp("lazy") / "data", demo_content=False))
    for name, role in (("ann", "annotator"), ("rev", "reviewer"), ("boss", "admin")):
        auth.add_user(ctx.database, name, role, PASSWORD)
    return ctx


def _renders(blocks: gr.Blocks) -> dict[str, object]:
    """The first-visit renders of a built page, by their guard's name."""
    found = (render_function(fn) for fn in block_functions(blocks))
    return {getattr(fn, ACCESS_NAME): fn for fn in found if fn is not None}


def test_a_lazy_page_sends_its_landing_tab_and_a_guarded_render_for_each_other_tab(lazy_ctx):
    audience = all_audiences()["admin"]
    whole = build_audience(lazy_ctx, audience, lazy=False)
    lazy = build_audience(lazy_ctx, audience, lazy=True)
    tabs = [spec for spec in TABS if spec.tab_id != audience.landing]
    # the same tabs, under the same labels, in both
    labels = [b.label for b in lazy.blocks.values() if isinstance(b, gr.Tab) and b.id in {t.tab_id for t in TABS}]
    assert labels == [spec.label for spec in TABS]
    # the page the browser builds before it paints: under a third of the components (757 -> ~100 on this page)
    assert len(lazy.blocks) * 3 < len(whole.blocks)
    renders = _renders(lazy)
    assert sorted(renders) == sorted(render_name(spec.tab_id) for spec in tabs)
    for spec in tabs:  # each render behind the tab's own row of components.TABS
        assert getattr(renders[render_name(spec.tab_id)], ACCESS_LEAST) == spec.min_role
    assert check_events(lazy) == []
    # the access table is read from the whole pages: the lazy one holds the landing tab's events and the page's
    assert set(access_table([lazy])) < set(access_table([whole]))
    assert not _renders(whole)


def test_a_render_is_refused_to_an_identity_below_the_tabs_row(lazy_ctx):
    renders = _renders(build_audience(lazy_ctx, all_audiences()["admin"], lazy=True))
    with pytest.raises(gr.Error, match="admin"):  # Studies is an admin's tab
        renders[render_name("studies")](gr.Request(username="rev"))
    with pytest.raises(gr.Error, match="reviewer"):  # Review is a reviewer's
        renders[render_name("review")](gr.Request(username="ann"))


def test_the_build_check_refuses_a_render_without_the_guard():
    with gr.Blocks() as bare:
        box = gr.Textbox()

        @gr.render(triggers=[box.submit])
        def built() -> None:
            gr.Markdown("built")

    with pytest.raises(RuntimeError, match="guarded as None"):
        check_events(bare)


def test_a_builder_fills_the_tab_being_opened_and_its_select_events_run_on_the_first_visit():
    with gr.Blocks() as demo:
        with gr.Tabs():
            with gr.Tab("Planning", id="planning") as tab:
                box = gr.Textbox()
        assert len(with_first_open([tab.select])) == 1  # outside a render: as declared
        with opening(tab, demo.load):
            with tab_frame("planning", visible=False) as framed:
                assert framed is tab  # no second tab: the builder fills the one the page has
            with pytest.raises(TypeError, match="review"), tab_frame("review"):
                pass
            assert len(with_first_open([tab.select])) == 2  # the tab's select, and the page's load
            assert len(with_first_open([box.change, tab.select])) == 3
            assert len(with_first_open([box.change])) == 1  # other triggers unchanged
        with tab_frame("review") as fresh:  # outside a render: a new tab, labelled as components.TABS says
            assert fresh is not tab and (fresh.id, fresh.label) == ("review", "Review")


def test_a_rendered_tab_says_which_fields_are_interactive_as_gradio_infers_it_for_a_whole_page():
    """Gradio's frontend infers interactivity from the events of the config it was first sent; a render's events
    come later, so the render says it: an event's input is interactive, a component only written to is not, and a
    component that says it itself keeps it."""
    from components.opening import note_event

    with gr.Blocks() as demo:
        with gr.Tabs(), gr.Tab("Planning", id="planning") as tab:
            typed, shown, fixed = gr.Textbox("a"), gr.Textbox("b"), gr.Textbox("c", interactive=False)
            both = gr.Dropdown(["x"], value="x")
        with opening(tab, demo.load):
            note_event([typed, fixed, both], {shown, both})
            note_event(None, shown)
    assert (typed.interactive, shown.interactive, fixed.interactive, both.interactive) == (True, False, False, True)


def test_a_question_shown_before_the_tab_filled_its_list_gets_a_message(lazy_ctx):
    """A tab built on its first visit fills its lists a round trip after it is drawn: a press before that is told
    what to do (not a traceback)."""
    from backend.errors import ValidationError
    from components.planning.browse import on_show

    with pytest.raises(ValidationError, match="Choose a question first"):
        on_show(lazy_ctx, None, None, gr.Request(username="ann"))
