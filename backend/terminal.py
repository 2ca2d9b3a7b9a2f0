"""What run commands show in a terminal: a progress bar on standard error and a results table on standard
output, or JSON for scripts.

Run commands take ``--json`` and ``--table``; with neither, a terminal gets the table and a pipe or file gets
JSON (so ``compstudio eval ... | jq`` and existing scripts keep working). Other commands print JSON.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

Progress = Callable[[int, int], None]


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="print JSON (the default when output is not a terminal)")
    group.add_argument("--table", action="store_true", help="print a results table (the default on a terminal)")


def wants_table(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    if getattr(args, "json", False):
        return False
    if getattr(args, "table", False):
        return True
    return bool((stream or sys.stdout).isatty())


def show(args: argparse.Namespace, result: Any, render: Callable[[Any], str]) -> Any:
    """Print ``render(result)`` when a table is wanted (and return None); else return ``result`` for JSON."""
    if not wants_table(args):
        return result
    print(render(result))
    return None


@contextmanager
def progress_bar(label: str = "") -> Iterator[Progress]:
    """A tqdm bar on standard error (tqdm comes with transformers); yields ``update(done, total)``."""
    from tqdm import tqdm

    bar = tqdm(total=0, file=sys.stderr, unit="item", dynamic_ncols=True, desc=label or None)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value != int(value) or abs(value) < 1 else f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ")  # Markdown's escaped pipe: the text stays as is


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, title: str = "") -> str:
    """A Markdown table (readable as is in a terminal, pasteable into a README).

    >>> print(table([{"model": "a", "score": 0.5}, {"model": "bb", "score": 1.0}]))
    | model | score |
    |-------|-------|
    | a     | 0.5   |
    | bb    | 1     |
    """
    if not rows:
        return f"{title}\n(no rows)" if title else "(no rows)"
    names = list(columns or dict.fromkeys(k for row in rows for k in row))
    cells = [[_cell(row.get(name)) for name in names] for row in rows]
    widths = [max(len(name), *(len(r[i]) for r in cells)) for i, name in enumerate(names)]
    lines = [
        "| " + " | ".join(name.ljust(w) for name, w in zip(names, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
        *("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells),
    ]
    return "\n".join([title, *lines] if title else lines)


def pct(value: Any) -> str | None:
    """A rate as a percentage with one decimal.

    >>> pct(0.12345), pct(None)
    ('12.3%', None)
    """
    return None if value is None else f"{100 * float(value):.1f}%"


def run_row(summary: Mapping[str, Any]) -> dict[str, Any]:
    """One line of a run summary: what was run, the score and how answers were read."""
    return {
        "benchmark": summary.get("benchmark"),
        "model": summary.get("model") or summary.get("run"),
        "status": summary.get("status"),
        "items": summary.get("items"),
        "metric": summary.get("metric", "score"),
        "score": summary.get("score"),
        "answered": pct(summary.get("answered_rate")),
        "refused": pct(summary.get("refusal_rate")),
        "unparsed": pct(summary.get("parse_failure_rate")),
        "errors": summary.get("errors"),
        "new": summary.get("newly_computed"),
        "stored": summary.get("from_store"),
        "seconds": summary.get("seconds"),
    }


def serving_line(serving: Mapping[str, Any] | None) -> str:
    """The serving report in one line (openai runs).

    >>> serving_line({"concurrency": {"adaptive": True, "start": 8, "settled": 12, "lowest": 4, "highest": 12},
    ...   "replicas": [{"url": "a", "taken_out": 1, "put_back": 1}, {"url": "b", "taken_out": 0, "put_back": 0}],
    ...   "throttled": 3, "failovers": 2})
    'serving: concurrency 8 -> settled 12 (adaptive, 4..12); 2 replicas (taken out 1, put back 1); throttled 3, failovers 2'
    """
    if not serving:
        return ""
    c = serving.get("concurrency") or {}
    how = f"adaptive, {c.get('lowest')}..{c.get('highest')}" if c.get("adaptive") else "fixed"
    replicas = serving.get("replicas") or []
    out = sum(r.get("taken_out", 0) for r in replicas)
    back = sum(r.get("put_back", 0) for r in replicas)
    return (
        f"serving: concurrency {c.get('start')} -> settled {c.get('settled')} ({how}); {len(replicas)} "
        f"replica{'s' if len(replicas) != 1 else ''} (taken out {out}, put back {back}); "
        f"throttled {serving.get('throttled', 0)}, failovers {serving.get('failovers', 0)}"
    )


def summary_table(summary: Mapping[str, Any]) -> str:
    """A run summary as a table, then its circular figures, categories, serving line and files."""
    parts = [table([run_row(summary)])]
    circular = summary.get("circular")
    if isinstance(circular, Mapping):
        keep = ("complete", "incomplete", "plain_accuracy", "circular_accuracy", "consistency_rate")
        parts.append(table([{k: circular.get(k) for k in keep if k in circular}], title="circular evaluation"))
    categories = summary.get("by_category") or summary.get("exact_match_by_category")
    if isinstance(categories, Mapping) and categories:
        rows = [
            {"category": k, **(v if isinstance(v, Mapping) else {"score": v})} for k, v in sorted(categories.items())
        ]
        parts.append(table(rows, title="by category"))
    line = serving_line(summary.get("serving"))
    if line:
        parts.append(line)
    for key in ("config", "out"):
        if summary.get(key):
            parts.append(f"{key}: {summary[key]}")
    return "\n\n".join(parts)


class _Renamed(argparse.Action):
    """An old flag name that still works: says on standard error which name to use, then appends as the new one."""

    def __call__(
        self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> None:
        print(f"note: {option_string} is now {self.metavar_new}", file=sys.stderr)
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(values)
        setattr(namespace, self.dest, items)

    metavar_new = ""


def add_pairs_flag(parser: argparse.ArgumentParser, name: str, help_text: str, dest: str = "option") -> None:
    """A repeatable ``--NAME KEY=VALUE`` flag stored in ``args.<dest>``, and the old ``--option`` beside it (hidden,
    with a note): ``--backend-option`` on ``models add`` and ``--benchmark-option`` on ``eval``, ``compare``,
    ``grid`` and ``samples`` used to share that one name for two different things."""
    parser.add_argument(f"--{name}", dest=dest, action="append", default=None, metavar="KEY=VALUE", help=help_text)
    renamed = type("Renamed", (_Renamed,), {"metavar_new": f"--{name}"})
    parser.add_argument("--option", dest=dest, action=renamed, help=argparse.SUPPRESS)
