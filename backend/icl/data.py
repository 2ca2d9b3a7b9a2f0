"""Example banks and test cases as JSONL: ``{"input", "output", "category"?, "input_tree"?, "output_tree"?}``.

Reading validates every line first and raises :class:`ImportFileError` naming the first bad line, so a bad
file imports nothing. ``Form one: `` (the probing-task prefix of ../shared/data/cogs) is stripped from
inputs. Trees come from the data when given (nested ``[label, child, ...]`` lists), otherwise from the COGS
parsers; a line neither can parse is reported with its line number, never dropped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.errors import ImportFileError
from backend.icl.grammar import parse_sentence
from backend.icl.trees import Tree, TreeError, TreeFeatures, parse_logical_form, tree_features, tree_from_json
from backend.storage.jsonl import read_jsonl

PREFIX = "Form one: "


@dataclass(frozen=True)
class IclExample:
    """One input/output pair with its source tree X and target tree Y (equation 2)."""

    input: str
    output: str
    category: str = ""
    source: TreeFeatures = field(repr=False, default=None)  # type: ignore[assignment]
    target: TreeFeatures = field(repr=False, default=None)  # type: ignore[assignment]
    input_tree: Any = field(repr=False, default=None)
    output_tree: Any = field(repr=False, default=None)

    @property
    def depth(self) -> int:
        return max(self.source.depth, self.target.depth)

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"input": self.input, "output": self.output}
        if self.category:
            record["category"] = self.category
        if self.input_tree is not None:
            record["input_tree"] = self.input_tree
        if self.output_tree is not None:
            record["output_tree"] = self.output_tree
        return record


def category_from_filename(path: Path) -> str:
    """``test_phrareco_like.jsonl`` -> ``phrareco``: the category of lines that carry none.

    >>> category_from_filename(Path("data/cogs/test_longchain_like.jsonl"))
    'longchain'
    """
    stem = path.name.split(".")[0]
    return stem.removeprefix("test_").removesuffix("_like")


def make_example(record: dict[str, Any], default_category: str = "") -> IclExample:
    """Validate one record and build its trees; raises ``ValueError``/``TreeError`` with the problem."""
    if not isinstance(record, dict):
        raise ValueError("each line must be a JSON object")
    for key in ("input", "output"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise ValueError(f"{key!r} must be a non-empty string")
    unknown = set(record) - {"input", "output", "category", "input_tree", "output_tree"}
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
    category = record.get("category", default_category) or ""
    if not isinstance(category, str):
        raise ValueError("'category' must be a string")
    text_in = record["input"].strip().removeprefix(PREFIX).strip()
    text_out = record["output"].strip()
    x = _tree(record.get("input_tree"), lambda: parse_sentence(text_in), "input")
    y = _tree(record.get("output_tree"), lambda: parse_logical_form(text_out), "output")
    return IclExample(
        input=text_in,
        output=text_out,
        category=category.strip(),
        source=tree_features(x),
        target=tree_features(y),
        input_tree=record.get("input_tree"),
        output_tree=record.get("output_tree"),
    )


def _tree(supplied: Any, parse: Callable[[], Tree], side: str) -> Tree:
    try:
        return tree_from_json(supplied) if supplied is not None else parse()
    except TreeError as exc:
        raise TreeError(f"cannot parse the {side}: {exc}") from exc


def read_examples(path: Path, default_category: str | None = None) -> list[IclExample]:
    """All lines of a JSONL file, validated; the first bad line raises :class:`ImportFileError`.

    Parsing the trees is most of the cost (the demo bank: ~0.35 s on 2 cores, at every start of an app on a
    fresh data folder), so a file read before is not parsed again while its size and modification time are
    unchanged: the examples are frozen, and each call gets a list of its own."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return _parse_examples(path, default_category)  # read_jsonl names the missing or unreadable file
    return list(_parsed_examples(str(path), default_category, stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _parsed_examples(path: str, default_category: str | None, _size: int, _mtime_ns: int) -> tuple[IclExample, ...]:
    return tuple(_parse_examples(Path(path), default_category))


def _parse_examples(path: Path, default_category: str | None) -> list[IclExample]:
    records = read_jsonl(path)  # missing file, non-UTF-8 bytes and bad JSON named with their line
    category = category_from_filename(path) if default_category is None else default_category
    examples = []
    for number, record in records:
        try:
            examples.append(make_example(record, category))
        except (ValueError, TypeError, TreeError) as exc:
            raise ImportFileError(str(path), number, str(exc)) from exc
    if not examples:
        raise ImportFileError(str(path), None, "no examples in the file")
    return examples


def write_examples(examples: list[IclExample], path: Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for example in examples:
            handle.write(json.dumps(example.as_record(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return len(examples)
