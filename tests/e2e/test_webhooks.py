"""The Admin tab's webhooks panel in a real browser (issue 26 §7): an admin registers an endpoint (a loopback receiver
started by the test), sees the secret once, sends a test event that the receiver verifies, sees the delivery with
its status, resends it, and is refused for a URL that is not http(s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect
from webhook_receiver import Receiver

pytestmark = pytest.mark.browser
SECRET = "panel-secret-0123456789"


@pytest.fixture(scope="module")
def app(served_app):
    return served_app({"boss": "admin"}, password="password1", webhooks_allow_private=True)


def fill(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} input, #{elem_id} textarea").first.fill(value)


def test_admin_registers_tests_and_resends_a_webhook(app, browser, tmp_path):
    receiver = Receiver(SECRET).start()
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1100}, timezone_id="Asia/Tokyo")
        page = context.new_page()
        browser_login(page, app.url, "boss", "password1")
        page.get_by_role("tab", name="Admin", exact=True).click()
        page.get_by_text("Webhooks: tell other systems as work happens").click()
        fill(page, "webhook-name", "lab")
        fill(page, "webhook-url", "ftp://example.org/x")
        page.locator("#webhook-add").click()
        message = page.locator("#webhook-message")
        expect(message).to_contain_text("http:// or https://", timeout=30_000)
        # what the admin wrote is shown as written: no raw entity, and not a link (issue 44 §9)
        expect(message).to_contain_text("(you wrote 'ftp://example.org/x')")
        expect(message.locator("a")).to_have_count(0)
        assert "&#" not in message.inner_text()
        fill(page, "webhook-url", receiver.url)
        fill(page, "webhook-secret", SECRET)
        page.locator("#webhook-add").click()
        expect(page.locator("#webhook-message")).to_contain_text("Added lab for 6 event(s)", timeout=30_000)
        expect(page.locator("#webhook-shown-secret input, #webhook-shown-secret textarea")).to_have_value(SECRET)
        expect(page.locator("#webhook-table [role=row]", has_text="lab")).to_contain_text(receiver.url)
        page.locator("#webhook-test").click()
        expect(page.locator("#webhook-message")).to_contain_text("Test event to lab: delivered", timeout=30_000)
        assert [(r.event, r.signature_ok) for r in receiver.requests] == [("webhook.test", True)]
        row = page.locator("#webhook-deliveries [role=row]", has_text="webhook.test")
        expect(row).to_contain_text("delivered")
        # headers in words and times on the person's clock (issue 44 §11), not the registry's keys and UTC
        deliveries = page.locator("#webhook-deliveries")
        expect(deliveries).to_contain_text("Last try")
        expect(deliveries).not_to_contain_text("last_attempt_at")
        expect(row).to_contain_text("JST")
        expect(page.locator("#webhook-table")).to_contain_text("Added by")
        page.screenshot(path=str(Path(os.environ.get("COMPSTUDIO_SCREENSHOTS", tmp_path)) / "admin-webhooks.png"),
                        full_page=True)  # fmt: skip
        delivery = app.ctx.database.scalar("SELECT id FROM webhook_deliveries")
        fill(page, "webhook-delivery-id", str(delivery))
        page.locator("#webhook-resend").click()
        expect(page.locator("#webhook-message")).to_contain_text(f"Delivery {delivery} is queued again", timeout=30_000)
        assert (
            app.ctx.database.scalar("SELECT status FROM webhook_deliveries") == "pending"
        )  # the app's sender posts it
        page.locator("#webhook-remove").click()
        expect(page.locator("#webhook-message")).to_contain_text("Removed lab", timeout=30_000)
        assert app.ctx.database.scalar("SELECT count(*) FROM webhooks") == 0
        page.context.close()
    finally:
        receiver.stop()
