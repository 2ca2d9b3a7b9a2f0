"""What several browser tests do on the "Annotate intents" page: its fields, the sequence shown, watching the video.

The browser itself and signing in are in ``e2e_helpers`` (``chromium_browser``, ``browser_login``); the app in a
test is the ``served_app`` fixture (tests/conftest.py). Browser test files import these helpers from here, never
from one another, so that they can be moved or renamed on their own.
"""

from __future__ import annotations

CONCRETE = "#concrete-intent textarea, #concrete-intent input"
HIGH_LEVEL = "#high-level-intent textarea, #high-level-intent input"


def current_sequence(page) -> str:
    """The id of the sequence the page shows ("Sequence DEMO-X · ..." -> "DEMO-X")."""
    return page.locator("#intent-task h3").inner_text().split("·")[0].replace("Sequence", "").strip()


def watch_video(page) -> None:
    """Play the video and wait until it has ended, as the annotator would."""
    video = page.locator("#intent-video video")
    video.wait_for(timeout=30_000)
    video.evaluate("v => { v.muted = true; return v.play(); }")
    page.wait_for_function("() => document.querySelector('#intent-video video').ended", timeout=30_000)
