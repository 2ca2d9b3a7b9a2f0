"""``python app.py`` on a fresh data folder, as a newcomer runs it; then again, keeping the data."""

from __future__ import annotations

import json
import time

import pytest
from e2e_helpers import browser_login, chromium_browser, free_port, kill_hard, start_app_process, wait_http_ok
from playwright.sync_api import expect

from backend.context import build_context
from backend.settings import Settings

pytestmark = pytest.mark.browser


def counts(data_dir) -> dict[str, int]:
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    return {t: ctx.database.scalar(f"SELECT count(*) FROM {t}") for t in ("users", "sequences", "tasks", "annotations")}


def test_fresh_start_serves_the_demo_and_a_restart_keeps_the_data(tmp_path):
    data_dir, log = tmp_path / "data", tmp_path / "app.log"
    port = free_port()
    process = start_app_process(data_dir, port, log=log)
    try:
        # the start-up figure is benchmarks/cold_start.py's; here only that it starts (a loaded machine is slow)
        seconds = wait_http_ok(f"http://127.0.0.1:{port}/", timeout=180)
        print(f"fresh start answered HTTP 200 after {seconds:.1f} s")
        # a person signs in to the app run as `python app.py` (its module is __main__, not app: the page's
        # load event must still be the one the access table allows)
        password = json.loads((data_dir / "demo-accounts.json").read_text())["demo-admin"]
        with chromium_browser() as browser:
            page = browser.new_page()
            browser_login(page, f"http://127.0.0.1:{port}", "demo-admin", password)
            expect(page.locator("#whoami")).to_contain_text("Signed in as demo-admin", timeout=30_000)
            expect(page.get_by_role("tab", name="Admin", exact=True)).to_be_visible()
    finally:
        kill_hard(process)
    output = log.read_text()
    assert "Demo accounts" in output and "demo-annotator" in output
    accounts = json.loads((data_dir / "demo-accounts.json").read_text())
    assert set(accounts) == {"demo-admin", "demo-reviewer", "demo-annotator"}
    assert sorted(p.name for p in (data_dir / "media" / "demo").glob("*.mp4")) == [
        "DEMO-BOOK.mp4",
        "DEMO-LIGHT.mp4",
        "DEMO-SANDWICH.mp4",
        "DEMO-SHOES.mp4",
        "DEMO-WATER.mp4",
    ]
    first = counts(data_dir)
    assert first["sequences"] >= 5 and first["users"] >= 3

    process = start_app_process(data_dir, port, log=log)
    try:
        wait_http_ok(f"http://127.0.0.1:{port}/", timeout=60)
        time.sleep(0.5)
    finally:
        kill_hard(process)
    assert counts(data_dir) == first
    assert json.loads((data_dir / "demo-accounts.json").read_text()) == accounts
