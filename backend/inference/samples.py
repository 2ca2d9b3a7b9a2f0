"""The samples of a run: one row per item of any stored evaluation run, read from the prediction store.

A row is a run's item (``run_items``, :mod:`backend.inference.run_items`) joined with its stored prediction, so the
Samples view reads exactly the rows a run's summary was computed from (the mean of ``score`` over a run is its
reported score), and filtering and paging happen in SQL (a page of a 4,342-item run reads its rows only).

Outcomes per row: ``right`` (score 1), ``partly right`` (partial credit between 0 and 1), ``wrong``,
``refused``, ``unparsed``, ``failed`` (the call failed; no answer) and ``missing`` (no stored answer).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from backend.errors import ValidationError
from backend.inference.parsing import LETTERS, ParsedAnswer
from backend.inference.run_items import (
    SampleRun,
    ensure_items,
    find_run,
    get_run,
    list_runs,
    record_run_items,
)
from backend.storage import Database

if TYPE_CHECKING:
    from backend.context import AppContext

__all__ = [  # the runs and their items (backend.inference.run_items) are read through this module too
    "FILTERS", "Sample", "SamplePage", "SampleQuery", "SampleRun", "ensure_items", "find_run", "get_run",
    "iter_samples", "list_runs", "page", "record_run_items", "sample_rows",
]  # fmt: skip

FILTERS: dict[str, str] = {
    "all": "",
    "wrong": "p.status IN ('ok', 'unparsed', 'refusal') AND coalesce(p.score, 0) < 1",
    "right": "p.status = 'ok' AND p.score >= 1",
    "unparsed": "p.status = 'unparsed'",
    "refused": "p.status = 'refusal'",
    "failed": "p.status = 'error'",
    "missing": "p.status IS NULL",
    "inconsistent": "ri.base_id IN (SELECT base_id FROM inconsistent)",
    # how people answered the item (backend/humans/samples.py): the items are chosen in Python, then this holds
    "people_split": "",
    "people_agree_model_wrong": "p.status IN ('ok', 'unparsed', 'refusal') AND coalesce(p.score, 0) < 1",
}
_PEOPLE_FILTERS = ("people_split", "people_agree_model_wrong")
PAGE_SIZES = range(1, 501)

ROW_JOIN = """FROM run_items ri
    LEFT JOIN predictions p ON p.model = :model AND p.benchmark = :benchmark AND p.item_id = ri.item_id
        AND p.prompt_hash = ri.prompt_hash AND p.settings_hash = :shash"""
_PROMPT_JOIN = "LEFT JOIN prompt_records pr ON pr.prompt_hash = ri.prompt_hash"
# each rotated item's pick as an original option index (None: not exactly one letter read)
_INCONSISTENT = f"""WITH picks AS MATERIALIZED (
    SELECT ri.base_id AS base_id, p.status AS status,
        CASE WHEN p.status = 'ok' AND json_array_length(p.parsed, '$.letters') = 1 THEN coalesce(
            json_extract(ri.option_order, '$[' || (unicode(json_extract(p.parsed, '$.letters[0]')) - 65) || ']'),
            unicode(json_extract(p.parsed, '$.letters[0]')) - 65) END AS original
    {ROW_JOIN}
    WHERE ri.run_id = :run AND ri.rotations > 1),
inconsistent AS MATERIALIZED (
    SELECT base_id FROM picks GROUP BY base_id
    HAVING count(status) = count(*) AND (count(original) < count(*) OR count(DISTINCT original) > 1))
