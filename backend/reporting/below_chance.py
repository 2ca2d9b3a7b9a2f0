"""MMComposition appendix A.4 as charts (issue 18): the questions whose comprehensive performance value (CPV,
the mean score of the model runs) is below the random score of their category.

From :func:`backend.vqa.runs.low_cpv_analysis` (nothing is recomputed here):

* **option counts** (the paper's Figures 5 and 9): questions per number of options, all of them beside those
  below chance;
* **per category**: the model runs' mean score (mean CPV of the category's questions) against the random row
  (the category's exact expected random score), with how many of its questions are below chance.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from backend.reporting.plots import BarChart
from backend.reporting.tables import Report, Table, pct
from backend.vqa.categories import CATEGORIES, SHORT_NAMES


def option_count_table(analysis: Mapping[str, Any]) -> Table:
    """Questions per option count: all, below chance, and the share below chance."""
    counts = sorted(set(analysis["option_counts"]) | set(analysis["option_counts_below"]))
    rows = []
    for n in counts:
        total, below = analysis["option_counts"].get(n, 0), analysis["option_counts_below"].get(n, 0)
        rows.append(
            {
                "options": n,
                "questions": total,
                "below chance": below,
                "share below (%)": pct(below / total) if total else None,
            }
        )
    return Table(
        "vqa_option_counts", "Option counts: all questions and those below chance (appendix A.4, Figure 9)", rows
    )


def category_table(analysis: Mapping[str, Any]) -> Table:
    """Per category: questions, below chance, the runs' mean CPV and the random row (percent)."""
    by_category: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in analysis["per_question"]:
        by_category[row["category"]].append(row)
    below = {row["id"] for row in analysis["below_chance"]}
    rows = []
    for category in CATEGORIES:
        questions = by_category.get(category, [])
        if not questions:
            continue
        rows.append(
            {
                "category": SHORT_NAMES[category],
                "questions": len(questions),
                "below chance": sum(1 for q in questions if q["id"] in below),
                "models' mean CPV (%)": pct(sum(q["cpv"] for q in questions) / len(questions)),
                "random (%)": pct(questions[0]["category_random"]),
            }
        )
    return Table("vqa_below_chance", "Per category: the model runs' mean score (CPV) against the random row", rows)


def below_chance_charts(options: Table, categories: Table) -> dict[str, BarChart]:
    return {
        "vqa_option_counts": BarChart(
            "Option counts: all questions vs below chance (A.4)",
            [f"{row['options']} options" for row in options.rows],
            (
                ("all questions", [float(row["questions"]) for row in options.rows]),
                ("below chance", [float(row["below chance"]) for row in options.rows]),
            ),
            y_max=float(max((row["questions"] for row in options.rows), default=1) or 1),
            y_label="questions",
        ),
        "vqa_below_chance": BarChart(
            "Per category: models' mean score (CPV) vs random (A.4)",
            [row["category"] for row in categories.rows],
            (
                ("models' mean CPV", [row["models' mean CPV (%)"] for row in categories.rows]),
                ("random", [row["random (%)"] for row in categories.rows]),
            ),
        ),
    }


def below_chance_report(analysis: Mapping[str, Any]) -> tuple[list[Table], dict[str, BarChart]]:
    """The A.4 tables (option counts, per category, the questions below chance) and their two charts."""
    options, categories = option_count_table(analysis), category_table(analysis)
    keep = ("id", "category", "options", "difficulty_level", "cpv", "category_random")
    questions = Table(
        "vqa_below_chance_questions",
        "Questions below chance (CPV under the category's random score)",
        [{k: row[k] for k in keep} for row in analysis["below_chance"]],
    )
    return [options, categories, questions], below_chance_charts(options, categories)


def below_chance_export(analysis: Mapping[str, Any]) -> Report:
    """The A.4 tables and charts as a report (:func:`backend.reporting.exports.write_report` writes CSV,
    Markdown, LaTeX, JSON, PNG and SVG)."""
    tables, charts = below_chance_report(analysis)
    summary = {k: v for k, v in analysis.items() if k != "per_question"}
    return Report(
        "Questions below chance (MMComposition appendix A.4)", tuple(tables), dict(charts), {"below_chance": summary}
    )
