"""Reading JSON Lines the way every importer here needs it: line numbers kept, each failure named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.errors import ImportFileError


def read_jsonl(path: Path | str) -> list[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of ``path``.

    Raises ``ImportFileError`` naming the file and line for a missing file, non-UTF-8 bytes or bad JSON.
    """
    path = Path(path)
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise ImportFileError(str(path), bad_line, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ImportFileError(str(path), number, f"not valid JSON ({exc.msg})") from None
    return records