"""
_COLUMNS = """ri.position, ri.item_id, ri.prompt_hash, ri.base_id, ri.rotation, ri.rotations, ri.option_order,
    ri.options, ri.multi, ri.category, ri.facets, ri.answer_key, p.status, p.raw_output, p.parsed, p.score,
    p.error, p.judge, p.latency_ms, pr.prompt_sha256"""


# -- rows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RotationAnswer:
    """One rotation of an item: the letters read under it and the original options they name."""

    rotation: int
    read: str  # letters as shown in that rotation, or refused / unparsed / failed / missing
    original: str | None  # the original option's letter (None: not exactly one letter read)


@dataclass(frozen=True)
class Sample:
    """One item of a run with its stored answer (see the module docstring for ``outcome``)."""

    position: int
    item_id: str
    base_id: str
    category: str
    facets: dict[str, Any]
    answer: str  # the key: the right letters (in this item's lettering) or the reference text
    raw_output: str | None
    parsed: str  # what was read: letters, text, "refused", "unparsed", "failed" or "missing"
    outcome: str
    status: str | None
    score: float | None
    rotation: int
    rotations: tuple[RotationAnswer, ...]
    agree: bool | None  # the same original option under every rotation (None: not rotated)
    options: tuple[str, ...]
    multi: bool
    how: str  # the parse rule that read it (or why none could)
    error: str | None
    judge: dict[str, Any] | None
    latency_ms: float | None
    prompt_hash: str
    prompt_sha256: str | None
    key: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rotations"] = [asdict(r) for r in self.rotations]
        return data

    def export_row(self) -> dict[str, Any]:
        """The fields of ``compstudio samples`` and the JSON endpoint (issue 28 §4)."""
        return {
            "item_id": self.item_id,
            "category": self.category,
            "answer": self.answer,
            "raw_output": self.raw_output,
            "parsed": self.parsed,
            "outcome": self.outcome,
            "score": self.score,
            "rotation": self.rotation,
            "prompt_sha256": self.prompt_sha256,
            "key": self.key,
        }


def outcome_of(status: str | None, score: float | None) -> str:
    """A row's outcome from its stored status and score.

    >>> [outcome_of(s, v) for s, v in (("ok", 1.0), ("ok", 0.5), ("ok", 0.0), ("refusal", 0.0), (None, None))]
    ['right', 'partly right', 'wrong', 'refused', 'missing']
    """
    if status is None:
        return "missing"
    if status != "ok":
        return {"refusal": "refused", "unparsed": "unparsed", "error": "failed"}[status]
    value = score or 0.0
    return "right" if value >= 1 else ("partly right" if value > 0 else "wrong")


def _reading(status: str | None, parsed: ParsedAnswer | None) -> str:
    if status is None or status == "error" or parsed is None:
        return "missing" if status is None else "failed"
    if not parsed.ok:
        return "refused" if parsed.status == "refusal" else "unparsed"
    return ", ".join(sorted(parsed.letters)) if parsed.letters else parsed.text


def _original(parsed: ParsedAnswer | None, order: list[int] | None) -> str | None:
    if parsed is None or not parsed.ok or len(parsed.letters) != 1:
        return None
    position = LETTERS.index(next(iter(parsed.letters)))
    if order is None:
        return LETTERS[position]
    return LETTERS[order[position]] if position < len(order) else None


def _sample(run: SampleRun, row: dict[str, Any], rotations: dict[str, list[RotationAnswer]]) -> Sample:
    parsed = ParsedAnswer.from_dict(json.loads(row["parsed"])) if row["parsed"] else None
    answers = tuple(rotations.get(row["base_id"], ())) if row["rotations"] > 1 else ()
    picks = {a.original for a in answers}
    agree = (len(picks) == 1 and None not in picks and len(answers) == row["rotations"]) if answers else None
    return Sample(
        position=row["position"],
        item_id=row["item_id"],
        base_id=row["base_id"],
        category=row["category"],
        facets=json.loads(row["facets"]),
        answer=row["answer_key"],
        raw_output=row["raw_output"],
        parsed=_reading(row["status"], parsed),
        outcome=outcome_of(row["status"], row["score"]),
        status=row["status"],
        score=row["score"] if row["status"] not in (None, "error") else None,
        rotation=row["rotation"],
        rotations=answers,
        agree=agree,
        options=tuple(json.loads(row["options"])),
        multi=bool(row["multi"]),
        how=parsed.how if parsed else (row["error"] or ""),
        error=row["error"],
        judge=json.loads(row["judge"]) if row["judge"] else None,
        latency_ms=row["latency_ms"],
        prompt_hash=row["prompt_hash"],
        prompt_sha256=row["prompt_sha256"],
        key={
            "model": run.model,
            "benchmark": run.benchmark,
            "item_id": row["item_id"],
            "prompt_hash": row["prompt_hash"],
            "settings_hash": run.settings_hash,
        },
    )


def run_params(run: SampleRun) -> dict[str, Any]:
    return {"model": run.model, "benchmark": run.benchmark, "shash": run.settings_hash, "run": run.run_id}


def _rotations(database: Database, run: SampleRun, bases: Sequence[str]) -> dict[str, list[RotationAnswer]]:
    """Every rotation's answer of the rotated items ``bases`` of ``run``."""
    out: dict[str, list[RotationAnswer]] = {}
    for start in range(0, len(bases), 400):
        chunk = list(bases[start : start + 400])
        names = {f"b{i}": base for i, base in enumerate(chunk)}
        rows = database.query(
            f"""SELECT ri.base_id, ri.rotation, ri.option_order, p.status, p.parsed {ROW_JOIN}
                WHERE ri.run_id = :run AND ri.base_id IN ({", ".join(":" + n for n in names)})
                ORDER BY ri.base_id, ri.rotation""",
            run_params(run) | names,
        )
        for r in rows:
            parsed = ParsedAnswer.from_dict(json.loads(r["parsed"])) if r["parsed"] else None
            order = json.loads(r["option_order"]) if r["option_order"] else None
            answer = RotationAnswer(r["rotation"], _reading(r["status"], parsed), _original(parsed, order))
            out.setdefault(r["base_id"], []).append(answer)
    return out


