"""Which items a run covered: the stored runs as the Samples view names them, and ``run_items``.

:func:`record_run_items` (called by the runner when a run starts) keeps the run's items in order: each item's
prediction key, the item it rotates (``base_id``: a planning question, a VQA item, an in-context test case across
settings), the original option shown at each letter, and what the view filters on (category; scene and future
length for planning; setting for in-context). A run made before runs kept their items is rebuilt once from its load
options (:func:`ensure_items`, source ``rebuilt``): the items as the benchmark gives them now, as the leaderboards
read them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from backend.errors import NotFound
from backend.inference.circular import rotation_order
from backend.inference.store import NOT_LIVE
from backend.storage import Database, utcnow

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.benchmarks import EvalItem
    from backend.inference.prepared import Prepared

FACET_KEYS = ("scene", "future_length", "setting", "choice_type", "mode", "tests")


@dataclass(frozen=True)
class SampleRun:
    """A stored evaluation run (``eval_runs``) as the Samples view names it."""

    run_id: int
    model: str
    benchmark: str
    settings_hash: str
    status: str
    started_at: str
    load_options: dict[str, Any]
    limit: int | None
    score: float | None
    metric: str | None
    manifest: dict[str, Any] | None

    def label(self) -> str:
        shown = [f"{k}={v}" for k, v in sorted(self.load_options.items()) if v not in (None, "", [], False)]
        shown += [f"first {self.limit}"] if self.limit is not None else []
        score = f", {self.metric} {self.score:.4f}" if self.score is not None else ""
        failed = " (failed)" if self.status == "failed" else ""
        options = f" ({', '.join(shown)})" if shown else ""
        return f"run {self.run_id}: {self.model} on {self.benchmark}{options}{score}{failed}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"label": self.label()}


def _run(row: dict[str, Any]) -> SampleRun:
    options = json.loads(row["options"]) if row["options"] else {}
    summary = json.loads(row["summary"]) if row["summary"] else {}
    return SampleRun(
        run_id=row["id"],
        model=row["model"],
        benchmark=row["benchmark"],
        settings_hash=row["settings_hash"],
        status=row["status"],
        started_at=row["started_at"],
        load_options=options.get("load_options") or {},
        limit=options.get("limit"),
        score=summary.get("score"),
        metric=summary.get("metric"),
        manifest=summary.get("manifest"),
    )


def list_runs(
    database: Database, model: str | None = None, benchmark: str | None = None, limit: int = 200
) -> list[SampleRun]:
    """Stored runs, newest first; runs still going are left out (their rows are being written), and so are live
    answers, stored as runs of one item (:data:`backend.inference.store.NOT_LIVE`)."""
    clauses, params = ["status != 'running'", NOT_LIVE], []
    for column, value in (("model", model), ("benchmark", benchmark)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    rows = database.query(
        f"SELECT * FROM eval_runs WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?", [*params, limit]
    )
    return [_run(r) for r in rows]


def get_run(database: Database, run_id: int) -> SampleRun:
    row = database.query_one("SELECT * FROM eval_runs WHERE id = ?", (int(run_id),))
    if row is None:
        raise NotFound(f"there is no run {run_id}; list them with: compstudio samples --runs")
    return _run(row)


def _same_options(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def norm(options: dict[str, Any]) -> dict[str, str]:
        return {str(k): json.dumps(v, sort_keys=True, default=str) for k, v in options.items() if v not in (None, "")}

    return norm(a) == norm(b)


def find_run(database: Database, model: str, benchmark: str, load_options: dict[str, Any] | None = None) -> SampleRun:
    """The newest finished run of ``model`` on ``benchmark`` (with exactly ``load_options``, when given)."""
    for run in list_runs(database, model, benchmark, limit=10_000):
        if run.status.startswith("finished") and (
            load_options is None or _same_options(run.load_options, load_options)
        ):
            return run
    settings = f" with {json.dumps(load_options)}" if load_options else ""
    raise NotFound(
        f"no finished run of {model} on {benchmark}{settings}; run it first: "
        f"compstudio eval --model {model} --benchmark {benchmark}"
    )


def _base_id(item: EvalItem) -> str:
    meta = item.meta
    if "question_id" in meta:
        return str(meta["question_id"])
    if "item_id" in meta:
        return str(meta["item_id"])
    if "tests" in meta and "line" in meta:
        return f"{meta['tests']}:{meta['line']}"
    return item.item_id


def _option_order(item: EvalItem) -> list[int] | None:
    if "order" in item.meta:
        return [int(i) for i in item.meta["order"]]
    rotation = int(item.meta.get("rotation") or 0)
    return rotation_order(len(item.options), rotation) if rotation else None


def item_row(run_id: int, position: int, item: EvalItem, prompt_hash: str, rotations: int) -> tuple[Any, ...]:
    """One ``run_items`` row for ``item`` (see the module docstring)."""
    meta = item.meta
    category = str(meta.get("category") or meta.get("scene") or "")
    facets = {k: meta[k] for k in FACET_KEYS if meta.get(k) not in (None, "")}
    order = _option_order(item)
    return (
        run_id,
        position,
        item.item_id,
        prompt_hash,
        _base_id(item),
        int(meta.get("rotation") or 0),
        rotations,
        json.dumps(order) if order is not None else None,
        json.dumps(list(item.options)),
        int(item.multi),
        category,
        json.dumps(facets, default=str),
        item.answer_display(),
    )


def record_run_items(ctx: AppContext, run_id: int, prepared: Sequence[Prepared], source: str = "run") -> None:
    """Keep which items run ``run_id`` covers, in order, and record their prompts (:mod:`.seen`)."""
    from backend.inference.seen import record_prompts

    record_prompts(ctx, prepared)
    bases: dict[str, int] = {}
    for p in prepared:
        bases[_base_id(p.item)] = bases.get(_base_id(p.item), 0) + 1
    rows = [item_row(run_id, i, p.item, p.prompt_hash, bases[_base_id(p.item)]) for i, p in enumerate(prepared)]
    with ctx.database.write() as db:
        db.conn.execute("DELETE FROM run_items WHERE run_id = ?", (run_id,))
        db.conn.executemany(f"INSERT INTO run_items VALUES ({', '.join('?' * 13)})", rows)
        db.conn.execute(
            "INSERT INTO run_item_sets (run_id, items, source, recorded_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (run_id) DO UPDATE SET items = excluded.items, source = excluded.source, "
            "recorded_at = excluded.recorded_at",
            (run_id, len(rows), source, utcnow()),
        )


def items_source(database: Database, run_id: int) -> str | None:
    """``run`` or ``rebuilt`` once the run's items are kept; None before."""
    row = database.query_one("SELECT source FROM run_item_sets WHERE run_id = ?", (run_id,))
    return row["source"] if row else None


def ensure_items(ctx: AppContext, run: SampleRun) -> str:
    """The run's items kept (rebuilt from its load options for a run made before runs kept them); the source."""
    source = items_source(ctx.database, run.run_id)
    if source is not None:
        return source
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.prepared import prepare

    bench = get_benchmark(ctx, run.benchmark)
    items = bench.load_items(ctx, **run.load_options)
    prepared = prepare(bench, items[: run.limit] if run.limit is not None else items, ctx.digests)
    record_run_items(ctx, run.run_id, prepared, source="rebuilt")
    return "rebuilt"
