"""Prompts for whole test sets (``python -m backend icl build``) and for one case (the browser tab).

One output line per test case: ``{"context", "ground_truth", "category", "selected", "stats"}`` where
``context`` is the whole prompt (examples, then the test input and an open ``output:``), ``selected`` the
examples' 0-based line numbers in the bank file in prompt order, and ``stats`` the case's Table 2 columns.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.icl.data import IclExample, read_examples
from backend.icl.index import BankIndex, build_index
from backend.icl.prompts import fictional_words, format_prompt, order_examples
from backend.icl.selection import Chosen
from backend.icl.selectors import Selector, SelectorSpec, make_selector
from backend.icl.stats import aggregate, case_stats, markdown_table


@dataclass
class CaseResult:
    test: IclExample
    chosen: list[Chosen]  # prompt order, first block first
    prompt: str
    ground_truth: str
    stats: dict[str, float]
    mapping: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return {
            "context": self.prompt,
            "ground_truth": self.ground_truth,
            "category": self.test.category,
            "selected": [c.example_id for c in self.chosen],
            "stats": self.stats,
        }


def read_bank_cached(path: Path, cache_dir: Path | None) -> list[IclExample]:
    """``read_examples`` for a bank, with the parsed examples pickled under ``cache_dir`` keyed by the file's
    SHA-256 (parsing 24,155 sentences takes ~9 s of CPU, loading the pickle ~1 s). The cache is ours: only
    files this function wrote are ever unpickled."""
    if cache_dir is None:
        return read_examples(path, default_category="")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:24]
    cached = cache_dir / f"parsed-{digest}.pickle"
    if cached.is_file():
        with cached.open("rb") as handle:
            return pickle.load(handle)
    examples = read_examples(path, default_category="")
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(cached.name + ".tmp")
    with tmp.open("wb") as handle:
        pickle.dump(examples, handle, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(cached)
    return examples


def build_case(
    selector: Selector,
    test: IclExample,
    n: int = 10,
    order: str = "structure_closer",
    seed: int = 0,
    fictional: bool = False,
) -> CaseResult:
    """Select, order and format one test case's prompt; with ``fictional`` apply appendix C.7."""
    examples = selector.index.examples
    ordered = order_examples(selector.select(test, n), order, seed)
    pairs = [(examples[c.example_id].input, examples[c.example_id].output) for c in ordered]
    truth, mapping = test.output, dict[str, str]()
    if fictional:
        outputs, mapping = fictional_words([y for _, y in pairs] + [test.output], seed)
        pairs = [(x, y) for (x, _), y in zip(pairs, outputs[:-1], strict=True)]
        truth = outputs[-1]
    stats = case_stats(test, [examples[c.example_id] for c in ordered])
    return CaseResult(test, ordered, format_prompt(pairs, test.input), truth, stats, mapping)


def build_file(
    bank_path: Path,
    test_paths: list[Path],
    spec: SelectorSpec,
    out: Path,
    n: int = 10,
    order: str = "structure_closer",
    seed: int = 0,
    fictional: bool = False,
    cache_dir: Path | None = None,
    index: BankIndex | None = None,
) -> dict[str, Any]:
    """Write one JSONL line per test case (in file order) and return timings and the Table 2 summary."""
    started = time.perf_counter()
    if index is None:
        index = build_index(read_bank_cached(Path(bank_path), cache_dir))
    tests = [t for path in test_paths for t in read_examples(path)]
    loaded = time.perf_counter()
    selector = make_selector(index, spec, cache_dir)
    selector.prepare_queries([t.input for t in tests])
    rows = []
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for test in tests:
            result = build_case(selector, test, n, order, seed, fictional)
            rows.append((test.category, result.stats))
            handle.write(json.dumps(result.as_record(), ensure_ascii=False) + "\n")
    tmp.replace(out)
    finished = time.perf_counter()
    table = aggregate(rows)
    return {
        "out": str(out),
        "setting": spec.name,
        "test_cases": len(tests),
        "bank": len(index),
        "seconds_loading": round(loaded - started, 2),
        "seconds_selecting": round(finished - loaded, 2),
        "short_cases": sum(1 for _, s in rows if s["examples"] < n),
        "table": table,
        "markdown": markdown_table(table),
    }
