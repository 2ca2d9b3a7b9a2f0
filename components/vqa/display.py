"""How the VQA panels show an item: its image, its question with lettered options (the key ticked for those who
may see it), and the lettered choices of a checkbox group. Shared by the Answer, Author, Verify and disputes
panels."""

from __future__ import annotations

from typing import Any

from backend.context import AppContext
from backend.vqa.images import media_path
from backend.vqa.items import LETTERS
from components.common import esc


def item_image(ctx: AppContext, view: dict[str, Any]) -> str:
    """The picture a person judges: the item's composite, or its only image."""
    return str(media_path(ctx.settings, view.get("composite") or view["images"][0]))


def options_lines(text: str) -> list[str]:
    """Options typed one per line, blank lines dropped.

    >>> options_lines(" Left \\n\\nRight\\n")
    ['Left', 'Right']
    """
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


def letter_choices(options: list[str]) -> list[tuple[str, str]]:
    """A checkbox group's choices: each option shown with its letter, its value the letter.

    >>> letter_choices(["Left", "Right"])
    [('A. Left', 'A'), ('B. Right', 'B')]
    """
    return [(f"{LETTERS[i]}. {text}", LETTERS[i]) for i, text in enumerate(options[: len(LETTERS)])]


def question_md(view: dict[str, Any], key: list[str] | None = None) -> str:
    """An item's category, kind, question and lettered options as Markdown; the letters of ``key`` ticked."""
    kind = "single choice" if view["choice_type"] == "single" else "indefinite choice (one or more)"
    lines = [f"**{esc(view['category'])}** · {kind} · item {esc(view['id'])}", "", f"### {esc(view['question'])}"]
    options = (
        view["options"] if isinstance(view["options"], dict) else dict(zip(LETTERS, view["options"], strict=False))
    )
    for letter, text in options.items():
        mark = " ✅" if key and letter in key else ""
        lines.append(f"- **{letter}.** {esc(text)}{mark}")
    return "\n".join(lines)