@dataclass(frozen=True)
class SampleQuery:
    """What to show of a run: a filter (:data:`FILTERS`), a category, a text to find in the raw output, a page."""

    filter: str = "all"
    category: str = ""
    search: str = ""
    page: int = 1
    page_size: int = 50

    def checked(self) -> SampleQuery:
        if self.filter not in FILTERS:
            raise ValidationError(f"filter must be one of {', '.join(FILTERS)}, not {self.filter!r}")
        if int(self.page_size) not in PAGE_SIZES:
            raise ValidationError(f"page size must be between 1 and {PAGE_SIZES[-1]}")
        if int(self.page) < 1:
            raise ValidationError("pages are numbered from 1")
        return self


@dataclass(frozen=True)
class _Sql:
    """A WITH prefix (or ""), the WHERE condition and its parameters of a query over a run's items."""

    prefix: str
    where: str
    params: dict[str, Any]


def _among(ids: Sequence[str], params: dict[str, Any]) -> str:
    """``ri.base_id IN (...)`` over ``ids`` (named parameters added to ``params``); never true when empty."""
    names = {f"base{i}": base for i, base in enumerate(ids)}
    params.update(names)
    return f"ri.base_id IN ({', '.join(':' + n for n in names)})" if names else "0"


def _where(query: SampleQuery, people: Mapping[str, Any] | None = None) -> _Sql:
    clauses: list[str] = ["ri.run_id = :run"]
    params: dict[str, Any] = {}
    if FILTERS[query.filter]:
        clauses.append(FILTERS[query.filter])
    if query.filter in _PEOPLE_FILTERS:
        from backend.humans.samples import filter_ids

        clauses.append(_among(filter_ids(people or {}, query.filter), params))
    if query.category:
        clauses.append("ri.category = :category")
        params["category"] = query.category
    if query.search:
        escaped = query.search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("p.raw_output LIKE :search ESCAPE '\\'")
        params["search"] = f"%{escaped}%"
    return _Sql(_INCONSISTENT if query.filter == "inconsistent" else "", " AND ".join(clauses), params)


def _select(
    database: Database, run: SampleRun, sql: _Sql, tail: str = "", extra: dict[str, Any] | None = None
) -> list[Sample]:
    """Samples of ``run`` kept by ``sql``, then ``tail`` (ORDER BY, LIMIT) with its ``extra`` parameters."""
    rows = database.query(
        f"{sql.prefix} SELECT {_COLUMNS} {ROW_JOIN} {_PROMPT_JOIN} WHERE {sql.where} {tail}",
        run_params(run) | sql.params | (extra or {}),
    )
    rotated = sorted({r["base_id"] for r in rows if r["rotations"] > 1})
    rotations = _rotations(database, run, rotated) if rotated else {}
    return [_sample(run, r, rotations) for r in rows]


_PAGE = "ORDER BY ri.position LIMIT :limit OFFSET :offset"


@dataclass(frozen=True)
class SamplePage:
    """One page of a run's samples, with the counts of every filter over the whole run."""

    run: SampleRun
    source: str
    query: SampleQuery
    total: int  # rows matching the query
    pages: int
    rows: list[Sample]
    counts: dict[str, int]
    categories: list[str]
    people: dict[str, dict[str, Any]] = field(default_factory=dict)  # base id -> how people answered it

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.as_dict(),
            "items_source": self.source,
            "query": asdict(self.query),
            "total": self.total,
            "pages": self.pages,
            "counts": self.counts,
            "categories": self.categories,
            "rows": [r.as_dict() | {"people": self.people.get(r.base_id)} for r in self.rows],
        }


