"""Prompts for whole test sets (``python -m backend icl build``) and for one case (the browser tab).

One output line per test case: ``{"context", "ground_truth", "category", "selected", "stats", "line"}`` where
``context`` is the whole prompt (examples, then the test input and an open ``output:``), ``selected`` the
examples' 0-based line numbers in the bank file in prompt order, ``stats`` the case's Table 2 columns and
``line`` the test case's 0-based line in its file. Under ``target_only`` matching (appendix C.6) only the test
cases whose sentence rule no chosen example covers are written; the summary counts those kept.
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
from backend.icl.matching import covered_sentence_rules, filters_test_cases
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
    matching: str = "both"
    covered_sentence_rules: list[str] = field(default_factory=list)

    @property
    def kept(self) -> bool:
        """False when the variant filters this test case out (appendix C.6: its sentence rule is covered)."""
        return not (filters_test_cases(self.matching) and self.covered_sentence_rules)

    def as_record(self, line: int | None = None) -> dict[str, Any]:
        record: dict[str, Any] = {
            "context": self.prompt,
            "ground_truth": self.ground_truth,
            "category": self.test.category,
            "selected": [c.example_id for c in self.chosen],
            "stats": self.stats,
        }
        if line is not None:
            record["line"] = line
        return record


def spec_matching(spec: SelectorSpec) -> str:
    """The selection's equation-2 variant (``both`` for baselines and unedited presets)."""
    return spec.weights.matching if spec.weights is not None else "both"


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
    chosen_examples = [examples[c.example_id] for c in ordered]
    stats = case_stats(test, chosen_examples)
    matching = spec_matching(selector.spec)
    return CaseResult(
        test,
        ordered,
        format_prompt(pairs, test.input),
        truth,
        stats,
        mapping,
        matching,
        covered_sentence_rules(test, chosen_examples),
    )


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
    tests = [(line, t) for path in test_paths for line, t in enumerate(read_examples(path))]
    loaded = time.perf_counter()
    selector = make_selector(index, spec, cache_dir)
    selector.prepare_queries([t.input for _, t in tests])
    rows = []
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for line, test in tests:
            result = build_case(selector, test, n, order, seed, fictional)
            if not result.kept:
                continue
            rows.append((test.category, result.stats))
            handle.write(json.dumps(result.as_record(line), ensure_ascii=False) + "\n")
    tmp.replace(out)
    finished = time.perf_counter()
    table = aggregate(rows)
    return {
        "out": str(out),
        "setting": spec.name,
        "matching": spec_matching(spec),
        "test_cases": len(tests),
        "test_cases_kept": len(rows),
        "bank": len(index),
        "seconds_loading": round(loaded - started, 2),
        "seconds_selecting": round(finished - loaded, 2),
        "short_cases": sum(1 for _, s in rows if s["examples"] < n),
        "table": table,
        "markdown": markdown_table(table, kept=(len(rows), len(tests)), matching=spec_matching(spec)),
    }
