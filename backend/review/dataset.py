"""The final dataset: what the review accepted, exported as ViLPAct's CSV, JSONL or Parquet, with a card,
and imported back into a fresh database.

A sequence's final intents are those the review accepted (``final_intents``: the reviewer's selection
first, then the other reasonable annotations). A sequence without an accepted review keeps the intents
of the ViLPAct release, when it has them (``origin = 'released'``); discarded live rounds do not retract
those. The ``vilpact`` format has exactly two intent columns, as ``all_gt_seq.csv``: a sequence with one
final intent pair repeats it in ``intention_2``, and pairs beyond the second are only in JSONL/Parquet.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from backend.errors import ImportFileError, ValidationError
from backend.review.dashboard import per_round, totals
from backend.storage import Database, audit, utcnow
from backend.storage.jsonl import read_jsonl
from backend.vilpact.released_rows import released_rows, vilpact_csv
from backend.vilpact.sequences import insert_sequences

FORMATS = ("vilpact", "jsonl", "parquet")
DATA_FILES = {"vilpact": "all_gt_seq.csv", "jsonl": "dataset.jsonl", "parquet": "dataset.parquet"}
FPS = 24  # ViLPAct's frame numbers are at 24 fps
INTENT_KEYS = (
    "concrete_intent",
    "high_level_intent",
    "edited",
    "original_concrete_intent",
    "original_high_level_intent",
)


def split_observed(actions: list[dict], ob_end_frame: int | None) -> tuple[list[str], list[str]]:
    """Observed and future action names (ViLPAct section "Planning": an action is observed when it starts
    before the end of the initial state, frame ``ob_end_frame`` at 24 fps).

    >>> acts = [{"name": "a", "start": 0.0}, {"name": "b", "start": 6.5}, {"name": "c", "start": 7.0}]
    >>> split_observed(acts, 158)  # 158 / 24 = 6.58 s
    (['a', 'b'], ['c'])
    """
    if ob_end_frame is None:
        return [], [a["name"] for a in actions]
    end = ob_end_frame / FPS
    return [a["name"] for a in actions if a["start"] < end], [a["name"] for a in actions if a["start"] >= end]


def _intent(row: dict) -> dict[str, Any]:
    return {
        "concrete_intent": row["concrete_intent"],
        "high_level_intent": row["high_level_intent"],
        "edited": bool(row.get("edited", 0)),
        "original_concrete_intent": row.get("original_concrete_intent") or row["concrete_intent"],
        "original_high_level_intent": row.get("original_high_level_intent") or row["high_level_intent"],
    }


def final_records(database: Database, include_released: bool = True) -> list[dict[str, Any]]:
    """One record per sequence of the final dataset, in import order."""
    finals: dict[str, list[dict]] = {}
    for row in database.query("SELECT * FROM final_intents ORDER BY sequence_id, position"):
        finals.setdefault(row["sequence_id"], []).append(row)
    released: dict[str, list[dict]] = {}
    if include_released:
        for row in database.query(
            "SELECT * FROM annotations WHERE source = 'imported' ORDER BY sequence_id, annotator, id"
        ):
            released.setdefault(row["sequence_id"], []).append(row)
    records = []
    for seq in database.query("SELECT * FROM sequences ORDER BY rowid"):
        rows = finals.get(seq["id"]) or released.get(seq["id"])
        if not rows:
            continue
        actions = json.loads(seq["actions"])
        observed, future = split_observed(actions, seq["ob_end_frame"])
        records.append(
            {
                "id": seq["id"],
                "video_id": seq["video_id"],
                "source": seq["source"],
                "split": seq["split"],
                "scene": seq["scene"],
                "actions": actions,
                "act_seq_start": seq["act_seq_start"],
                "act_seq_end": seq["act_seq_end"],
                "ob_start_frame": seq["ob_start_frame"],
                "ob_end_frame": seq["ob_end_frame"],
                "ob_act_seq": observed,
                "future_act_seq": future,
                "origin": rows[0].get("origin", "released"),
                "review_round": rows[0].get("review_round"),
                "intents": [_intent(r) for r in rows],
            }
        )
    return records


def _number(value: float | None) -> str:
    """ViLPAct writes times without trailing zeros ("0", "15.7", "33").

    >>> _number(15.70), _number(33.0), _number(None)
    ('15.7', '33', '')
    """
    return "" if value is None else f"{value:g}"


def vilpact_row(record: dict[str, Any]) -> dict[str, str]:
    """A record as a row of ``all_gt_seq.csv`` (``intention_k`` = ``concrete;high-level``)."""
    pairs = [f"{i['concrete_intent']};{i['high_level_intent']}" for i in record["intents"]]
    pairs = (pairs + pairs)[:2] if len(pairs) == 1 else pairs[:2]
    return {
        "id": record["id"],
        "action_flow_id": ";".join(f"{a['class_id']} {a['start']:.2f} {a['end']:.2f}" for a in record["actions"]),
        "action_flow_des": ";".join(a["name"] for a in record["actions"]),
        "intention_1": pairs[0],
        "intention_2": pairs[1],
        "act_seq_start": _number(record["act_seq_start"]),
        "act_seq_end": _number(record["act_seq_end"]),
        "ob_start_frame": "" if record["ob_start_frame"] is None else str(record["ob_start_frame"]),
        "ob_end_frame": "" if record["ob_end_frame"] is None else str(record["ob_end_frame"]),
        "ob_act_seq": ";".join(record["ob_act_seq"]),
        "future_act_seq": ";".join(record["future_act_seq"]),
        "scene": record["scene"] or "",
    }


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_data(records: list[dict], fmt: str, path: Path, released: dict[str, str]) -> None:
    if fmt == "jsonl":
        _write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode())
    elif fmt == "vilpact":
        _write_atomic(path, vilpact_csv([vilpact_row(r) for r in records], released).encode())
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tmp = path.with_name(path.name + ".part")
        pq.write_table(pa.Table.from_pylist(records, schema=_parquet_schema()), tmp)
        os.replace(tmp, path)


def _parquet_schema() -> Any:
    import pyarrow as pa

    action = pa.struct(
        [("class_id", pa.string()), ("name", pa.string()), ("start", pa.float64()), ("end", pa.float64())]
    )
    intent = pa.struct(
        [
            ("concrete_intent", pa.string()),
            ("high_level_intent", pa.string()),
            ("edited", pa.bool_()),
            ("original_concrete_intent", pa.string()),
            ("original_high_level_intent", pa.string()),
        ]
    )
    return pa.schema(
        [
            ("id", pa.string()),
            ("video_id", pa.string()),
            ("source", pa.string()),
            ("split", pa.string()),
            ("scene", pa.string()),
            ("actions", pa.list_(action)),
            ("act_seq_start", pa.float64()),
            ("act_seq_end", pa.float64()),
            ("ob_start_frame", pa.int64()),
            ("ob_end_frame", pa.int64()),
            ("ob_act_seq", pa.list_(pa.string())),
            ("future_act_seq", pa.list_(pa.string())),
            ("origin", pa.string()),
            ("review_round", pa.int64()),
            ("intents", pa.list_(intent)),
        ]
    )


def export_dataset(
    database: Database, fmt: str, out_dir: Path | str, include_released: bool = True, actor: str = "cli"
) -> dict[str, Any]:
    """Write the final dataset in ``fmt`` and a dataset card ``README.md`` into ``out_dir``."""
    if fmt not in FORMATS:
        raise ValidationError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = final_records(database, include_released)
    path = out / DATA_FILES[fmt]
    _write_data(records, fmt, path, released_rows(database) if fmt == "vilpact" else {})
    from backend.review.card import dataset_card

    files = sorted(p.name for p in out.iterdir() if p.name in DATA_FILES.values())
    _write_atomic(out / "README.md", dataset_card(records, per_round(database), totals(database), files).encode())
    with database.write() as db:
        audit(db, actor, "dataset.export", str(out.resolve()), {"format": fmt, "sequences": len(records)})
    return {
        "path": str(path),
        "card": str(out / "README.md"),
        "format": fmt,
        "sequences": len(records),
        "intents": sum(len(r["intents"]) for r in records),
    }


def _read_records(folder: Path) -> tuple[Path, list[tuple[int, Any]]]:
    jsonl, parquet = folder / DATA_FILES["jsonl"], folder / DATA_FILES["parquet"]
    if jsonl.is_file():
        return jsonl, read_jsonl(jsonl)
    if parquet.is_file():
        import pyarrow.parquet as pq

        return parquet, list(enumerate(pq.read_table(parquet).to_pylist(), start=1))
    raise ImportFileError(str(folder), None, f"no {DATA_FILES['jsonl']} or {DATA_FILES['parquet']} in this folder")


_REQUIRED = ("id", "video_id", "source", "actions", "origin", "intents")


def _validate(path: Path, line: int, record: dict) -> None:
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        raise ImportFileError(str(path), line, f"missing fields {', '.join(missing)}")
    if not record["intents"]:
        raise ImportFileError(str(path), line, f"sequence {record['id']!r} has no intents")
    for intent in record["intents"]:
        if (
            not str(intent.get("concrete_intent") or "").strip()
            or not str(intent.get("high_level_intent") or "").strip()
        ):
            raise ImportFileError(str(path), line, f"sequence {record['id']!r} has an empty intent")


def import_dataset(database: Database, folder: Path | str, actor: str = "cli") -> dict[str, Any]:
    """Load an exported dataset (JSONL, else Parquet) in one transaction; re-import replaces its final intents."""
    path, numbered = _read_records(Path(folder))
    for line, record in numbered:
        _validate(path, line, record)
    now = utcnow()
    with database.write() as db:
        for _line, r in numbered:
            insert_sequences(
                db.conn,
                [
                    {
                        "id": r["id"],
                        "video_id": r["video_id"],
                        "actions": json.dumps(r["actions"]),
                        **{
                            c: r.get(c)
                            for c in (
                                "scene",
                                "split",
                                "act_seq_start",
                                "act_seq_end",
                                "ob_start_frame",
                                "ob_end_frame",
                            )
                        },
                        "source": r["source"],
                        "imported_at": now,
                    }
                ],
            )
            db.conn.execute("DELETE FROM final_intents WHERE sequence_id = ?", (r["id"],))
            db.conn.executemany(
                """INSERT INTO final_intents (sequence_id, position, concrete_intent, high_level_intent, edited,
                       original_concrete_intent, original_high_level_intent, origin, review_round, decided_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [
                    (
                        r["id"],
                        position,
                        i["concrete_intent"],
                        i["high_level_intent"],
                        int(bool(i.get("edited"))),
                        i.get("original_concrete_intent"),
                        i.get("original_high_level_intent"),
                        r["origin"],
                        r.get("review_round"),
                        now,
                    )
                    for position, i in enumerate(r["intents"], start=1)
                ],
            )
        audit(db, actor, "dataset.import", str(path.resolve()), {"sequences": len(numbered)})
    return {"path": str(path), "sequences": len(numbered), "intents": sum(len(r["intents"]) for _line, r in numbered)}
