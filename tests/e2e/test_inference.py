"""The Models tab in a real browser: a reviewer picks a benchmark and a model, runs it, sees the result."""

from __future__ import annotations

import gradio as gr
import pytest
from e2e_helpers import CHROMIUM, CHROMIUM_ARGS, free_port
from playwright.sync_api import expect, sync_playwright

from backend.accounts import auth
from components.models import build_models_tab

pytestmark = pytest.mark.browser


@pytest.fixture
def served(ctx):
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    tab = None
    with gr.Blocks() as demo:
        with gr.Tabs():
            tab = build_models_tab(ctx)
        fn, outputs = tab.on_load
        demo.load(fn, None, outputs)
        demo.load(lambda: gr.Tab(visible=True), None, tab.tab)
    demo.queue()
    port = free_port()
    demo.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        ssr_mode=False,
        auth=lambda user, password: auth.authenticate(ctx.database, user, password),
    )
    yield f"http://127.0.0.1:{port}"
    demo.close()


def test_reviewer_runs_a_benchmark_from_the_browser(served, ctx):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(served)
        page.wait_for_selector("input[type=password]")
        page.fill("input[type=text]", "rev")
        page.fill("input[type=password]", "password123")
        page.keyboard.press("Enter")
        page.get_by_role("tab", name="Models").click()
        expect(page.locator("#models-table")).to_contain_text("vllm-local")
        page.locator("#run-benchmark input").fill("toy-colors")
        page.keyboard.press("Enter")
        page.locator("#run-model input").fill("random")
        page.keyboard.press("Enter")
        page.locator("#run-limit input").fill("5")
        page.locator("#run-button").click()
        summary = page.locator("#run-message")  # in words: a status line and a table of counts (issue 44 §11)
        expect(summary).to_contain_text("Finished: random on toy-colors", timeout=30000)
        expect(summary).to_contain_text("of 5 items")
        expect(summary).to_contain_text("Newly computed 5")
        browser.close()
    assert ctx.database.scalar("SELECT COUNT(*) FROM predictions") == 5