def filter_counts(database: Database, run: SampleRun, people: Mapping[str, Any] | None = None) -> dict[str, int]:
    """How many of the run's items each filter keeps (one pass over the run; the people filters over ``people``,
    :func:`backend.humans.samples.people_on_items`)."""
    plain = {name: sql for name, sql in FILTERS.items() if name != "inconsistent" and name not in _PEOPLE_FILTERS}
    sums = ", ".join(f'sum(CASE WHEN {sql or "1"} THEN 1 ELSE 0 END) AS "{name}"' for name, sql in plain.items())
    row = database.query_one(f"SELECT {sums} {ROW_JOIN} WHERE ri.run_id = :run", run_params(run)) or {}
    counts = {name: int(row.get(name) or 0) for name in plain}
    counts["inconsistent"] = int(
        database.scalar(
            f"{_INCONSISTENT} SELECT count(*) FROM run_items ri WHERE ri.run_id = :run "
            "AND ri.base_id IN (SELECT base_id FROM inconsistent)",
            run_params(run),
        )  # fmt: skip
        or 0
    )
    for name in _PEOPLE_FILTERS:
        sql = _where(SampleQuery(filter=name), people)
        found = database.scalar(f"SELECT count(*) {ROW_JOIN} WHERE {sql.where}", run_params(run) | sql.params)
        counts[name] = int(found or 0)
    return counts


def page(
    ctx: AppContext,
    run_id: int,
    query: SampleQuery | None = None,
    with_counts: bool = True,
    people: Mapping[str, Any] | None = None,
) -> SamplePage:
    """One page of run ``run_id``'s samples (see :class:`SampleQuery`); ``with_counts``: also every filter's count
    and the run's categories (one more pass over the run; a next page leaves them out). ``people``: base item id
    -> how people answered it (:func:`backend.humans.samples.people_on_items`), for the people filters and beside
    each row."""
    query = (query or SampleQuery()).checked()
    run = get_run(ctx.database, run_id)
    source = ensure_items(ctx, run)
    sql = _where(query, people)
    total = int(
        ctx.database.scalar(f"{sql.prefix} SELECT count(*) {ROW_JOIN} WHERE {sql.where}", run_params(run) | sql.params)
        or 0
    )
    offset = (int(query.page) - 1) * int(query.page_size)
    rows = _select(ctx.database, run, sql, _PAGE, {"limit": int(query.page_size), "offset": offset})
    categories = (
        [
            r["category"]
            for r in ctx.database.query(
                "SELECT DISTINCT category FROM run_items WHERE run_id = ? AND category != '' ORDER BY category",
                (run.run_id,),
            )
        ]
        if with_counts
        else []
    )
    return SamplePage(
        run,
        source,
        query,
        total,
        max(1, math.ceil(total / int(query.page_size))),
        rows,
        filter_counts(ctx.database, run, people) if with_counts else {},
        categories,
        {r.base_id: people[r.base_id].as_dict() for r in rows if people and r.base_id in people},
    )


def iter_samples(ctx: AppContext, run_id: int, query: SampleQuery | None = None, chunk: int = 500) -> Iterator[Sample]:
    """Every sample of the run that ``query`` keeps (its page and page size ignored), in the run's order."""
    query = (query or SampleQuery()).checked()
    run = get_run(ctx.database, run_id)
    ensure_items(ctx, run)
    sql = _where(query)
    offset = 0
    while True:
        rows = _select(ctx.database, run, sql, _PAGE, {"limit": chunk, "offset": offset})
        yield from rows
        if len(rows) < chunk:
            return
        offset += chunk


def sample_rows(ctx: AppContext, run_id: int, item_ids: Sequence[str]) -> dict[str, Sample]:
    """The samples of ``item_ids`` in run ``run_id`` (item ids the run does not hold are left out)."""
    run = get_run(ctx.database, run_id)
    ensure_items(ctx, run)
    names = {f"i{i}": item_id for i, item_id in enumerate(item_ids)}
    if not names:
        return {}
    sql = _Sql("", f"ri.run_id = :run AND ri.item_id IN ({', '.join(':' + n for n in names)})", names)
    return {s.item_id: s for s in _select(ctx.database, run, sql)}
