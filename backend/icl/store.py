"""Example banks and test sets in SQLite: import (validated, one transaction), export, list, load.

The CLI is trusted; functions the browser reaches take the caller's user name and check the role.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from backend.accounts.auth import require_role
from backend.errors import NotFound, ValidationError
from backend.icl.data import IclExample, make_example, read_examples, write_examples
from backend.storage.db import Database, audit, utcnow

KINDS = ("bank", "tests")


def _fingerprint(examples: list[IclExample]) -> str:
    digest = hashlib.sha256()
    for example in examples:
        digest.update(f"{example.input}\t{example.output}\t{example.category}\n".encode())
    return digest.hexdigest()[:16]


def import_set(
    database: Database, actor: str, path: Path, name: str, kind: str, category: str | None = None, replace: bool = False
) -> dict[str, Any]:
    """Validate every line of ``path`` (ImportFileError on the first bad one), then store it in one transaction.

    ``category`` overrides the default category of lines without one (tests: derived from the file name).
    """
    if kind not in KINDS:
        raise ValidationError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if not name.strip():
        raise ValidationError("a set needs a name")
    default = category if category is not None else (None if kind == "tests" else "")
    examples = read_examples(Path(path), default_category=default)
    with database.write() as db:
        exists = db.conn.execute("SELECT 1 FROM icl_sets WHERE name = ?", (name,)).fetchone()
        if exists and not replace:
            raise ValidationError(f"a set named {name!r} exists; choose another name or replace it")
        db.conn.execute("DELETE FROM icl_items WHERE set_name = ?", (name,))
        db.conn.execute("DELETE FROM icl_sets WHERE name = ?", (name,))
        db.conn.execute(
            "INSERT INTO icl_sets (name, kind, source, items, fingerprint, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, kind, str(path), len(examples), _fingerprint(examples), actor, utcnow()),
        )
        db.conn.executemany(
            "INSERT INTO icl_items (set_name, line, input, output, category, input_tree, output_tree) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    name,
                    line,
                    e.input,
                    e.output,
                    e.category,
                    None if e.input_tree is None else json.dumps(e.input_tree),
                    None if e.output_tree is None else json.dumps(e.output_tree),
                )
                for line, e in enumerate(examples)
            ],
        )
        audit(db, actor, "icl.import", name, {"kind": kind, "items": len(examples), "source": str(path)})
    return {"name": name, "kind": kind, "items": len(examples)}


def list_sets(database: Database, username: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """Stored sets, newest first. ``username`` (from the browser) must be signed in."""
    if username is not None:
        require_role(database, username, "annotator")
    sql = "SELECT name, kind, items, source, fingerprint, created_by, created_at FROM icl_sets"
    params: tuple = ()
    if kind is not None:
        sql += " WHERE kind = ?"
        params = (kind,)
    return database.query(sql + " ORDER BY created_at DESC, name", params)


def set_info(database: Database, name: str) -> dict[str, Any]:
    row = database.query_one("SELECT * FROM icl_sets WHERE name = ?", (name,))
    if row is None:
        raise NotFound(f"no example set named {name!r}; import one with `python -m backend import icl`")
    return row


def load_set(database: Database, name: str) -> list[IclExample]:
    """The set's examples in line order, trees rebuilt (supplied trees kept)."""
    set_info(database, name)
    rows = database.query(
        "SELECT input, output, category, input_tree, output_tree FROM icl_items WHERE set_name = ? ORDER BY line",
        (name,),
    )
    examples = []
    for row in rows:
        record = {"input": row["input"], "output": row["output"], "category": row["category"]}
        for key in ("input_tree", "output_tree"):
            if row[key] is not None:
                record[key] = json.loads(row[key])
        examples.append(make_example(record))
    return examples


def export_set(database: Database, name: str, out: Path) -> dict[str, Any]:
    """Write the set back as JSONL (the import format)."""
    count = write_examples(load_set(database, name), Path(out))
    return {"name": name, "items": count, "out": str(out)}


def delete_set(database: Database, actor: str, name: str) -> None:
    require_role(database, actor, "admin")
    set_info(database, name)
    with database.write() as db:
        db.conn.execute("DELETE FROM icl_items WHERE set_name = ?", (name,))
        db.conn.execute("DELETE FROM icl_sets WHERE name = ?", (name,))
        audit(db, actor, "icl.delete", name)
