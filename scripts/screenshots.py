"""Take the screenshots of README.md and docs/usage.md: the app on its demo content, every tab, as the demo admin.

``HF_HUB_OFFLINE=1 .venv/bin/python scripts/screenshots.py`` writes docs/screenshots/<tab>.png, and the
annotation tab at phone width (390×844) as docs/screenshots/annotate-intents-phone.png. Review and Inspection with
an item and the player are copied from tests/e2e/test_player.py's screenshots when that test has run.

``scripts/screenshots.py --look DIR`` instead writes, for looking at (not for the docs), the sign-in page and every
tab at 1280×900 and 390×844, in light and in dark mode: ``DIR/<light|dark>-<width>/<page>.png``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from e2e_helpers import app_in_process, browser_login, chromium_browser, visit_every_tab  # noqa: E402

import app as app_module  # noqa: E402
from backend.settings import Settings  # noqa: E402


def look(folder: Path) -> None:
    """Every page at both widths, light and dark (see the module's docstring)."""
    settings = Settings(data_dir=Path(tempfile.mkdtemp()) / "data")
    with app_in_process(settings) as running, chromium_browser() as browser:
        app_module.login_help(running.ctx)
        password = json.loads((settings.data_dir / "demo-accounts.json").read_text())["demo-admin"]
        for scheme in ("light", "dark"):
            for width, height in ((1280, 900), (390, 844)):
                out = folder / f"{scheme}-{width}"
                out.mkdir(parents=True, exist_ok=True)
                phone = {"is_mobile": True, "has_touch": True} if width < 500 else {}  # no keyboard, a finger
                context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme, **phone)
                page = context.new_page()
                page.goto(running.url)
                page.get_by_label("User name").wait_for(timeout=30_000)
                page.screenshot(path=str(out / "login.png"), full_page=True)
                browser_login(page, running.url, "demo-admin", password)
                page.get_by_role("tab", name="Annotate intents").click()
                start = page.locator("#intent-start")
                if start.is_visible():
                    start.click()
                page.locator("#intent-task h3").wait_for(timeout=30_000)
                visit_every_tab(page, out)
                context.close()
                print(out)


def main() -> None:
    if sys.argv[1:2] == ["--look"]:
        look(Path(sys.argv[2]))
        return
    settings = Settings(data_dir=Path(tempfile.mkdtemp()) / "data")
    with app_in_process(settings) as running, chromium_browser() as browser:
        app_module.login_help(running.ctx)  # creates the demo accounts
        password = json.loads((settings.data_dir / "demo-accounts.json").read_text())["demo-admin"]
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(running.url)  # the login page (components/signin.py)
        page.screenshot(path=str(ROOT / "docs" / "screenshots" / "login.png"), full_page=True)
        browser_login(page, running.url, "demo-admin", password)
        # an admin lands on Admin and is handed a sequence only on asking for one
        page.get_by_role("tab", name="Annotate intents").click()
        page.locator("#intent-start").click()
        page.locator("#intent-task h3").wait_for(timeout=30_000)
        labels = visit_every_tab(page, ROOT / "docs" / "screenshots")
        print("\n".join(labels))
        # the demo has nothing waiting for review: Review and Inspection with an item and the player come from
        # tests/e2e/test_player.py's screenshots (run it first; COMPSTUDIO_SHOTS, default the temp folder)
        shots = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "player"
        for source, target in (("review-1280.png", "review.png"), ("inspection-marks.png", "inspection.png")):
            if (shots / source).is_file():
                shutil.copyfile(shots / source, ROOT / "docs" / "screenshots" / target)
                print(f"{target} from {shots / source}")
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        browser_login(phone, running.url, "demo-admin", password)
        phone.get_by_role("tab", name="Annotate intents", exact=True).click()
        phone.locator("#intent-task h3").wait_for(timeout=30_000)
        phone.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=30_000)
        phone.screenshot(path=str(ROOT / "docs" / "screenshots" / "annotate-intents-phone.png"), full_page=True)


if __name__ == "__main__":
    main()
