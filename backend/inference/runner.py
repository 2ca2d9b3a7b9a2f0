"""Batch evaluation runs: a benchmark, a model, the prediction store.

:func:`run_eval` loads the items, looks up what the store already holds, and asks the model only for
the rest, in chunks of the model's batch size. Every chunk is saved as soon as it is answered, so a
killed run resumes where it stopped. A call that fails (timeout, out of memory, server error) is retried
item by item; an item that still fails is stored with its error and the run goes on. Failed items are
recomputed on a later run with ``retry_failed=True``. The model is loaded only when something is missing:
re-running a finished benchmark makes no model call.

Every summary keeps the outcomes apart (:mod:`backend.inference.outcomes`): ``answered``, ``refusals``,
``parse_failures`` (unparsed only) and ``errors``, each with its rate over the items.

An optional judge model resolves answers the parser could not read: the run's ``judge``, else the
``answer_judge`` setting (off by default; ``judge="off"`` skips it). Its verdicts are stored beside the
prediction and reported separately (``judge``, naming the model and whether the run or the setting chose it),
never mixed into ``score``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from backend.inference.base import Backend, ItemAnswerer, best_option
from backend.inference.benchmarks import BenchmarkSpec, EvalItem, get_benchmark
from backend.inference.digests import FileDigests
from backend.inference.manifest import run_manifest
from backend.inference.outcomes import outcome_counts
from backend.inference.parsing import ParsedAnswer, parse_choice
from backend.inference.registry import ModelSpec, get_spec
from backend.inference.request import GenerationParams, Request, request_hash, text
from backend.inference.revision import download_if_unresolved, model_revision
from backend.inference.store import Prediction, finish_run, lookup, save, settings_hash, start_run

if TYPE_CHECKING:
    from backend.context import AppContext

Progress = Callable[[int, int], None]


@dataclass
class RunSummary:
    benchmark: str
    model: str
    items: int
    metric: str
    score: float
    answered: int
    answered_rate: float
    parse_failures: int  # unparsed answers only (refusals are counted apart)
    parse_failure_rate: float
    refusals: int
    refusal_rate: float
    errors: int
    newly_computed: int
    from_store: int
    run_id: int
    seconds: float
    judge: dict[str, Any] | None = None
    error_examples: list[str] = field(default_factory=list)
    manifest: dict[str, Any] | None = None  # what decided these numbers (backend.inference.manifest)
    item_keys: tuple[tuple[str, str], ...] = ()  # (item id, prompt hash) of the run's items; not printed

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["item_keys"]
        if self.metric == "accuracy":
            data["accuracy"] = self.score
        return data


@dataclass(frozen=True)
class Prepared:
    """One item ready for the model: its prompt and the key it is stored under."""

    item: EvalItem
    request: Request
    prompt_hash: str


def prepare(bench: BenchmarkSpec, items: Sequence[EvalItem], digests: FileDigests | None = None) -> list[Prepared]:
    """Each item's prompt and prompt hash (media files hashed through ``digests``, ``AppContext.digests``)."""
    digests = digests if digests is not None else FileDigests()
    prepared = []
    for item in items:
        request = bench.build_request(item)
        prepared.append(Prepared(item, request, request_hash(request, digests)))
    return prepared


def effective_params(bench: BenchmarkSpec, spec: ModelSpec) -> GenerationParams:
    if bench.params.max_new_tokens is None:
        return replace(bench.params, max_new_tokens=spec.max_new_tokens)
    return bench.params


def store_key(ctx: AppContext, bench: BenchmarkSpec, spec: ModelSpec) -> str:
    """The settings hash ``spec``'s answers to ``bench`` are stored under (:mod:`backend.inference.store`)."""
    return settings_hash(spec, effective_params(bench, spec), model_revision(spec, ctx.digests))


def _likelihood_answers(backend: Backend, batch: Sequence[Prepared]) -> list[str]:
    answers = []
    for prepared in batch:
        item = prepared.item
        if not item.options:
            raise ValueError("likelihood scoring needs options; this item is free text")
        scores = backend.score_options([*item.request, text("Answer:")], list(item.options))
        answers.append(item.letters[best_option(scores)])
    return answers


