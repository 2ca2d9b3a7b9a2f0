"""One sample as the model saw it, and two runs item by item.

:func:`detail`: the exact prompt (the template filled in, as recorded when the run started), the images or the
sampled video frames with their times (kept content-addressed, each checked against the digest its prompt hash
binds: :mod:`backend.inference.seen`), the raw output, how it was read when stored and the parse trace of
reading it again now (:func:`backend.inference.parsing.trace_choice`), the stored key's parts and the run
manifest.

:func:`compare_runs`: the items two runs both answered (no failed call, every rotation present) on which exactly
one is right, paired by the item they rotate (``base_id``: a planning question, a VQA item, an in-context test
case across settings). An item is right when every rotation's score is 1, as the paired comparison counts it
(:func:`backend.inference.paired.stored_outcomes`), so the counts are McNemar's discordant pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.errors import NotFound, ValidationError
from backend.inference.parsing import ParseTrace, trace_choice, trace_text
from backend.inference.samples import (
    PAGE_SIZES,
    ROW_JOIN,
    Sample,
    SampleRun,
    ensure_items,
    get_run,
    run_params,
    sample_rows,
)
from backend.inference.seen import SeenPrompt, read_prompt

if TYPE_CHECKING:
    from backend.context import AppContext


@dataclass(frozen=True)
class SampleDetail:
    """Everything about one sample (see the module docstring)."""

    run: SampleRun
    sample: Sample
    prompt: SeenPrompt | None
    trace: ParseTrace | None
    reread_differs: bool  # today's parser reads the stored output differently from the stored reading
    manifest: dict[str, Any] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.as_dict(),
            "sample": self.sample.as_dict(),
            "prompt": self.prompt.as_dict() if self.prompt else None,
            "trace": self.trace.as_dict() if self.trace else None,
            "reread_differs": self.reread_differs,
            "key": self.sample.key,
            "manifest": self.manifest,
        }


def retrace(sample: Sample) -> ParseTrace | None:
    """The parse trace of the stored raw output, read again with the item's options (None: no output)."""
    if sample.raw_output is None:
        return None
    if sample.options:
        return trace_choice(sample.raw_output, len(sample.options), sample.options, sample.multi)
    return trace_text(sample.raw_output)


def detail(ctx: AppContext, run_id: int, item_id: str) -> SampleDetail:
    """One sample of run ``run_id`` with its prompt, media, parse trace, key and manifest."""
    run = get_run(ctx.database, run_id)
    found = sample_rows(ctx, run.run_id, [item_id]).get(item_id)
    if found is None:
        raise NotFound(f"run {run.run_id} has no item {item_id!r}")
    trace = retrace(found)
    stored = (found.parsed, found.how)
    differs = trace is not None and found.status not in (None, "error") and stored[1] != trace.result.how
    return SampleDetail(
        run, found, read_prompt(ctx.settings, ctx.database, found.prompt_hash), trace, differs, run.manifest
    )


# -- two runs ------------------------------------------------------------------------------------------------

_PER_ITEM = f"""SELECT ri.base_id AS base_id, min(ri.position) AS position, min(ri.category) AS category,
        count(*) AS n, count(p.status) - coalesce(sum(p.status = 'error'), 0) AS answered,
        min(p.status != 'error' AND coalesce(p.score, 0) >= 1) AS is_right
    {ROW_JOIN} WHERE ri.run_id = :run GROUP BY ri.base_id"""


def _paired_sql(a: SampleRun, b: SampleRun) -> tuple[str, dict[str, Any]]:
    def side(run: SampleRun, tag: str) -> str:
        sql = _PER_ITEM
        for name in ("model", "benchmark", "shash", "run"):
            sql = sql.replace(f":{name}", f":{tag}_{name}")
        return sql

    params = {f"a_{k}": v for k, v in run_params(a).items()} | {f"b_{k}": v for k, v in run_params(b).items()}
    sql = f"""WITH a AS ({side(a, "a")}), b AS ({side(b, "b")}),
        paired AS (SELECT a.base_id, a.position, a.category, a.is_right AS a_right, b.is_right AS b_right
                   FROM a JOIN b ON b.base_id = a.base_id WHERE a.answered = a.n AND b.answered = b.n)"""
    return sql, params


