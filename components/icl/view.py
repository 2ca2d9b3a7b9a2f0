"""What the In-context examples tab shows: a chosen set's summary (coverage, aiming combination, what nothing
covers, the matching variant), the examples table's columns, the selectors' help, and a mistake answered in the
message line instead of raised (docs/decisions.md, "In-context tab: messages instead of raised errors"). Pure
functions: no events here."""

from __future__ import annotations

import html
import logging

import gradio as gr

from backend.errors import CompStudioError
from backend.icl import service
from backend.icl.matching import MATCHING_HELP
from backend.icl.selection import PRESET_HELP
from backend.icl.selectors import SETTINGS_HELP
from components.common import esc

ROW_COLUMNS = [
    "position",
    "line",
    "input",
    "output",
    "primitive_coverage",
    "structural_similarity",
    "new_primitives",
    "new_structures",
]
HELP = {**PRESET_HELP, **SETTINGS_HELP}
log = logging.getLogger("components.icl")


def not_done(message: gr.Markdown, exc: CompStudioError) -> dict:
    """A person's mistake answered in ``message``: the outputs they were looking at stay as they were, no status
    badge covers anything, and the server log gets one line, not a traceback."""
    log.info("in-context tab: %s", exc)
    return {message: f"**Not done:** {esc(exc)}"}


def _code(key: str) -> str:
    return f"<code>{html.escape(key)}</code>"


def case_markdown(view: service.CaseView, embedding_model: str | None = None) -> str:
    test, stats = view.result.test, view.result.stats
    aiming = ", ".join(_code(k) for k in view.aiming) or "none recognised for this category"
    missing_p = ", ".join(esc(k) for k in view.uncovered_primitives) or "none"
    lines = [
        f"**Input:** {esc(test.input)}  \n**Output:** {esc(test.output)}  \n**Category:** {esc(test.category) or '-'}",
        f"**Aiming combination (never in a chosen example):** {aiming}",
        f"**Coverage:** T_L {stats['T_L']:.0%} · T_N {stats['T_N']:.0%} · T_S^1 {stats['T_S1']:.0%} · "
        f"T_S^>1 {stats['T_S2']:.0%}",
        f"**Context length:** {int(stats['context_length'])} whitespace tokens (Table 2: the chosen examples' "
        "inputs and outputs)",
        f"**Primitives nothing covers:** {missing_p}",
        f"**Structures nothing covers ({len(view.uncovered_structures)}):** "
        + (", ".join(_code(k) for k in view.uncovered_structures[:30]) or "none")
        + (" ..." if len(view.uncovered_structures) > 30 else ""),
    ]
    return "\n\n".join([*lines, *_variant_lines(view, embedding_model)])


def _variant_lines(view: service.CaseView, embedding_model: str | None) -> list[str]:
    result, lines = view.result, []
    if result.matching != "both":
        rules = ", ".join(_code(k) for k in result.covered_sentence_rules)
        verdict = (
            f"**filtered out**: a chosen example covers its sentence rule {rules}"
            if not result.kept
            else "kept"
            if result.matching == "target_only"
            else "kept (only target_only filters)"
        )
        lines.append(
            f"**Matching:** {esc(result.matching)} ({esc(MATCHING_HELP[result.matching])}); this test case is {verdict}"
        )
    if embedding_model:
        lines.append(f"**Sentence embeddings:** {_code(embedding_model)}")
    return lines
