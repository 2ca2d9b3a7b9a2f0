"""Every relative link in README.md and docs/ points at a file (and heading) that exists (issue 31 §2)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCED = re.compile(r"```.*?```", re.S)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading.

    >>> anchor("Run a crowd campaign"), anchor("Speed: figures (this machine)"), anchor("Space: `SPACE_ID`, `/data`")
    ('run-a-crowd-campaign', 'speed-figures-this-machine', 'space-space_id-data')
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of ``page``'s headings (not of lines in fenced code; inline code in a heading keeps its text)."""
    headings = re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", FENCED.sub("", page.read_text(encoding="utf-8")), re.M)
    return {anchor(h) for h in headings}


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def broken_links(page: Path) -> list[str]:
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("//"):
            continue  # http(s):, mailto: ...: not ours to check offline
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(
                f"{target} (no file {resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved})"
            )
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target} (no heading #{fragment} in {resolved.relative_to(ROOT)})")
    return broken


def test_every_relative_link_resolves():
    broken = {str(page.relative_to(ROOT)): links for page in pages() if (links := broken_links(page))}
    assert not broken, broken
