"""Writing a :class:`~backend.reporting.tables.Report` to a folder: one CSV per table, the whole report as
Markdown, as LaTeX (booktabs) and as JSON, each chart as SVG and PNG, and a zip of all of it.

Layout of ``DIR``::

    report.json  report.md  report.tex  report.zip
    tables/<table>.csv
    plots/<chart>.svg  plots/<chart>.png

LaTeX tables use booktabs rules (``\\toprule``, ``\\midrule``, ``\\bottomrule``; add ``\\usepackage{booktabs}``).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from backend.reporting.plots import layout, to_png, to_svg
from backend.reporting.tables import Report, Table

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}  # fmt: skip


def cell(value: Any) -> str:
    """A value as printed in Markdown and LaTeX: empty for None, numbers as they are.

    >>> cell(None), cell(12.5), cell(3), cell("a")
    ('', '12.5', '3', 'a')
    """
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.2e}"
    return str(value)


def latex_escape(text: str) -> str:
    r"""
    >>> latex_escape("a_b & 50%")
    'a\\_b \\& 50\\%'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def markdown_table(table: Table) -> str:
    """A pipe table (``|`` in cells escaped), numbers right-aligned."""
    if not table.rows:
        return "_(nothing stored yet)_"
    columns = table.columns

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|").replace("\n", " ") for v in values) + " |"

    numeric = [all(isinstance(r[c], (int, float)) or r[c] is None for r in table.rows) for c in columns]
    rule = ["---:" if is_number else "---" for is_number in numeric]
    return "\n".join(
        [line(columns), "|" + "|".join(rule) + "|", *(line([cell(r[c]) for c in columns]) for r in table.rows)]
    )


def latex_table(table: Table) -> str:
    """A booktabs ``tabular`` in a ``table`` float, the title as caption."""
    columns = table.columns
    if not columns:
        return f"% {latex_escape(table.title)}: nothing stored yet\n"
    align = "".join(
        "r" if all(isinstance(r[c], (int, float)) or r[c] is None for r in table.rows) else "l" for c in columns
    )
    body = [" & ".join(latex_escape(cell(r[c])) for c in columns) + r" \\" for r in table.rows]
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(table.title)}}}",
            rf"\label{{tab:{table.name.replace('_', '-')}}}",
            rf"\begin{{tabular}}{{{align}}}",
            r"\toprule",
            " & ".join(latex_escape(c) for c in columns) + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )


def report_markdown(report: Report) -> str:
    parts = [f"# {report.title}", ""]
    for table in report.tables:
        parts += [f"## {table.title}", "", markdown_table(table), ""]
    return "\n".join(parts)


def report_latex(report: Report) -> str:
    head = f"% {latex_escape(report.title)}\n% needs \\usepackage{{booktabs}}\n"
    return head + "\n".join(latex_table(t) for t in report.tables)


def report_json(report: Report) -> dict[str, Any]:
    """The raw results (``sections``) and every table as rows."""
    return {
        "title": report.title,
        **report.sections,
        "tables": {t.name: {"title": t.title, "columns": t.columns, "rows": t.rows} for t in report.tables},
        "charts": sorted(report.charts),
    }


def write_csv(table: Table, path: Path) -> None:
    import pandas as pd

    pd.DataFrame(table.rows, columns=table.columns).to_csv(path, index=False)


def write_report(report: Report, out: Path | str) -> dict[str, Any]:
    """Write every export of ``report`` under ``out`` (created if needed; files there are overwritten).
    Returns the paths written, by kind, and the zip of all of them."""
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {"csv": [], "svg": [], "png": []}
    for table in report.tables:
        path = out / "tables" / f"{table.name}.csv"
        write_csv(table, path)
        written["csv"].append(path)
    for name, chart in report.charts.items():
        figure = layout(chart)
        (out / "plots" / f"{name}.svg").write_text(to_svg(figure), encoding="utf-8")
        (out / "plots" / f"{name}.png").write_bytes(to_png(figure))
        written["svg"].append(out / "plots" / f"{name}.svg")
        written["png"].append(out / "plots" / f"{name}.png")
    for kind, text in (("md", report_markdown(report)), ("tex", report_latex(report))):
        (out / f"report.{kind}").write_text(text, encoding="utf-8")
        written[kind] = out / f"report.{kind}"
    (out / "report.json").write_text(json.dumps(report_json(report), indent=2, default=str), encoding="utf-8")
    written["json"] = out / "report.json"
    files = [written["json"], written["md"], written["tex"], *written["csv"], *written["svg"], *written["png"]]
    with zipfile.ZipFile(out / "report.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(out).as_posix())
    written["zip"] = out / "report.zip"
    return {k: [str(p) for p in v] if isinstance(v, list) else str(v) for k, v in written.items()}
