"""Count axe-core violations per page on the demo content: the login page, then every tab as the demo admin.

``HF_HUB_OFFLINE=1 .venv/bin/python scripts/accessibility.py`` prints one line per page, in light and then in dark
mode (the system's preference, which every page follows): the number of violated rules by impact (critical,
serious, moderate, minor) and the serious/critical rule ids. The crowd's
pages (login, Annotate intents) must stay at zero serious and critical (tests/e2e/test_accessibility.py).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from axe_playwright_python.sync_playwright import Axe  # noqa: E402
from e2e_helpers import app_in_process, browser_login, chromium_browser  # noqa: E402

import app as app_module  # noqa: E402
from backend.settings import Settings  # noqa: E402

IMPACTS = ("critical", "serious", "moderate", "minor")


def summary(page) -> str:
    violations = Axe().run(page).response["violations"]
    counts = Counter(v["impact"] for v in violations)
    worst = sorted({v["id"] for v in violations if v["impact"] in {"critical", "serious"}})
    return " ".join(f"{impact} {counts[impact]}" for impact in IMPACTS) + (f"  ({', '.join(worst)})" if worst else "")


def main() -> None:
    settings = Settings(data_dir=Path(tempfile.mkdtemp()) / "data")
    with app_in_process(settings) as running, chromium_browser() as browser:
        app_module.login_help(running.ctx)  # creates the demo accounts
        password = json.loads((settings.data_dir / "demo-accounts.json").read_text())["demo-admin"]
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
            page = context.new_page()
            page.goto(running.url)
            page.get_by_label("User name").wait_for(timeout=30_000)
            print(f"{scheme:6s} {'login page':24s} {summary(page)}")
            browser_login(page, running.url, "demo-admin", password)
            page.wait_for_selector("#whoami strong", timeout=60_000)
            labels = [label.strip() for label in page.get_by_role("tab").all_inner_texts() if label.strip()]
            for label in labels:
                page.get_by_role("tab", name=label, exact=True).click()
                page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
                print(f"{scheme:6s} {label:24s} {summary(page)}")
            context.close()


if __name__ == "__main__":
    main()
