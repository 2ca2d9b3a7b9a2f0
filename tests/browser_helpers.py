"""What several browser tests do on the "Annotate intents" page: its fields, the sequence shown, watching the video.

The browser itself and signing in are in ``e2e_helpers`` (``chromium_browser``, ``browser_login``); the app in a
test is the ``served_app`` fixture (tests/conftest.py). Browser test files import these helpers from here, never
from one another, so that they can be moved or renamed on their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def icl_app(served_app, browser, folder: Path, bank_lines: int, password: str) -> Iterator:
    """The app for the in-context browser tests: a reviewer ``res`` and an annotator ``ann`` (``password``), the tiny
    causal model ``tiny-icl``, the first ``bank_lines`` of the COGS bank and four phrareco-like test cases; the
    ``browser``'s windows opened meanwhile close before it stops (:func:`closing_new_contexts`)."""
    from conftest import COGS_ASSETS, COGS_BANK
    from tiny_models import tiny_spec

    from backend.icl.store import import_set

    bank, tests = folder / "bank.jsonl", folder / "test_phrareco_like.jsonl"
    bank.write_text("\n".join(COGS_BANK.read_text().splitlines()[:bank_lines]) + "\n")
    tests.write_text("\n".join(COGS_ASSETS.joinpath("test_phrareco_like.jsonl").read_text().splitlines()[:4]) + "\n")
    with (
        served_app.started({"res": "reviewer", "ann": "annotator"}, password=password) as running,
        closing_new_contexts(browser),
    ):
        running.ctx.models.register_model(tiny_spec("causal", name="tiny-icl", max_new_tokens=4))
        import_set(running.ctx.database, "cli", bank, "cogs-bank", "bank")
        import_set(running.ctx.database, "cli", tests, "phrareco", "tests")
        yield running


@contextlib.contextmanager
def closing_new_contexts(browser) -> Iterator[None]:
    """Close the browser contexts (windows) opened inside the ``with`` block when it ends. A per-test app fixture
    wraps its ``yield`` in this, after ``served_app.started``, so that the test's pages are closed before its app
    stops: an open page's event streams hold the server's graceful shutdown for its whole timeout (2 s a test)."""
    before = set(browser.contexts)
    try:
        yield
    finally:
        for context in browser.contexts:
            if context not in before:
                context.close()