def call_model(
    backend: Backend, spec: ModelSpec, batch: Sequence[Prepared], params: GenerationParams
) -> list[str | Exception]:
    """Answers for a batch; an exception in place of each answer that failed."""

    def once(chunk: Sequence[Prepared]) -> list[str | Exception]:
        if isinstance(backend, ItemAnswerer):
            return list(backend.answer_items([p.item for p in chunk], params))
        if spec.scoring == "likelihood" and all(p.item.options for p in chunk):
            return list(_likelihood_answers(backend, chunk))
        each = getattr(backend, "generate_each", None)
        if each is not None:
            return list(each([p.request for p in chunk], params))
        return list(backend.generate([p.request for p in chunk], params))

    try:
        return once(batch)
    except Exception as exc:  # one bad item must not stop the run: retry alone, record what still fails
        if len(batch) == 1:
            return [exc]
    results: list[str | Exception] = []
    for prepared in batch:
        try:
            results.extend(once([prepared]))
        except Exception as exc:
            results.append(exc)
    return results


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def to_prediction(
    bench: BenchmarkSpec, spec: ModelSpec, shash: str, prepared: Prepared, answer: str | Exception, latency_ms: float
) -> Prediction:
    base: dict[str, Any] = dict(
        model=spec.name,
        benchmark=bench.name,
        item_id=prepared.item.item_id,
        prompt_hash=prepared.prompt_hash,
        settings_hash=shash,
        latency_ms=latency_ms,
    )
    if isinstance(answer, Exception):
        return Prediction(status="error", raw_output=None, parsed=None, score=None, error=_describe(answer), **base)
    parsed = bench.parse(prepared.item, answer)
    return Prediction(
        status=parsed.status, raw_output=answer, parsed=parsed, score=bench.score(prepared.item, parsed), **base
    )


def judge_prediction(
    judge_backend: Backend, judge_name: str, prepared: Prepared, prediction: Prediction
) -> dict[str, Any]:
    """Ask a judge model which option(s) an unparsed answer chose; parse its reply with the same rules."""
    item = prepared.item
    lines = "\n".join(f"{letter}. {option}" for letter, option in zip(item.letters, item.options, strict=True))
    prompt = (
        f'Options:\n{lines}\n\nA model answered:\n"""\n{prediction.raw_output}\n"""\n\n'
        "Which option letter(s) did the model choose? Reply with the letter(s) only, or 'none'."
    )
    reply = judge_backend.generate([[text(prompt)]], GenerationParams(max_new_tokens=16))[0]
    parsed = parse_choice(reply, len(item.options), item.options, item.multi)
    return {"model": judge_name, "raw": reply, **parsed.as_dict()}


def _compute(
    ctx: AppContext,
    bench: BenchmarkSpec,
    spec: ModelSpec,
    shash: str,
    todo: list[Prepared],
    params: GenerationParams,
    run_id: int,
    progress: Progress | None,
    done_before: int,
    total: int,
) -> int:
    """Answer ``todo`` chunk by chunk, saving each chunk at once. Returns the number computed."""
    if not todo:
        return 0
    backend = ctx.pool.get(spec)
    step = max(spec.batch_size, spec.concurrency)
    computed = 0
    for start in range(0, len(todo), step):
        chunk = todo[start : start + step]
        began = time.perf_counter()
        answers = call_model(backend, spec, chunk, params)
        latency = (time.perf_counter() - began) * 1000 / len(chunk)
        save(
            ctx.database,
            [to_prediction(bench, spec, shash, p, a, latency) for p, a in zip(chunk, answers, strict=True)],
            run_id,
        )
        computed += len(chunk)
        if progress:
            progress(done_before + computed, total)
    return computed


JUDGE_OFF = ("off", "")


def resolve_judge(ctx: AppContext, judge: str | None) -> tuple[str | None, str | None]:
    """The judge a run uses and who chose it: the run's own (``"run"``), else the ``answer_judge`` setting
    (``"setting"``); ``"off"`` (or ``""``) means none even when the setting names one."""
    if judge is None:
        name = ctx.settings.answer_judge.strip()
        return (name, "setting") if name else (None, None)
    if judge.strip().lower() in JUDGE_OFF:
        return None, None
    return judge, "run"


def _run_judge(
    ctx: AppContext, judge: str, prepared: list[Prepared], stored: dict, bench: BenchmarkSpec
) -> dict[str, Any]:
    """Resolve unparsed choice answers with ``judge`` (cached in the row's ``judge`` column)."""
    judge_backend = None
    resolved, asked, judged_total = 0, 0, 0.0
    for p in prepared:
        prediction = stored[(p.item.item_id, p.prompt_hash)]
        verdict = prediction.judge if prediction.judge and prediction.judge.get("model") == judge else None
        if prediction.status in {"unparsed", "refusal"} and p.item.options and verdict is None:
            judge_backend = judge_backend or ctx.pool.get(get_spec(ctx, judge))
            verdict = judge_prediction(judge_backend, judge, p, prediction)
            prediction = replace(prediction, judge=verdict)
            stored[(p.item.item_id, p.prompt_hash)] = prediction
            save(ctx.database, [prediction])
            asked += 1
        if verdict is not None and verdict["status"] == "ok":
            resolved += 1
            judged_total += bench.score(p.item, ParsedAnswer.from_dict(verdict))
        else:
            judged_total += prediction.score or 0.0
    return {
        "model": judge,
        "resolved": resolved,
        "asked_now": asked,
        "score_with_judge": judged_total / len(prepared) if prepared else 0.0,
        "note": "score_with_judge counts answers a judge model read; score does not",
    }


