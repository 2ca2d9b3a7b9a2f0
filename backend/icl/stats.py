"""Table 2 statistics (CoFe section 4.1): coverage of the test case's T_L, T_N, T_S^1 and T_S^>1 by the
selected examples, and lengths in whitespace tokens.

Coverage of a set F(T) is |F(T) ∩ ∪_{c∈C} F(T_c)| / |F(T)| over both sides (keys carry their side); a test
case with an empty F(T) does not enter that column's average.
"""

from __future__ import annotations

import math
from collections import defaultdict

from backend.icl.data import IclExample
from backend.icl.index import side_keys

COLUMNS = ("T_L", "T_N", "T_S1", "T_S2")
_KINDS = {"T_L": "P", "T_N": "N", "T_S1": "S1", "T_S2": "S2"}


def case_stats(test: IclExample, selected: list[IclExample]) -> dict[str, float]:
    """Coverage and lengths for one test case.

    >>> from backend.icl.data import make_example
    >>> test = make_example({"input": "Emma ate .", "output": "EAT ( EMMA , NONE , NONE )"})
    >>> ex = make_example({"input": "Liam ate .", "output": "EAT ( LIAM , NONE , NONE )"})
    >>> s = case_stats(test, [ex])
    >>> s["T_L"], s["T_N"], s["context_length"]
    (0.6, 1.0, 11)

    T_L: the test has 5 primitives (Emma, ate | EAT, EMMA, NONE); the example covers ate, EAT and NONE.
    """
    result: dict[str, float] = {}
    for column, kind in _KINDS.items():
        wanted = side_keys(test.source, test.target, kind)
        have: set[str] = set()
        for example in selected:
            have |= side_keys(example.source, example.target, kind)
        result[column] = len(wanted & have) / len(wanted) if wanted else math.nan
    result["context_length"] = sum(len(e.input.split()) + len(e.output.split()) for e in selected)
    result["input_length"] = len(test.input.split())
    result["output_length"] = len(test.output.split())
    result["examples"] = len(selected)
    return result


def aggregate(rows: list[tuple[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean of each statistic per category and over all test cases (key ``all``), with ``instances``."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for category, stats in rows:
        groups[category or "-"].append(stats)
        groups["all"].append(stats)
    table = {}
    for category, items in groups.items():
        summary: dict[str, float] = {"instances": len(items)}
        for key in (*COLUMNS, "context_length", "input_length", "output_length", "examples"):
            values = [s[key] for s in items if not math.isnan(s[key])]
            summary[key] = sum(values) / len(values) if values else math.nan
        table[category] = summary
    return table


def markdown_table(
    table: dict[str, dict[str, float]], kept: tuple[int, int] | None = None, matching: str = "both"
) -> str:
    """Table 2's layout; with ``kept`` = (kept, total) a first line names the matching variant and how many test
    cases it kept (appendix C.6 keeps 1,037 of 4,785)."""
    lines = []
    if kept is not None:
        lines += [f"matching: {matching} · test cases kept: {kept[0]:,} of {kept[1]:,}", ""]
    lines += [
        "| test cases | instances | T_L | T_N | T_S^1 | T_S^>1 | context | case input | case output |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    order = ["all", *sorted(k for k in table if k != "all")] if table else []
    for category in order:
        row = table[category]
        cells = [f"{100 * row[c]:.1f}%" for c in COLUMNS]
        lengths = [f"{row[k]:.1f}" for k in ("context_length", "input_length", "output_length")]
        lines.append(f"| {category} | {int(row['instances']):,} | {' | '.join(cells)} | {' | '.join(lengths)} |")
    return "\n".join(lines)
