"""The VQA leaderboard's per-category chart: grouped (side-by-side) bars on a 0-100% axis.

Gradio's BarPlot stacks the series of one x value (human 50% + random 75% read as 125% on a % axis), and
has no grouped mode; this chart is plain HTML: one group per category, one bar per run, each bar's width
its score in percent of the full track.
"""

from __future__ import annotations

from typing import Any

from backend.vqa.categories import CATEGORIES, SHORT_NAMES
from components.common import esc

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#9d755d", "#bab0ac")
TRACK = "display:inline-block;flex:1;height:0.9em;background:#eeeeee;position:relative"


def _bar(run: str, colour: str, score: float) -> str:
    width = min(max(score, 0.0), 100.0)
    return (
        f'<div class="vqa-bar" data-run="{esc(run)}" data-score="{score:.1f}" '
        'style="display:flex;align-items:center;gap:0.5em;margin:1px 0">'
        f'<span style="width:11em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap">{esc(run)}</span>'
        f'<span style="{TRACK}"><span style="position:absolute;left:0;top:0;bottom:0;width:{width:.1f}%;'
        f'background:{colour}"></span></span><span style="width:4em;text-align:right">{score:.1f}%</span></div>'
    )


def category_chart_html(rows: list[dict[str, Any]]) -> str:
    """One group per category (its runs side by side), bars scaled to 0-100%; empty when no run has scores."""
    runs = [row["name"] for row in rows]
    colours = {run: PALETTE[i % len(PALETTE)] for i, run in enumerate(runs)}
    groups = []
    for category in CATEGORIES:
        short = SHORT_NAMES[category]
        bars = [
            _bar(row["name"], colours[row["name"]], float(row[short])) for row in rows if row.get(short) is not None
        ]
        if bars:
            groups.append(
                f'<div class="vqa-group" data-category="{esc(short)}" style="margin:0.4em 0">'
                f'<strong title="{esc(category)}">{esc(category)}</strong>{"".join(bars)}</div>'
            )
    if not groups:
        return "<p>No scores yet: answer or run models on verified items.</p>"
    axis = (
        '<div style="display:flex;gap:0.5em"><span style="width:11em"></span><span style="flex:1;display:flex;'
        'justify-content:space-between"><span>0%</span><span>25%</span><span>50%</span><span>75%</span>'
        '<span>100%</span></span><span style="width:4em"></span></div>'
    )
    return (
        '<figure id="vqa-category-figure" style="margin:0">'
        "<figcaption><strong>Per-category score (%)</strong>: each category's runs side by side, "
        f"axis 0–100%.</figcaption>{''.join(groups)}{axis}</figure>"
    )
