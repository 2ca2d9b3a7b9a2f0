"""The bodies of the crowd worker's pages added in issue 26 (web/study_pages.py wraps them in its page):
the instructions before the qualification, the quiz with the instructions kept at hand, the mistakes of a
failed try explained, the final fail saying why, the "study full" and "come back later" pages, and the page a
study worker sees after logging out, with their link to continue. Every text a person wrote is escaped here;
the instructions are our own Markdown rendered with raw HTML off (backend/campaigns/instructions.py)."""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any

from backend.campaigns.instructions import INSTRUCTIONS, inline_html
from backend.campaigns.qualification import QuizItem
from backend.campaigns.studies import Study
from backend.campaigns.workers import StudyWorker, tries_left


def instructions_section(study: Study, *, folded: bool) -> str:
    """The study's instructions, the same text the annotation tab shows; ``folded``: a details element the worker
    opens during the quiz."""
    text = INSTRUCTIONS[study.kind].html()
    if folded:
        return (
            '<details id="study-instructions"><summary>Read the instructions again (the quiz is about them)</summary>'
            f'<div class="instructions">{text}</div></details>'
        )
    return f'<section id="study-instructions" class="instructions"><h2>Instructions</h2>{text}</section>'


def needed(pass_mark: float, asked: int) -> int:
    """Right answers needed: the pass mark times the questions, rounded up (without float noise).

    >>> needed(0.8, 5), needed(0.75, 4), needed(0.7, 3)
    (4, 3, 3)
    """
    return -(-round(pass_mark * asked * 1000) // 1000)


def _tries_words(left: int) -> str:
    return "one more try" if left == 1 else f"{left} tries"


def instructions_body(study: Study, worker: StudyWorker) -> str:
    """Step 1 of the qualification: read the instructions, then start the quiz."""
    left = tries_left(study, worker)
    return (
        f"<p>Welcome to <strong>{html.escape(study.name)}</strong>. First read how the work is done: the short "
        f"qualification after it is about these instructions ({study.qualification_size} questions). You have "
        f"{_tries_words(left)}; after a try that does not pass, we show what went wrong.</p>"
        + instructions_section(study, folded=False)
        + '<p><a class="button" id="study-quiz-start" href="here?quiz=1">I have read them: start the qualification</a></p>'
    )


def mistakes_section(mistakes: list[dict[str, Any]], *, folded: bool = False) -> str:
    """Each mistake of a try: the question, the answer given, the right one, and the rule it tests. ``folded``
    (between tries): a one-line summary the worker opens, so the new questions stay in view (issue 44: the list
    of mistakes was ~1,500 px long on a phone and pushed them off screen)."""
    if not mistakes:
        return ""
    items = []
    for mistake in mistakes:
        rules = "".join(f"<li>{inline_html(str(rule))}</li>" for rule in mistake.get("rules", []))
        items.append(
            f'<li class="mistake"><p>{html.escape(str(mistake["question"]))}</p>'
            f"<p>You answered <em>{html.escape(str(mistake['chosen']))}</em>; the right answer is "
            f"<strong>{html.escape(str(mistake['right']))}</strong>: {html.escape(str(mistake['why']))}.</p>"
            + (
                f'<p>{"The rules" if len(mistake.get("rules", [])) > 1 else "The rule"}:</p><ul class="rules">{rules}</ul>'
                if rules
                else ""
            )
            + "</li>"
        )
    listed = f"<ol>{''.join(items)}</ol>"
    if folded:
        count = "1 question" if len(mistakes) == 1 else f"{len(mistakes)} questions"
        return (
            f'<details id="study-mistakes"><summary>What went wrong in your last try ({count}): open to see the '
            f"right answers and the rules</summary>{listed}</details>"
        )
    return f'<section id="study-mistakes"><h2>What went wrong</h2>{listed}</section>'


def quiz_body(study: Study, worker: StudyWorker, items: list[QuizItem]) -> str:
    """Step 2: the quiz, with the instructions folded above it and, after a failed try, its mistakes."""
    fields = []
    for number, item in enumerate(items, start=1):
        options = "".join(
            f'<label><input type="radio" name="{html.escape(item.id)}" value="{index}" required> '
            f"{html.escape(option)}</label>"
            for index, option in enumerate(item.options)
        )
        fields.append(
            f"<fieldset><legend>Question {number}</legend><p>{html.escape(item.prompt)}</p>{options}</fieldset>"
        )
    left = tries_left(study, worker)
    intro = (
        f"<p>The qualification of <strong>{html.escape(study.name)}</strong>: {len(items)} questions; "
        f"{needed(study.pass_mark, len(items))} right answers let you in. "
        + ("This is your last try." if left == 1 else f"You have {_tries_words(left)}.")
        + "</p>"
    )
    again = ""
    if worker.quiz_feedback:
        again = (
            '<p class="error" role="status" id="study-try-again">Your last try did not reach the pass mark. '
            "The new questions are below; what went wrong is folded here.</p>"
            + mistakes_section(worker.quiz_feedback, folded=True)
        )
    return (
        again
        + intro
        + instructions_section(study, folded=True)
        + '<form method="post" action="qualification" id="study-quiz">'
        + "".join(fields)
        + '<button class="button" type="submit" id="study-quiz-submit">Send my answers</button></form>'
    )


def screened_out_body(study: Study, worker: StudyWorker) -> str:
    """The final fail: why (the score against the pass mark, on the last of the tries), and the mistakes."""
    score = worker.quiz_score if worker.quiz_score is not None else 0.0
    return (
        "<p>Thank you for taking the qualification. "
        f"On your last try ({worker.quiz_attempts} of {study.qualification_attempts}) you answered "
        f"{round(score * 100)}% of the questions right; this study needs {round(study.pass_mark * 100)}%. So we "
        "cannot offer you its tasks, and the qualification cannot be taken again.</p>"
        + mistakes_section(worker.quiz_feedback or [])
    )


def full_body(study: Study) -> str:
    """The "study full" page, worded for a real worker: what happened and that it is not their doing, the
    screen-out code that pays them for the minute it took, and the way back to the platform."""
    from backend.campaigns.arrivals import full_link, full_message

    code = (
        '<p>Your screen-out code:</p><p><span class="code" id="study-code">'
        f"{html.escape(study.screenout_code)}</span></p>"
        if study.screenout_code
        else ""
    )
    link = full_link(study)
    back = f'<p><a class="button" id="study-return" href="{html.escape(link)}">Return to the platform</a></p>'
    return f'<p role="alert" id="study-message">{html.escape(full_message(study))}</p>' + code + (back if link else "")


def waiting_body(study: Study, done: int, until: datetime) -> str:
    """A worker who found no task free: what is happening, that the page checks by itself, until when, and what
    they get then. The page reloads itself (a Refresh header, no script), and also has a button to check now."""
    from backend.campaigns.waiting import RETRY_SECONDS, paid_code

    code_words = "your code for the tasks you did" + (f" ({done} so far)" if done else "")
    partial = " (a partial-pay code)" if study.partial_code and paid_code(study) != study.completion_code else ""
    return (
        f'<p role="status" id="study-waiting">No task of <strong>{html.escape(study.name)}</strong> is free for you '
        "right now: other people hold the last ones, and some usually come back when they finish or leave. This page "
        f"checks again by itself every {RETRY_SECONDS} seconds and sends you to your next task as soon as one is "
        f'free.</p><p>It waits until <strong id="study-wait-until">{until:%H:%M} UTC</strong>. If no task is free '
        f"by then, your part ends and you get {code_words}{partial}: you will not lose what you did.</p>"
        '<p><a class="button" id="study-wait-now" href="here?wait=1">Check now</a></p>'
    )


def message_body(message: str) -> str:
    """A page that only says why (come back later, not a participant of this study)."""
    return f'<p role="alert" id="study-message">{html.escape(message)}</p>'


def signed_out_body(study: Study, worker: StudyWorker, link: str) -> str:
    """After Log out: the worker's own study link, to continue where they stopped (it signs them in again)."""
    if worker.status in ("started", "qualified"):
        what = (
            f"You have logged out of <strong>{html.escape(study.name)}</strong>. Your work so far is saved. To "
            "continue where you stopped, open your study link again:"
        )
        button = f'<p><a class="button" id="study-continue" href="{html.escape(link)}">Continue the study</a></p>'
        note = (
            "<p>This link is yours: it signs you in to this study without a password, so do not share it. You "
            "can also open the study again from the platform's page.</p>"
        )
        return f"<p>{what}</p>{button}{note}"
    return (
        f"<p>You have logged out of <strong>{html.escape(study.name)}</strong>. Your part in it has ended; your "
        "study link shows what you earned.</p>"
        f'<p><a class="button" id="study-continue" href="{html.escape(link)}">Open my study page</a></p>'
    )
