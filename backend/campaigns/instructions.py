"""The instructions of each kind of work, written once (issue 26 §2): the annotation tabs show them
(components/intents/, planning.py, vqa.py), and a study's qualification page shows the very same text
before the quiz and keeps it open-able during it (web/study_pages.py). Every rule the quiz tests is a
numbered rule here (``QuizItem.rules`` names them; tests/test_campaign_qualification.py checks it), so a
worker is never asked about a rule they were not shown.

The text is Markdown; :meth:`Instructions.html` renders it for the study pages with markdown-it (already a
Gradio dependency) with raw HTML off, so nothing in it can become markup by accident.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt

from backend.intents.rules import accepted_forms


@dataclass(frozen=True)
class Rule:
    id: str
    text: str  # Markdown, one or two sentences


@dataclass(frozen=True)
class Instructions:
    kind: str  # a study kind: intents | planning | vqa
    task: str  # Markdown: what to do
    examples: tuple[str, ...]  # Markdown, one bullet each
    rules: tuple[Rule, ...]
    closing: str = ""

    def rule(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(f"{self.kind} instructions have no rule {rule_id!r}")

    def markdown(self) -> str:
        parts = [self.task.strip()]
        if self.examples:
            parts.append("\n".join(f"* {example}" for example in self.examples))
        parts.append("**Rules**\n\n" + "\n".join(f"{n}. {rule.text}" for n, rule in enumerate(self.rules, start=1)))
        if self.closing:
            parts.append(self.closing.strip())
        return "\n\n".join(parts) + "\n"

    def html(self) -> str:
        return _renderer().render(self.markdown())


@cache
def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


INTENTS = Instructions(
    "intents",
    "Watch the video, read the actions below it, and answer: **what does the person want to do by taking these "
    "actions?** Write two intents:",
    (
        "**Concrete activity**, e.g. “S/He wants to drink a glass of water”.",
        "**High-level goal**, e.g. “S/He is thirsty” or “S/He wants to quench the thirst”.",
    ),
    (
        Rule(
            "form",
            "Start each intent with **S/He**, **She** or **He**, then *wants to …* (what they plan) or *is …* "
            f"(how they feel); these beginnings are accepted: {accepted_forms()}.",
        ),
        Rule("content", "Say something real after the beginning: “S/He wants to something” says nothing."),
        Rule(
            "no-copy",
            "Do not repeat an action name: say *why* the person acts (for the action “Opening a door”, “S/He is "
            "opening a door” is a copy; “S/He wants to go to work” is an intent).",
        ),
        Rule("differ", "The concrete and the high-level intent must differ."),
    ),
    "Submit with the button or **Ctrl+Enter** once you have watched the video to its end; your text is saved as a "
    "draft while you type.",
)

PLANNING = Instructions(
    "planning",
    "Watch the first 20% of the video (or read the observed actions), read the intent, then mark the **one** "
    "future sequence that is plausible, or **None is plausible**.",
    (),
    (
        Rule("complete", "The plausible future is the one that completes the intent from what was observed."),
        Rule(
            "order",
            "Its actions must be able to happen in that order: an action can only use what earlier actions made "
            "available (a book is taken before it is opened).",
        ),
        Rule("none", "When no candidate serves the intent, choose **None is plausible**."),
    ),
)

VQA = Instructions(
    "vqa",
    "Look at the image and answer the question. The key is shown after you submit.",
    (
        "**Single choice**: tick exactly one option.",
        "**Indefinite choice**: tick every correct option (one or more).",
    ),
    (
        Rule("indefinite", "An indefinite-choice question may have several right options: tick all of them."),
        Rule("look", "Answer from what the image shows, for the thing the question names."),
        Rule("count", "When the question asks how many, count exactly what it names."),
    ),
)

INSTRUCTIONS: dict[str, Instructions] = {i.kind: i for i in (INTENTS, PLANNING, VQA)}


def inline_html(text: str) -> str:
    """One rule's Markdown as inline HTML (raw HTML escaped), for the mistakes shown between tries.

    >>> inline_html("tick **every** <b>option</b>")
    'tick <strong>every</strong> &lt;b&gt;option&lt;/b&gt;'
    """
    return _renderer().renderInline(text)
