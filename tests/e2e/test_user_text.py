"""Issue 15 §7: XSS and Markdown-injection payloads written into the fields people write (intents, review
comments, VQA questions and options, a model's path, crowd studies' names and return URL, an admin's reason for
blocking a worker) and rendered on the pages that show them, in a real browser: no dialog fires, no script runs
and no element is injected. User names, model names, study codes and study worker ids cannot carry such text at
all (their rules refuse it), which the test checks too. Invitations and gold verdicts carry no free text."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from e2e_helpers import browser_login
from playwright.sync_api import expect
from review_helpers import PASSWORD, add_people, add_sequences

from backend.accounts import auth
from backend.campaigns import gold, links, quality, studies, workers
from backend.campaigns.qualification import draw_quiz
from backend.errors import StudyLinkRefused, ValidationError
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
# a return URL the rules accept (http(s), a host) with a payload in its query; {code} is filled in
RETURN_URL = 'https://example.org/done?cc={code}&x="><img src=x data-xss onerror="window.__xss=1;alert(1)">'
TREE = parse_sentence("A rose was helped by a dog .").to_json()
CLEAN = {"elements": 0, "ran": False, "javascript_links": 0}


@pytest.fixture(scope="module")
def app(served_app):
    running = served_app(annotators_per_sequence=2, require_full_view=False)
    ctx = running.ctx
    database = ctx.database
    add_people(
        database,
        annotators=["a1", "a2", "a3", "writer", "goldie"],
        reviewers=["rev"],
        admins=["boss"],
        password=PASSWORD,
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
            {"input": f"Form one: {p} .", "output": "HELP ( DOG , ROSE , NONE )", "input_tree": TREE} for p in PAYLOADS
        ]
        path = ctx.settings.data_dir / f"payload-{kind}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        import_set(database, "boss", path, f"payload-{kind}", kind, category="payload" if kind == "tests" else None)
    _add_studies(ctx)
    _add_gold_answer_and_block(ctx)
    yield running


def _add_studies(ctx) -> None:
    """A study per payload as its name: study 1 with a qualification nobody can pass by guessing (pass mark 1),
    the others without one (a worker arriving is qualified at once)."""
    for index, payload in enumerate(PAYLOADS):
        studies.create_study(
            ctx.database,
            "boss",
            name=payload,
            kind="intents",
            tasks_per_worker=3,
            completion_code=f"DONE{index}",
            screenout_code=f"OUT{index}",
            return_url=RETURN_URL,
            qualification_size=0 if index else 5,
            qualification_attempts=1,  # one try: all answers wrong screens out at once
            pass_mark=1.0,
        )


def _add_gold_answer_and_block(ctx) -> None:
    """A sequence reviewed reasonable (its final intents edited into payloads) becomes gold; ``goldie`` answers it with payloads far from the reference (a
    reviewer must judge it: the Worker quality tab's gold table), and an admin blocks goldie with a payload as
    the reason (the audit log)."""
    database = ctx.database
    item = review.next_review(database, ctx.settings, "rev")["item"]
    judgments = [review.Judgment(a["annotation_id"], True, "") for a in item["annotations"]]
    first = item["annotations"][0]["annotation_id"]  # the final intents as the reviewer edited them
    final = review.FinalChoice(first, first, f"S/He wants to {PAYLOADS[8]}", f"S/He is {PAYLOADS[9]}")
    review.submit_review(database, ctx.settings, "rev", item["sequence_id"], item["round"], judgments, final)
    gold.add_gold(database, "rev", "intent", [item["sequence_id"]])
    mixed = ctx.settings.replace(gold_rate=0.9, gold_agreement_threshold=1.0)  # goldie's first task is the gold one
    task = intents.next_intent_task(database, mixed, "goldie")["task"]
    assert task["sequence_id"] == item["sequence_id"]
    intents.submit_intents(
        database, mixed, "goldie", task["sequence_id"], f"S/He wants to {PAYLOADS[4]}", f"S/He is {PAYLOADS[6]}"
    )
    assert [row["annotator"] for row in gold.pending_judgments(database, "rev")] == ["goldie"]
    quality.block(database, "boss", "goldie", PAYLOADS[2])


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
    database, study = app.ctx.database, studies.get_study(app.ctx.database, 2)
    for payload in PAYLOADS:
        with pytest.raises(ValidationError):
            auth.add_user(database, payload, "annotator", PASSWORD)
        with pytest.raises(ValidationError):
            inference.save_model(app.ctx, "boss", {"name": payload, "backend": "random"})
        for code in ("completion_code", "screenout_code"):
            with pytest.raises(ValidationError):
                studies.create_study(database, "boss", name="n", kind="intents", tasks_per_worker=1, **{code: payload})
        with pytest.raises(StudyLinkRefused):  # a worker id is the platform's, but only of a safe alphabet
            sig = links.study_signature(database.scalar("SELECT secret FROM studies WHERE id = 2"), 2)
            links.verify_visit(database, study, {"PROLIFIC_PID": payload, "sig": sig})
    with pytest.raises(ValidationError):  # a return URL is an http(s) address
        studies.create_study(
            database, "boss", name="n", kind="intents", tasks_per_worker=1, return_url="javascript:alert(1)//{code}"
        )


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
    page.get_by_role("tab", name="Review").click()
    page.get_by_role("tab", name="Worker quality").click()
    page.locator("#flags-refresh").click()  # the gold answers to judge: goldie's payload intents
    expect(page.locator("#gold-table")).to_contain_text("goldie", timeout=30_000)
    expect(page.locator("#gold-table")).to_contain_text("data-xss")
    _assert_clean(page, dialogs, "worker quality")


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
    page.evaluate(CLICK_TAB, "Annotate intents / Admin")
    page.get_by_text("Audit log (latest 200 writes)").click()
    expect(page.locator("#audit-table")).to_contain_text("quality.block", timeout=30_000)  # the block reason
    page.get_by_text("Crowd workers: report, payment CSV, blocking").click()
    page.locator("#report-refresh").click()
    expect(page.locator("#report-table")).to_contain_text("goldie", timeout=30_000)
    _assert_clean(page, dialogs, "admin: audit log and worker report")
    page.get_by_role("tab", name="Studies", exact=True).click()  # the table, a new study, the link panel
    expect(page.locator("#studies-table")).to_contain_text("data-xss", timeout=30_000)
    page.locator("#study-name input, #study-name textarea").fill(
        PAYLOADS[5] + " again"
    )  # names are unique among open studies
    page.locator("#study-completion input, #study-completion textarea").fill("DONE99")
    page.locator("#study-screenout input, #study-screenout textarea").fill("OUT99")
    page.locator("#study-return-url input, #study-return-url textarea").fill(RETURN_URL)
    page.locator("#study-create").click()
    expect(page.locator("#study-message")).to_contain_text("Created study 11", timeout=30_000)
    expect(page.locator("#study-link input, #study-link textarea")).to_have_value(re.compile(r"/study/11\?"))
    page.locator("#study-id input").fill("1")
    page.locator("#study-show-link").click()
    expect(page.locator("#study-link input, #study-link textarea")).to_have_value(re.compile(r"/study/1\?"))
    _assert_clean(page, dialogs, "studies, as admin")


def _shown(page, selector: str) -> None:
    """Wait until nothing is pending and ``selector`` has faded in (Gradio animates a Markdown's new content)."""
    page.wait_for_function("() => !document.querySelector('.pending, .generating')", timeout=60_000)
    page.wait_for_function(
        "(s) => { for (let n = document.querySelector(s); n; n = n.parentElement)"
        " { if (getComputedStyle(n).opacity !== '1') return false; } return true; }",
        arg=selector,
        timeout=30_000,
    )


def test_a_study_workers_pages_show_the_study_name_and_return_url_as_text(app, browser):
    """The pages a crowd worker sees: the qualification and the screen-out page (study 1), the working page,
    the Annotate tab's study line, and once the study is closed the completion page and the tab's completion
    code with the return link (study 2)."""
    database = app.ctx.database
    quiz, work = studies.get_study(database, 1), studies.get_study(database, 2)
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(links.worker_link(database, quiz, app.url, "5f00aa11bb22cc33dd44ee01"))
    expect(page.locator("#study-page")).to_have_attribute("data-state", "started", timeout=30_000)
    expect(page.locator("#study-page strong").first).to_have_text(PAYLOADS[0])  # shown as typed
    _assert_clean(page, dialogs, "study instructions")
    page.locator("#study-quiz-start").click()  # the instructions come first (issue 26 §2)
    expect(page.locator("#study-quiz")).to_be_visible(timeout=30_000)
    expect(page.locator("#study-page strong").first).to_have_text(PAYLOADS[0])
    _assert_clean(page, dialogs, "study qualification")
    for item in draw_quiz(
        quiz.kind, quiz.qualification_size, quiz.id, "5f00aa11bb22cc33dd44ee01"
    ):  # every answer wrong
        page.locator(f'input[name="{item.id}"][value="{(item.answer + 1) % len(item.options)}"]').check()
    page.locator("#study-quiz-submit").click()
    expect(page.locator("#study-page")).to_have_attribute("data-state", "screened_out", timeout=30_000)
    expect(page.locator("#study-return")).to_have_attribute("href", quiz.return_link("OUT0"))
    _assert_clean(page, dialogs, "study screened out")

    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(links.worker_link(database, work, app.url, "5f00aa11bb22cc33dd44ee02"))
    expect(page.locator("#study-page")).to_have_attribute("data-state", "qualified", timeout=30_000)
    expect(page.locator("#study-page strong")).to_have_text(PAYLOADS[1])
    _assert_clean(page, dialogs, "study working")
    page.locator("#study-start").click()
    expect(page.locator("#intent-progress")).to_contain_text("Study " + PAYLOADS[1], timeout=60_000)
    _shown(page, "#intent-progress")
    _assert_clean(page, dialogs, "annotate, study line")
    worker = workers.worker_username(work.id, "5f00aa11bb22cc33dd44ee02")
    add_sequences(database, ["S-STUDY"], needed=1)  # the payload pool is done: one task for them
    held = intents.next_intent_task(database, app.ctx.settings, worker)["task"]  # one task done: paid on closing
    intents.submit_intents(
        database, app.ctx.settings, worker, held["sequence_id"], "S/He wants to eat", "S/He is hungry"
    )
    studies.close_study(database, "boss", work.id)  # the worker has finished: the completion code and link
    page.goto(f"{app.url}/study/{work.id}/here")
    expect(page.locator("#study-page")).to_have_attribute("data-state", "finished", timeout=30_000)
    expect(page.locator("#study-return")).to_have_attribute("href", work.return_link("DONE1"))
    _assert_clean(page, dialogs, "study complete")
    page.goto(app.url)
    expect(page.locator("#study-completion-code")).to_have_text("DONE1", timeout=60_000)
    expect(page.locator("#study-return-link")).to_have_attribute("href", work.return_link("DONE1"))
    _shown(page, "#study-completion-code")
    _assert_clean(page, dialogs, "annotate, study finished")
