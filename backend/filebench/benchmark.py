"""Benchmarks imported from files, as registered benchmarks (:class:`~backend.inference.benchmarks.BenchmarkSpec`).

Each ``<data_dir>/benchmarks/NAME/`` becomes benchmark ``NAME`` (:class:`FileBenchmarks`, the registry's
``discover``): its items are asked as the built-in multiple-choice benchmarks ask theirs (the image(s), the
video, then the question; :func:`~backend.inference.benchmarks.choice_request` appends the lettered options),
parsed by the same parser (indefinite choice when an item has several answer letters) and scored by exact match
(``accuracy``) or by MMComposition's partial credit (``partial_credit``, chosen at import).

Load options: ``circular=true`` asks every rotation of each single-choice item's options (CircularEval:
:mod:`backend.inference.circular`; item ids ``<id>#r<k>``), ``category=NAME`` only that category's items. A run's
summary adds per-category scores and, for a circular run, the circular figures (:func:`run_report`);
``compare --circular`` pairs models on circular outcomes (:func:`compare_circular`); ``report`` has a table of
every file benchmark the models have answers for (:func:`report_rows`).
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.filebench.importer import NAME_RULE, benchmarks_dir
from backend.inference.benchmarks import BenchmarkSpec, EvalItem, exact_score
from backend.inference.circular import circular_outcomes, circular_report, rotated
from backend.inference.outcomes import outcome_counts
from backend.inference.parsing import ParsedAnswer
from backend.inference.request import image, text, video

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.overrides import Overrides
    from backend.inference.reading import ReadKey


def truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in {"1", "true", "yes", "on"}


def partial_credit_score(item: EvalItem, parsed: ParsedAnswer) -> float:
    """MMComposition's partial credit (paper section 3.2) of a parsed answer; unparsed answers select nothing."""
    from backend.vqa.scoring import partial_credit

    if not parsed.ok or not isinstance(item.answer, frozenset):
        return 0.0
    return float(partial_credit(parsed.letters, item.answer))


def eval_item(folder: Path, row: dict[str, Any]) -> EvalItem:
    """An imported row as the model sees it: its images, its video, then the question."""
    parts = [image(str(folder / path)) for path in row["images"]]
    if row.get("video"):
        parts.append(video(path=folder / row["video"]))
    parts.append(text(row["question"]))
    single = len(row["answer"]) == 1
    return EvalItem(
        row["id"],
        parts,
        tuple(row["options"]),
        frozenset(row["answer"]),
        not single,
        {
            "category": row.get("category"),
            "choice_type": "single" if single else "indefinite",
            "item_id": row["id"],
            "rotation": 0,
        },
    )


def load_items(
    folder: Path, ctx: AppContext | None = None, *, circular: Any = False, category: str | None = None
) -> list[EvalItem]:
    """The benchmark's items in file order (each rotation after its item with ``circular``)."""
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines() if line]
    items = [eval_item(folder, row) for row in rows if category is None or row.get("category") == category]
    if not truthy(circular):
        return items
    out = []
    for item in items:
        out.append(item)
        if item.meta["choice_type"] == "single":
            out += [rotated(item, r) for r in range(1, len(item.options))]
    return out


def spec_for(folder: Path, meta: dict[str, Any]) -> BenchmarkSpec:
    name = meta["name"]
    return BenchmarkSpec(
        name,
        str(meta.get("description") or name),
        functools.partial(load_items, folder),
        score=partial_credit_score if meta.get("metric") == "partial_credit" else exact_score,
        metric=str(meta.get("metric") or "accuracy"),
        report=functools.partial(run_report, name),
        compare_circular=compare_circular,
    )


