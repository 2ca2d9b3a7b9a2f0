"""Released rows of ``all_gt_seq.csv`` kept as the file has them, so an export round-trips exactly.

The import keeps each released row's raw text (line end included) in ``vilpact_released_rows``. The
``vilpact`` export (:func:`backend.review.dataset.export_dataset`) then writes, for every sequence:

* the raw row, byte for byte, when nothing it states has changed (``"33.0"`` stays ``"33.0"``, a trailing
  space stays);
* otherwise the new row, with the raw text kept in every column whose content did not change, so a diff
  against the release shows only the real changes.

"Changed" compares what a column states, not how it is written: times as numbers, intents as the two
stripped halves of ``concrete;high-level`` (the importer strips them), frames as integers. ``ob_act_seq``
and ``future_act_seq`` are derived from the actions and ``ob_end_frame`` (the release differs from the
paper's rule on 12 rows), so they keep their raw text while those stay the same.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping

from backend.storage import Database

SEQUENCE_COLUMNS = (
    "id",
    "action_flow_id",
    "action_flow_des",
    "intention_1",
    "intention_2",
    "act_seq_start",
    "act_seq_end",
    "ob_start_frame",
    "ob_end_frame",
    "ob_act_seq",
    "future_act_seq",
    "scene",
)
DERIVED = {"ob_act_seq", "future_act_seq"}  # follow from these:
DERIVED_FROM = ("action_flow_id", "action_flow_des", "ob_end_frame")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def physical_lines(text: str) -> list[str]:
    r"""The lines of ``text`` with their own line ends (``\r\n``, ``\n`` or ``\r``; the last may have none).

    >>> physical_lines("a,b\r\nc\n\nd")
    ['a,b\r\n', 'c\n', '\n', 'd']
    """
    return _LINE.findall(text)


def store_released_rows(conn: sqlite3.Connection, rows: Mapping[str, str | None]) -> None:
    """Keep (or, for ``None``, forget) the raw row of each sequence, inside the caller's write transaction."""
    conn.executemany(
        """INSERT INTO vilpact_released_rows (sequence_id, raw) VALUES (?, ?)
           ON CONFLICT (sequence_id) DO UPDATE SET raw = excluded.raw""",
        [(seq_id, raw) for seq_id, raw in rows.items() if raw is not None],
    )
    conn.executemany(
        "DELETE FROM vilpact_released_rows WHERE sequence_id = ?",
        [(seq_id,) for seq_id, raw in rows.items() if raw is None],
    )


def released_rows(database: Database) -> dict[str, str]:
    return {r["sequence_id"]: r["raw"] for r in database.query("SELECT * FROM vilpact_released_rows")}


def _actions(value: str) -> object:
    try:
        return tuple((p[0], float(p[1]), float(p[2])) for p in (item.split() for item in value.split(";")))
    except (IndexError, ValueError):
        return value


def _intent(value: str) -> object:
    concrete, _sep, high_level = value.partition(";")
    return concrete.strip(), high_level.strip()


def _number(value: str) -> object:
    try:
        return float(value)
    except ValueError:
        return value.strip()


_STATED: dict[str, Callable[[str], object]] = {
    "id": str.strip,
    "action_flow_id": _actions,
    "intention_1": _intent,
    "intention_2": _intent,
    "act_seq_start": _number,
    "act_seq_end": _number,
    "ob_start_frame": _number,
    "ob_end_frame": _number,
}


def changed_columns(new: Mapping[str, str], released: Mapping[str, str]) -> set[str]:
    """The columns whose content differs (spelling of numbers and spaces around intents aside).

    >>> old = dict.fromkeys(SEQUENCE_COLUMNS, "x") | {"act_seq_end": "33.0", "intention_1": "a ;b "}
    >>> sorted(changed_columns(old | {"act_seq_end": "33", "intention_1": "a;b"}, old))
    []
    >>> sorted(changed_columns(old | {"act_seq_end": "34", "ob_end_frame": "9"}, old))
    ['act_seq_end', 'ob_end_frame']
    >>> sorted(changed_columns(old | {"ob_end_frame": "9", "ob_act_seq": "y"}, old))
    ['ob_act_seq', 'ob_end_frame']
    """
    changed = {
        c
        for c in SEQUENCE_COLUMNS
        if c not in DERIVED and _STATED.get(c, str)(new[c]) != _STATED.get(c, str)(released[c])
    }
    if changed & set(DERIVED_FROM):
        changed |= {c for c in DERIVED if new[c] != released[c]}
    return changed


def _csv_line(values: Iterable[str], terminator: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator=terminator).writerow(list(values))
    return buffer.getvalue()


def _parse(raw: str) -> dict[str, str] | None:
    fields = next(csv.reader(io.StringIO(raw, newline="")), [])
    return dict(zip(SEQUENCE_COLUMNS, fields, strict=True)) if len(fields) == len(SEQUENCE_COLUMNS) else None


def line_end(raws: Iterable[str]) -> str:
    r"""The line end the release uses (that of its first row that has one), ``\n`` without a release."""
    for raw in raws:
        match = re.search(r"(\r\n|\r|\n)\Z", raw)
        if match:
            return match.group(1)
    return "\n"


def vilpact_csv(rows: list[dict[str, str]], released: Mapping[str, str]) -> str:
    """``all_gt_seq.csv`` text: unchanged released rows as they came, the others re-written (see module doc)."""
    terminator = line_end(released[r["id"]] for r in rows if r["id"] in released)
    pieces = [_csv_line(SEQUENCE_COLUMNS, terminator)]
    for row in rows:
        raw = released.get(row["id"])
        old = _parse(raw) if raw is not None else None
        if raw is None or old is None:
            pieces.append(_csv_line((row[c] for c in SEQUENCE_COLUMNS), terminator))
            continue
        changed = changed_columns(row, old)
        if not changed:
            pieces.append(raw if raw.endswith(("\n", "\r")) else raw + terminator)
        else:
            pieces.append(_csv_line((row[c] if c in changed else old[c] for c in SEQUENCE_COLUMNS), terminator))
    text = "".join(pieces)
    last = released.get(rows[-1]["id"]) if rows else None
    if last is not None and not last.endswith(("\n", "\r")) and text.endswith(last + terminator):
        text = text[: -len(terminator)]  # the release ended without a line end after this same row
    return text
