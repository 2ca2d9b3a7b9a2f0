from __future__ import annotations

import pytest

from backend.errors import ImportFileError
from backend.storage.jsonl import read_jsonl


def test_lines_keep_their_numbers_and_failures_are_named(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n[2]\n')
    assert read_jsonl(path) == [(1, {"a": 1}), (3, [2])]
    path.write_text('{"a": 1}\n{oops\n')
    with pytest.raises(ImportFileError, match=r"x.jsonl, line 2: not valid JSON"):
        read_jsonl(path)
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(ImportFileError, match=r"line 2: not UTF-8 text \(byte 0xff\)"):
        read_jsonl(path)
    with pytest.raises(ImportFileError, match="file not found"):
        read_jsonl(tmp_path / "missing.jsonl")