class FileBenchmarks:
    """The file benchmarks of one data folder, read again whenever the folder changes (an import or a removal
    renames a folder inside it)."""

    def __init__(self, data_dir: Path) -> None:
        self.root = benchmarks_dir(data_dir)
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._specs: tuple[BenchmarkSpec, ...] = ()

    def specs(self) -> tuple[BenchmarkSpec, ...]:
        try:
            stamp = self.root.stat().st_mtime_ns
        except FileNotFoundError:
            return ()
        with self._lock:
            if stamp != self._stamp:
                self._specs, self._stamp = tuple(self._read()), stamp
            return self._specs

    def _read(self) -> list[BenchmarkSpec]:
        specs = []
        for folder in sorted(self.root.iterdir()):
            if not NAME_RULE.match(folder.name) or not (folder / "benchmark.json").is_file():
                continue  # staging and removed folders start with '.'
            try:
                meta = json.loads((folder / "benchmark.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if meta.get("name") == folder.name:
                specs.append(spec_for(folder, meta))
        return specs

    def metadata(self, name: str) -> dict[str, Any]:
        return dict(json.loads((self.root / name / "benchmark.json").read_text(encoding="utf-8")))


def _key(ctx: AppContext, name: str, model: str) -> ReadKey:
    """What views read ``model``'s answers to benchmark ``name`` under (:func:`backend.inference.reading.read_key`:
    a served model whose server is down, its last run's)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec

    return read_key(ctx, get_benchmark(ctx, name), get_spec(ctx, model))


def _stored(ctx: AppContext, name: str, model: str, items: Sequence[EvalItem], shash: str) -> dict[str, Any]:
    """The stored prediction of each item (by item id) under ``shash``."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.prepared import prepare
    from backend.inference.store import lookup

    bench = get_benchmark(ctx, name)
    rows = lookup(ctx.database, model, bench.name, shash)
    found = {}
    for prepared in prepare(bench, items, ctx.digests):
        row = rows.get((prepared.item.item_id, prepared.prompt_hash))
        if row is not None:
            found[prepared.item.item_id] = row
    return found


def _letters(rows: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    return {
        item_id: tuple(sorted(row.parsed.letters)) if row.parsed and row.parsed.ok else ()
        for item_id, row in rows.items()
        if row.status != "error"
    }


def run_report(
    name: str,
    ctx: AppContext,
    model: str,
    load_options: dict[str, Any] | None = None,
    limit: int | None = None,
    gen: Overrides | None = None,
    shash: str | None = None,
) -> dict[str, Any]:
    """What a run's summary adds: the score per category (items as authored; failed calls left out) and, when
    the run asked rotations, the circular figures. ``shash``: the run's key (else worked out from ``gen``)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.registry import get_spec
    from backend.inference.runner import store_key

    bench = get_benchmark(ctx, name)
    items = bench.load_items(ctx, **(load_options or {}))[:limit]
    key = shash if shash is not None else store_key(ctx, bench, get_spec(ctx, model), gen)  # the run's key
    rows = _stored(ctx, name, model, items, key)
    by_category: dict[str, dict[str, Any]] = {}
    for item in items:
        row = rows.get(item.item_id)
        if item.meta["rotation"] or row is None or row.status == "error":
            continue
        entry = by_category.setdefault(item.meta.get("category") or "(none)", {"total": 0.0, "n": 0})
        entry["total"] += row.score or 0.0
        entry["n"] += 1
    out: dict[str, Any] = {
        "by_category": {
            c: {"score": round(e["total"] / e["n"], 4), "n": e["n"]} for c, e in sorted(by_category.items())
        }
    }
    if any(item.meta["rotation"] for item in items):
        out["circular"] = circular_report(items, _letters(rows))
    return out


def circular_right(ctx: AppContext, name: str, model: str, shash: str | None = None) -> dict[str, bool]:
    """Base item id -> right under every rotation, for the single-choice items with every rotation answered
    (under ``shash``; default: what views read)."""
    from backend.inference.benchmarks import get_benchmark

    items = get_benchmark(ctx, name).load_items(ctx, circular=True)
    shash = shash or _key(ctx, name, model).settings_hash
    outcomes = circular_outcomes(items, _letters(_stored(ctx, name, model, items, shash)))
    return {base: outcome.right for base, (outcome, _plain) in outcomes.items() if outcome.complete}


def compare_circular(ctx: AppContext, name: str, models: Sequence[str], samples: int = 2000) -> dict[str, Any]:
    """Paired comparison (:func:`backend.inference.comparison.compare_models`) on circular outcomes."""
    from backend.inference.comparison import compare_models

    keys = {model: _key(ctx, name, model) for model in models}
    every = {model: circular_right(ctx, name, model, keys[model].settings_hash) for model in models}
    outcomes = {model: o for model, o in every.items() if o}  # no complete item: never ranked or paired
    runs = {
        model: {"n": len(o), "circular_accuracy": round(sum(o.values()) / len(o), 4)} for model, o in outcomes.items()
    }
    return {
        "benchmark": name,
        "circular": True,
        "runs": runs,
        "not_ranked": [model for model, o in every.items() if not o],
        "comparison": compare_models(outcomes, samples),
        "notes": {model: key.note for model, key in keys.items() if key.note},
    }


def report_rows(ctx: AppContext, name: str, model: str) -> dict[str, Any] | None:
    """One row of the report's file-benchmark table (None when ``model`` has no answer stored here): accuracy on
    the items as authored, circular accuracy and consistency over the items with every rotation answered, and
    how answers were read."""
    from backend.inference.benchmarks import get_benchmark

    plain = get_benchmark(ctx, name).load_items(ctx)
    key = _key(ctx, name, model)
    rows = _stored(ctx, name, model, plain, key.settings_hash)
    if not rows:
        return None
    answered = [row for row in rows.values() if row.status != "error"]
    outcomes = outcome_counts(row.status for row in rows.values())
    circular_items = get_benchmark(ctx, name).load_items(ctx, circular=True)
    circular = circular_report(circular_items, _letters(_stored(ctx, name, model, circular_items, key.settings_hash)))
    return {
        "benchmark": name,
        "model": model,
        "run": f"{len(rows)} of {len(plain)}",
        "score": round(sum(r.score or 0.0 for r in answered) / len(answered), 4) if answered else None,
        "circular_complete": circular["complete"],
        "circular_accuracy": circular["circular_accuracy"] if circular["complete"] else None,
        "consistency_rate": circular["consistency_rate"] if circular["complete"] else None,
        **{k: outcomes[k] for k in ("answered_rate", "refusal_rate", "parse_failure_rate")},
        "errors": int(outcomes["errors"]),
        "note": key.note,
    }


def is_file_benchmark(ctx: AppContext, name: str) -> bool:
    """Whether ``name`` is a benchmark imported from a file (not a built-in one)."""
    folder = benchmarks_dir(ctx.settings.data_dir) / name
    return (
        bool(NAME_RULE.match(name))
        and (folder / "benchmark.json").is_file()
        and name not in ctx.benchmarks.builtin_names()
    )


def file_benchmark_names(ctx: AppContext) -> list[str]:
    return [name for name in ctx.benchmarks.all() if is_file_benchmark(ctx, name)]