def run_eval(
    ctx: AppContext,
    benchmark: str,
    model: str,
    *,
    limit: int | None = None,
    retry_failed: bool = False,
    judge: str | None = None,
    progress: Progress | None = None,
    actor: str = "cli",
    load_options: dict[str, Any] | None = None,
) -> RunSummary:
    """Evaluate ``model`` on ``benchmark`` (the first ``limit`` items), reusing stored predictions."""
    began = time.perf_counter()
    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    judge, judge_chosen_by = resolve_judge(ctx, judge)
    if judge is not None:
        get_spec(ctx, judge)  # fail before any work when the judge is unknown
    download_if_unresolved(ctx, spec)
    items = bench.load_items(ctx, **(load_options or {}))
    prepared = prepare(bench, items[:limit] if limit is not None else items, ctx.digests)
    params = effective_params(bench, spec)
    shash = store_key(ctx, bench, spec)
    stored = lookup(ctx.database, spec.name, bench.name, shash)
    todo = [
        p
        for p in prepared
        if (p.item.item_id, p.prompt_hash) not in stored
        or (retry_failed and stored[(p.item.item_id, p.prompt_hash)].failed)
    ]
    options = {"limit": limit, "retry_failed": retry_failed, "judge": judge, "load_options": load_options}
    run_id = start_run(ctx.database, bench.name, spec.name, shash, actor, options)
    if progress:
        progress(len(prepared) - len(todo), len(prepared))
    try:
        computed = _compute(
            ctx, bench, spec, shash, todo, params, run_id, progress, len(prepared) - len(todo), len(prepared)
        )
    except BaseException as exc:
        finish_run(
            ctx.database,
            run_id,
            {"error": _describe(exc) if isinstance(exc, Exception) else "interrupted"},
            status="failed",
        )
        raise
    if computed:
        stored = lookup(ctx.database, spec.name, bench.name, shash)
    summary = summarise(bench, spec, prepared, stored, computed, run_id, time.perf_counter() - began)
    summary.manifest = run_manifest(ctx, bench.name, spec.name, load_options=load_options, prepared=prepared)
    if judge is not None:
        summary.judge = {**_run_judge(ctx, judge, prepared, stored, bench), "chosen_by": judge_chosen_by}
    finish_run(ctx.database, run_id, summary.as_dict())
    return summary


def summarise(
    bench: BenchmarkSpec,
    spec: ModelSpec,
    prepared: list[Prepared],
    stored: dict,
    computed: int,
    run_id: int,
    seconds: float,
) -> RunSummary:
    rows = [stored[(p.item.item_id, p.prompt_hash)] for p in prepared]
    count = len(rows)
    outcomes = outcome_counts(r.status for r in rows)
    return RunSummary(
        benchmark=bench.name,
        model=spec.name,
        items=count,
        metric=bench.metric,
        score=sum(r.score or 0.0 for r in rows) / count if count else 0.0,
        answered=int(outcomes["answered"]),
        answered_rate=outcomes["answered_rate"],
        parse_failures=int(outcomes["parse_failures"]),
        parse_failure_rate=outcomes["parse_failure_rate"],
        refusals=int(outcomes["refusals"]),
        refusal_rate=outcomes["refusal_rate"],
        errors=int(outcomes["errors"]),
        newly_computed=computed,
        from_store=count - computed,
        run_id=run_id,
        seconds=round(seconds, 3),
        error_examples=[f"{r.item_id}: {r.error}" for r in rows if r.failed][:3],
        item_keys=tuple((p.item.item_id, p.prompt_hash) for p in prepared),
    )


@dataclass(frozen=True)
class Answer:
    """One live answer ("Ask a model"): the prompt shown, raw output, parsed answer, correctness, latency."""

    prompt: str
    raw_output: str | None
    parsed: str
    status: str
    score: float | None
    correct_answer: str
    latency_ms: float | None
    error: str | None
    from_store: bool


def answer_item(ctx: AppContext, benchmark: str, model: str, item: EvalItem) -> Answer:
    """Ask ``model`` one item of ``benchmark`` through the store (a stored answer is reused)."""
    from backend.inference.request import request_text

    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    download_if_unresolved(ctx, spec)
    params = effective_params(bench, spec)
    shash = store_key(ctx, bench, spec)
    prepared = prepare(bench, [item], ctx.digests)[0]
    key = (item.item_id, prepared.prompt_hash)
    stored = lookup(ctx.database, spec.name, bench.name, shash)
    from_store = key in stored and not stored[key].failed
    if not from_store:
        began = time.perf_counter()
        answer = call_model(ctx.pool.get(spec), spec, [prepared], params)[0]
        prediction = to_prediction(bench, spec, shash, prepared, answer, (time.perf_counter() - began) * 1000)
        save(ctx.database, [prediction])
    else:
        prediction = stored[key]
    return Answer(
        request_text(prepared.request),
        prediction.raw_output,
        prediction.parsed.display() if prediction.parsed else "(error)",
        prediction.status,
        prediction.score,
        item.answer_display(),
        prediction.latency_ms,
        prediction.error,
        from_store,
    )
