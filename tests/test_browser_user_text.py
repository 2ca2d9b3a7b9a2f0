"""Issue 15 §7: XSS and Markdown-injection payloads written into the fields people write (intents, review
comments, VQA questions and options, a model's path) and rendered on the pages that show them, in a real
browser: no dialog fires, no script runs and no element is injected. User names and model names cannot carry
such text at all (their rules refuse it), which the test checks too."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from e2e_helpers import app_in_process, browser_login
from playwright.sync_api import expect
from review_helpers import PASSWORD, add_people, add_sequences

from backend.accounts import auth
from backend.errors import ValidationError
from backend.icl.grammar import parse_sentence
from backend.icl.store import import_set
from backend.inference import service as inference
from backend.intents import service as intents
from backend.review import service as review
from backend.vqa import service as vqa
from backend.vqa.demo import DEMO_FILE
from backend.vqa.permissions import set_permission

PAYLOADS = [
    '<img src=x data-xss onerror="window.__xss=1;alert(1)">',
    "<script data-xss>window.__xss=1;alert(1)</script>",
    '<svg data-xss onload="window.__xss=1;alert(1)"></svg>',
    "[click me](javascript:window.__xss=1;alert(1))",
    "![pic](x onerror=alert(1))",
    '<a data-xss href="javascript:alert(1)">link</a>',
    '"><iframe data-xss src="javascript:alert(1)"></iframe>',
    "<details data-xss open ontoggle=alert(1)>x</details>",
    "**bold** # heading `code` <b data-xss>b</b> | table | --- |",
    "{{7*7}} ${alert(1)} &lt;img src=x onerror=alert(1)&gt;",
]
# what must not exist in the page after it rendered the payloads
INJECTED = """() => ({
  elements: document.querySelectorAll('[data-xss]').length,
  ran: window.__xss === 1,
  javascript_links: [...document.querySelectorAll('a[href], iframe[src]')].filter(
    (el) => (el.getAttribute('href') || el.getAttribute('src') || '').trim().toLowerCase().startsWith('javascript:')
  ).length,
})"""
SHOTS = Path(os.environ.get("COMPSTUDIO_SHOTS", tempfile.gettempdir())) / "user-text"
TREE = parse_sentence("A rose was helped by a dog .").to_json()
CLEAN = {"elements": 0, "ran": False, "javascript_links": 0}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from backend.settings import Settings

    settings = Settings(
        data_dir=tmp_path_factory.mktemp("user-text") / "data",
        demo_content=False,
        annotators_per_sequence=2,
        require_full_view=False,
    )
    with app_in_process(settings) as running:
        ctx = running.ctx
        database = ctx.database
        add_people(
            database, annotators=["a1", "a2", "a3", "writer"], reviewers=["rev"], admins=["boss"], password=PASSWORD
        )
        set_permission(database, "boss", "writer", "author")
        sequences = [f"S{i}" for i in range(1, len(PAYLOADS) // 2 + 1)]
        add_sequences(database, sequences, needed=2)
        for name in ("a1", "a2"):  # every payload as a concrete and as a high-level intent
            task = intents.next_intent_task(database, ctx.settings, name)["task"]
            while task is not None:
                index = sequences.index(task["sequence_id"]) * 2
                concrete, high = f"S/He wants to {PAYLOADS[index]}", f"S/He is {PAYLOADS[index + 1]}"
                task = intents.submit_intents(database, ctx.settings, name, task["sequence_id"], concrete, high)["task"]
        # S1 judged not reasonable with payload comments: it returns to the pool with them as guidance
        item = review.next_review(database, ctx.settings, "rev")["item"]
        judgments = [review.Judgment(a["annotation_id"], False, PAYLOADS[i]) for i, a in enumerate(item["annotations"])]
        review.submit_review(database, ctx.settings, "rev", item["sequence_id"], item["round"], judgments)
        images = vqa.upload_images(database, ctx.settings, "writer", [DEMO_FILE.parent / "images" / "astronaut.jpg"])
        vqa.create_item(
            database,
            ctx.settings,
            "writer",
            category="Object Perception",
            question=PAYLOADS[0] + " " + PAYLOADS[3],
            options=[PAYLOADS[1], PAYLOADS[5]],
            answer="A",
            choice_type="single",
            images=images,
        )
        inference.save_model(ctx, "boss", {"name": "payload-path", "backend": "openai", "path": PAYLOADS[0]})
        for kind in ("bank", "tests"):  # an in-context bank and test set whose inputs are the payloads
            lines = [  # a supplied parse tree lets the input be any text (the grammar would refuse these)
                {"input": f"Form one: {p} .", "output": "HELP ( DOG , ROSE , NONE )", "input_tree": TREE}
                for p in PAYLOADS
            ]
            path = ctx.settings.data_dir / f"payload-{kind}.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            import_set(database, "boss", path, f"payload-{kind}", kind, category="payload" if kind == "tests" else None)
        yield running


def test_the_check_sees_an_injected_element_and_a_dialog(browser):
    """The detector itself: on a page that does run a payload, it reports the element, the script and the dialog."""
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.set_content('<img src=x data-xss onerror="window.__xss=1;alert(1)"><a href="javascript:alert(1)">a</a>')
    page.wait_for_function("() => window.__xss === 1")
    assert page.evaluate(INJECTED) == {"elements": 1, "ran": True, "javascript_links": 1} and dialogs == ["1"]
    page.close()


def test_names_cannot_carry_markup(app):
    for payload in PAYLOADS:
        with pytest.raises(ValidationError):
            auth.add_user(app.ctx.database, payload, "annotator", PASSWORD)
        with pytest.raises(ValidationError):
            inference.save_model(app.ctx, "boss", {"name": payload, "backend": "random"})


def _page(app, browser, user: str):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    browser_login(page, app.url, user, PASSWORD)
    return page, dialogs


# each visible tab as "<first tab of its tab bar> / <its label>" (the VQA tab has its own "Models" and "Admin")
VISIBLE_TABS = """() => [...document.querySelectorAll('[role=tab]')].filter((e) => e.offsetParent !== null)
  .map((e) => (e.closest('[role=tablist]') || e.parentElement).querySelector('[role=tab]').innerText.trim() + ' / ' + e.innerText.trim())"""
CLICK_TAB = """(key) => [...document.querySelectorAll('[role=tab]')].filter((e) => e.offsetParent !== null)
  .find((e) => (e.closest('[role=tablist]') || e.parentElement).querySelector('[role=tab]').innerText.trim() + ' / ' + e.innerText.trim() === key)
  .click()"""


def _every_tab(app, page, dialogs: list[str], seen: set[str] | None = None, keys: list[str] | None = None) -> None:
    """Click every tab this person sees, and every sub-tab while its tab is open; the page stays clean."""
    seen = set() if seen is None else seen
    for key in keys if keys is not None else page.evaluate(VISIBLE_TABS):
        if key in seen:
            continue
        seen.add(key)
        before = set(page.evaluate(VISIBLE_TABS))
        page.evaluate(CLICK_TAB, key)
        page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=60_000)
        _assert_clean(page, dialogs, f"tab {key}")
        opened = [k for k in page.evaluate(VISIBLE_TABS) if k not in before]
        _every_tab(app, page, dialogs, seen, opened)  # its sub-tabs, now visible


def _assert_clean(page, dialogs: list[str], where: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{''.join(c if c.isalnum() else '-' for c in where)}.png"), full_page=True)
    assert page.evaluate(INJECTED) == CLEAN, where
    assert dialogs == [], f"{where}: a dialog fired: {dialogs}"


def test_reviewer_pages_show_the_payloads_as_text(app, browser):
    page, dialogs = _page(app, browser, "rev")
    page.get_by_role("tab", name="Review").click()
    page.locator("#review-next").click()
    expect(page.locator("#review-item-form")).to_contain_text("data-xss", timeout=30_000)  # shown, as text
    _assert_clean(page, dialogs, "review queue")
    page.get_by_role("tab", name="Compositional VQA").click()
    page.get_by_role("tab", name="Verify").click()
    page.locator("#vqa-verify-next").click()
    expect(page.locator("#vqa-verify-item")).to_contain_text("javascript", timeout=30_000)
    _assert_clean(page, dialogs, "VQA verify")
    _every_tab(app, page, dialogs)
    _assert_clean(page, dialogs, "every tab, as reviewer")


def test_annotator_sees_the_review_comments_as_text(app, browser):
    page, dialogs = _page(app, browser, "a3")  # S1 is back in the pool with the comments as guidance
    expect(page.locator("#intent-task")).to_contain_text("S1", timeout=30_000)
    expect(page.locator("body")).to_contain_text("data-xss", timeout=30_000)
    _assert_clean(page, dialogs, "annotate intents with guidance")
    page.get_by_role("tab", name="In-context examples").click()  # the payload bank's examples for a payload case
    expect(page.locator("#icl_case input")).not_to_have_value("", timeout=30_000)
    page.locator("#icl_run").click()
    expect(page.locator("#icl_table")).to_contain_text("onerror", timeout=60_000)
    _assert_clean(page, dialogs, "in-context examples")
    _every_tab(app, page, dialogs)
    _assert_clean(page, dialogs, "every tab, as annotator")


def test_author_and_admin_pages_show_the_payloads_as_text(app, browser):
    page, dialogs = _page(app, browser, "writer")
    page.get_by_role("tab", name="Compositional VQA").click()
    page.get_by_role("tab", name="Author").click()
    expect(page.locator("body")).to_contain_text("onerror", timeout=30_000)
    _assert_clean(page, dialogs, "VQA author")
    page, dialogs = _page(app, browser, "boss")
    _every_tab(app, page, dialogs)  # models (the payload path), admin (the audit log), review dashboard, ...
    page.get_by_role("tab", name="Models").click()
    expect(page.locator("body")).to_contain_text("onerror", timeout=30_000)
    _assert_clean(page, dialogs, "every tab, as admin")
