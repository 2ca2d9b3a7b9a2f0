"""What a report is made of: named tables (rows of plain values) and charts, shared by every export."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.reporting.plots import Chart


@dataclass(frozen=True)
class Table:
    """A titled table: ``rows`` are dicts with the same keys in the same order (the columns)."""

    name: str  # a file-name-safe identifier: planning, vqa_categories, ...
    title: str
    rows: list[dict[str, Any]]

    @property
    def columns(self) -> list[str]:
        return list(self.rows[0]) if self.rows else []


@dataclass(frozen=True)
class Report:
    """Tables and charts, and the raw results they were read from (``sections``, the JSON export)."""

    title: str
    tables: tuple[Table, ...]
    charts: Mapping[str, Chart] = field(default_factory=dict)
    sections: Mapping[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)


def pct(value: float | None, digits: int = 2) -> float | None:
    """A share in [0, 1] as a percentage, two decimals as the papers print them (MMComposition's 90.31; None
    stays None).

    >>> pct(0.12345), pct(None)
    (12.35, None)
    """
    return None if value is None else round(100 * value, digits)