@dataclass(frozen=True)
class PairedSample:
    """One item on which two runs disagree: who was right, and each run's first rotation of it."""

    base_id: str
    category: str
    right: str  # "a" or "b"
    a: Sample
    b: Sample

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_id": self.base_id,
            "category": self.category,
            "right": self.right,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
        }

    def export_row(self, a: SampleRun, b: SampleRun) -> dict[str, Any]:
        """A flat row for ``compstudio samples --vs``."""
        row: dict[str, Any] = {
            "item_id": self.base_id,
            "category": self.category,
            "answer": self.a.answer,
            "right": (a if self.right == "a" else b).model,
        }
        for tag, run, sample in (("a", a, self.a), ("b", b, self.b)):
            row |= {
                f"model_{tag}": run.model,
                f"run_{tag}": run.run_id,
                f"raw_output_{tag}": sample.raw_output,
                f"parsed_{tag}": sample.parsed,
                f"outcome_{tag}": sample.outcome,
                f"score_{tag}": sample.score,
                f"prompt_sha256_{tag}": sample.prompt_sha256,
            }
        return row


@dataclass(frozen=True)
class RunComparison:
    """The items two runs both answered (``common``), how many only one got right, and a page of those."""

    a: SampleRun
    b: SampleRun
    common: int
    a_only_right: int
    b_only_right: int
    page: int
    pages: int
    rows: list[PairedSample]

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "common": self.common,
            "a_only_right": self.a_only_right,
            "b_only_right": self.b_only_right,
            "page": self.page,
            "pages": self.pages,
            "rows": [r.as_dict() for r in self.rows],
        }


def compare_runs(
    ctx: AppContext, run_a: int, run_b: int, page: int = 1, page_size: int = 50, everything: bool = False
) -> RunComparison:
    """Runs ``run_a`` and ``run_b`` item by item: the discordant items, a page of them (all with ``everything``)."""
    if int(page_size) not in PAGE_SIZES or int(page) < 1:
        raise ValidationError(f"pages are numbered from 1 and hold 1 to {PAGE_SIZES[-1]} rows")
    a, b = get_run(ctx.database, run_a), get_run(ctx.database, run_b)
    if a.benchmark != b.benchmark:
        raise ValidationError(f"run {a.run_id} is on {a.benchmark} and run {b.run_id} on {b.benchmark}: pick two runs of one benchmark")  # fmt: skip
    ensure_items(ctx, a)
    ensure_items(ctx, b)
    paired, params = _paired_sql(a, b)
    counts = ctx.database.query_one(
        f"""{paired} SELECT count(*) AS common, coalesce(sum(a_right AND NOT b_right), 0) AS a_only,
                coalesce(sum(b_right AND NOT a_right), 0) AS b_only FROM paired""",
        params,
    ) or {"common": 0, "a_only": 0, "b_only": 0}
    limit = "" if everything else "LIMIT :limit OFFSET :offset"
    discordant = ctx.database.query(
        f"{paired} SELECT base_id, category, a_right FROM paired WHERE a_right != b_right ORDER BY position {limit}",
        params | {"limit": int(page_size), "offset": (int(page) - 1) * int(page_size)},
    )
    bases = [r["base_id"] for r in discordant]
    first_a, first_b = _first_rotations(ctx, a, bases), _first_rotations(ctx, b, bases)
    rows = [
        PairedSample(r["base_id"], r["category"], "a" if r["a_right"] else "b", first_a[r["base_id"]], first_b[r["base_id"]])
        for r in discordant
    ]  # fmt: skip
    total = int(counts["a_only"]) + int(counts["b_only"])
    return RunComparison(
        a,
        b,
        int(counts["common"]),
        int(counts["a_only"]),
        int(counts["b_only"]),
        int(page),
        max(1, math.ceil(total / int(page_size))),
        rows,
    )


def _first_rotations(ctx: AppContext, run: SampleRun, bases: list[str]) -> dict[str, Sample]:
    """For each of ``bases``, the run's first item of it (rotation 0 of a rotated item)."""
    if not bases:
        return {}
    out: dict[str, Sample] = {}
    for start in range(0, len(bases), 400):
        chunk = bases[start : start + 400]
        names = {f"b{i}": base for i, base in enumerate(chunk)}
        rows = ctx.database.query(
            f"""SELECT base_id, item_id FROM run_items WHERE run_id = :run
                AND base_id IN ({", ".join(":" + n for n in names)}) ORDER BY position DESC""",
            {"run": run.run_id} | names,
        )
        first = {r["base_id"]: r["item_id"] for r in rows}  # the last written is the lowest position
        samples = sample_rows(ctx, run.run_id, list(first.values()))
        out |= {base: samples[item_id] for base, item_id in first.items()}
    return out
