"""Import ViLPAct's released layout (github.com/terryyz/ViLPAct, folder Data/).

Reads, from ``DIR``:

* ``Charades_v1_classes.txt`` — the 157 action classes, ``cNNN name``;
* ``KB/action_class.csv`` — the knowledge base of classes (verb, object, STRIPS ``pre``/``post-Add``/
  ``post-Del``/``args``), optional;
* ``gt_act_seq/all_gt_seq.csv`` — the 2,912 action sequences with ``cNNN start end`` items and two
  crowd intents each (``intention_k`` = ``concrete;high-level``);
* ``dataset-split/{train,val,test}.csv`` — video ids per split, optional.

Everything is parsed and validated first; a malformed file raises ``ImportFileError`` naming the file,
the line and the problem, and nothing is written. Then one ``BEGIN IMMEDIATE`` transaction upserts it all,
so a re-import changes nothing that is already there (idempotent). Released intents become annotations
with ``source='imported'`` by the (disabled) accounts ``vilpact-crowd-1`` and ``vilpact-crowd-2``, kept
apart from live work: they never count towards the N live annotators of a sequence.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend import assignment
from backend.accounts import auth
from backend.accounts.auth import insert_user
from backend.errors import ImportFileError
from backend.import_paths import inside_import_dir
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vilpact.released_rows import SEQUENCE_COLUMNS, physical_lines, store_released_rows
from backend.vilpact.sequences import insert_sequences

if TYPE_CHECKING:
    import _csv

_CLASS_LINE = re.compile(r"^(c\d{3})\s+(\S.*)$")
_ITEM = re.compile(r"^(c\d{3}) (\S+) (\S+)$")
KB_COLUMNS = ("aid", "text", "verb", "obj", "action", "pre", "post-Add", "post-Del", "args")
IMPORTED_ANNOTATORS = ("vilpact-crowd-1", "vilpact-crowd-2")


@dataclass
class VilpactData:
    classes: dict[str, dict] = field(default_factory=dict)
    sequences: list[dict] = field(default_factory=list)
    intents: list[dict] = field(default_factory=list)
    splits: dict[str, str] = field(default_factory=dict)
    released_rows: dict[str, str | None] = field(default_factory=dict)  # id -> the row as the file has it


@dataclass(frozen=True)
class ImportReport:
    classes: int
    sequences: int
    imported_intents: int
    with_video: int
    split_counts: dict[str, int]
    added_to_pool: int

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def _read_text(path: Path) -> str:
    """The file as text; non-UTF-8 bytes are reported with their line number."""
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportFileError(str(path), line, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None


def _csv_rows(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    return [(line, row) for line, row, _raw in _csv_records(path, required)[1]]


def _csv_records(path: Path, required: tuple[str, ...]) -> tuple[list[str], list[tuple[int, dict, str]]]:
    """The header and each record as (line, fields, raw text): the raw text is the record exactly as the file
    has it, line end included, so an unchanged record can be written back byte for byte."""
    lines = physical_lines(_read_text(path))
    reader = csv.reader(iter(lines))
    try:
        return _checked_rows(path, reader, required, lines)
    except csv.Error as exc:  # a NUL byte, a field over the csv module's limit, an unclosed quote
        raise ImportFileError(str(path), reader.line_num or 1, f"not a readable CSV row ({exc})") from None


def _checked_rows(
    path: Path, reader: _csv.Reader, required: tuple[str, ...], lines: list[str]
) -> tuple[list[str], list[tuple[int, dict, str]]]:
    try:
        header = next(reader)
    except StopIteration:
        raise ImportFileError(str(path), 1, "the file is empty") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise ImportFileError(
            str(path), 1, f"wrong columns: missing {', '.join(missing)} (found {', '.join(header) or 'none'})"
        )
    rows = []
    consumed = reader.line_num
    for row in reader:
        line, raw = reader.line_num, "".join(lines[consumed : reader.line_num])
        consumed = reader.line_num
        if not row:
            continue
        if len(row) != len(header):
            raise ImportFileError(str(path), line, f"expected {len(header)} fields, found {len(row)} (truncated row?)")
        rows.append((line, dict(zip(header, row, strict=True)), raw))
    return header, rows


def _number(path: Path, line: int, column: str, value: str, kind: type = float) -> float:
    try:
        number = kind(float(value)) if kind is int else float(value)
    except ValueError:
        raise ImportFileError(str(path), line, f"{column} {value!r} is not a number") from None
    if number != number or number < 0:
        raise ImportFileError(str(path), line, f"{column} {value!r} must be a non-negative number")
    return number


def _read_classes(root: Path) -> dict[str, dict]:
    path = root / "Charades_v1_classes.txt"
    classes: dict[str, dict] = {}
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        match = _CLASS_LINE.match(line.strip())
        if not match:
            raise ImportFileError(str(path), number, f"expected 'cNNN name', found {line[:60]!r}")
        classes[match.group(1)] = {"id": match.group(1), "name": match.group(2).strip()}
    kb = root / "KB" / "action_class.csv"
    if kb.exists():
        for number, row in _csv_rows(kb, KB_COLUMNS):
            if row["aid"] not in classes:
                raise ImportFileError(str(kb), number, f"unknown action class id {row['aid']!r}")
            classes[row["aid"]].update(
                verb=row["verb"] or None,
                object=row["obj"] or None,
                strips_action=row["action"] or None,
                pre=row["pre"] or None,
                post_add=row["post-Add"] or None,
                post_del=row["post-Del"] or None,
                args=row["args"] or None,
                pre_acts=row.get("pre_acts") or None,
                nxt_acts=row.get("nxt_acts") or None,
            )
    return classes


def _parse_actions(path: Path, line: int, value: str, classes: dict[str, dict]) -> list[dict]:
    actions = []
    for item in value.split(";"):
        match = _ITEM.match(item.strip())
        if not match:
            raise ImportFileError(str(path), line, f"action item {item!r} is not 'cNNN start end'")
        class_id, start_text, end_text = match.groups()
        if class_id not in classes:
            raise ImportFileError(str(path), line, f"unknown action class id {class_id!r}")
        start = _number(path, line, "action start", start_text)
        end = _number(path, line, "action end", end_text)
        if end < start:
            raise ImportFileError(
                str(path), line, f"bad time: action {class_id} ends ({end}) before it starts ({start})"
            )
        actions.append({"class_id": class_id, "name": classes[class_id]["name"], "start": start, "end": end})
    return actions


def _read_sequences(root: Path, data: VilpactData) -> None:
    path = root / "gt_act_seq" / "all_gt_seq.csv"
    seen: set[str] = set()
    header, records = _csv_records(path, SEQUENCE_COLUMNS)
    for line, row, raw in records:
        seq_id = row["id"].strip()
        if not seq_id:
            raise ImportFileError(str(path), line, "empty id")
        if seq_id in seen:
            raise ImportFileError(str(path), line, f"duplicate id {seq_id!r}")
        seen.add(seq_id)
        # Kept only when the columns are in the export's order, so the raw row fits under the export's header.
        data.released_rows[seq_id] = raw if tuple(header) == SEQUENCE_COLUMNS else None
        actions = _parse_actions(path, line, row["action_flow_id"], data.classes)
        start = _number(path, line, "act_seq_start", row["act_seq_start"])
        end = _number(path, line, "act_seq_end", row["act_seq_end"])
        if end < start:
            raise ImportFileError(str(path), line, f"bad time: act_seq_end {end} is before act_seq_start {start}")
        data.sequences.append(
            {
                "id": seq_id,
                "video_id": seq_id,
                "actions": actions,
                "scene": row["scene"] or None,
                "act_seq_start": start,
                "act_seq_end": end,
                "ob_start_frame": int(_number(path, line, "ob_start_frame", row["ob_start_frame"])),
                "ob_end_frame": int(_number(path, line, "ob_end_frame", row["ob_end_frame"])),
            }
        )
        for number, column in enumerate(("intention_1", "intention_2"), start=1):
            concrete, sep, high_level = row[column].partition(";")
            if not sep or not concrete.strip() or not high_level.strip():
                raise ImportFileError(str(path), line, f"{column} {row[column]!r} is not 'concrete;high-level'")
            data.intents.append(
                {
                    "sequence_id": seq_id,
                    "annotator": IMPORTED_ANNOTATORS[number - 1],
                    "concrete_intent": concrete.strip(),
                    "high_level_intent": high_level.strip(),
                }
            )


def _read_splits(root: Path) -> dict[str, str]:
    splits: dict[str, str] = {}
    for split in ("train", "val", "test"):
        path = root / "dataset-split" / f"{split}.csv"
        if not path.exists():
            continue
        for _line, row in _csv_rows(path, ("video_id",)):
            splits[row["video_id"].strip()] = split
    return splits


def read_vilpact(root: Path | str) -> VilpactData:
    """Parse and validate the whole release without touching the database."""
    root = Path(root)
    if not root.is_dir():
        raise ImportFileError(str(root), None, "not a folder")
    data = VilpactData(classes=_read_classes(root))
    _read_sequences(root, data)
    data.splits = _read_splits(root)
    return data


def _video_for(videos: Path | None, video_id: str) -> str | None:
    if videos is None:
        return None
    path = videos / f"{video_id}.mp4"
    return str(path.resolve()) if path.is_file() else None


CLASS_COLUMNS = ("id", "name", "verb", "object", "strips_action", "pre", "post_add", "post_del", "args", "pre_acts",
                 "nxt_acts")  # fmt: skip


def _store_classes(conn: Any, classes: Iterable[dict[str, Any]]) -> None:
    """The action classes, inserted or updated in place (a re-import is idempotent)."""
    conn.executemany(
        """INSERT INTO action_classes (id, name, verb, object, strips_action, pre, post_add, post_del, args,
               pre_acts, nxt_acts)
           VALUES (:id, :name, :verb, :object, :strips_action, :pre, :post_add, :post_del, :args,
               :pre_acts, :nxt_acts)
           ON CONFLICT (id) DO UPDATE SET name = excluded.name, verb = excluded.verb, object = excluded.object,
               strips_action = excluded.strips_action, pre = excluded.pre, post_add = excluded.post_add,
               post_del = excluded.post_del, args = excluded.args, pre_acts = excluded.pre_acts,
               nxt_acts = excluded.nxt_acts""",
        [{key: cls.get(key) for key in CLASS_COLUMNS} for cls in classes],
    )


def import_vilpact(
    database: Database,
    root: Path | str,
    *,
    videos: Path | str | None = None,
    actor: str = "cli",
    add_to_pool: bool = True,
    annotators_per_sequence: int = 3,
) -> ImportReport:
    """Validate, then write everything in one transaction. Re-import is idempotent."""
    data = read_vilpact(root)
    video_dir = Path(videos) if videos else None
    if video_dir is not None and not video_dir.is_dir():
        raise ImportFileError(str(video_dir), None, "the video folder does not exist")
    now = utcnow()
    with database.write() as db:
        _store_classes(db.conn, data.classes.values())
        rows = []
        for seq in data.sequences:
            rows.append(
                {
                    **seq,
                    "actions": json.dumps(seq["actions"]),
                    "split": data.splits.get(seq["id"]),
                    "video_path": _video_for(video_dir, seq["video_id"]),
                    "source": "vilpact",
                    "imported_at": now,
                }
            )
        insert_sequences(db.conn, rows)
        store_released_rows(db.conn, data.released_rows)
        for name in IMPORTED_ANNOTATORS:
            insert_user(db.conn, name, "annotator", disabled=True, source="imported")
        db.conn.executemany(
            """INSERT INTO annotations (sequence_id, annotator, concrete_intent, high_level_intent, round, source,
                   submitted_at)
               VALUES (:sequence_id, :annotator, :concrete_intent, :high_level_intent, 1, 'imported', :now)
               ON CONFLICT (sequence_id, annotator, source) DO UPDATE SET
                   concrete_intent = excluded.concrete_intent, high_level_intent = excluded.high_level_intent""",
            [{**intent, "now": now} for intent in data.intents],
        )
        added = 0
        if add_to_pool:
            added = assignment.add_tasks(db, "intent", [s["id"] for s in data.sequences], annotators_per_sequence)
        report = ImportReport(
            classes=len(data.classes),
            sequences=len(data.sequences),
            imported_intents=len(data.intents),
            with_video=sum(1 for r in rows if r["video_path"]),
            split_counts={s: sum(1 for v in data.splits.values() if v == s) for s in ("train", "val", "test")},
            added_to_pool=added,
        )
        audit(db, actor, "import.vilpact", str(Path(root).resolve()), report.as_dict())
    return report


def import_release(
    database: Database, settings: Settings, username: str | None, root: str, videos: str | None = None
) -> dict[str, Any]:
    """An admin's import from the web app: the same import as the CLI's, behind the admin role, reading
    only below the import folder (setting ``import_dir``; backend/import_paths.py)."""
    admin = auth.require_role(database, username, "admin")
    report = import_vilpact(
        database,
        inside_import_dir(settings, root),
        videos=inside_import_dir(settings, videos) if videos else None,
        actor=admin.username,
        annotators_per_sequence=settings.annotators_per_sequence,
    )
    return report.as_dict()
