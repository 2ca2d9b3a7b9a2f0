"""Batch evaluation runs: a benchmark, a model, the prediction store.

:func:`run_eval` loads the items, looks up what the store already holds, and asks the model only for
the rest, in chunks of the model's batch size. Every chunk is saved as soon as it is answered, so a
killed run resumes where it stopped. A call that fails (timeout, out of memory, server error) is retried
item by item; an item that still fails is stored with its error and the run goes on. Failed items are
recomputed on a later run with ``retry_failed=True`` (``eval --retry-failed``).

**Failed is failed.** A failed call is neither an answer nor a wrong answer: ``score`` is the mean over the
items that have an answer (``scored``), and is None when none has; the run ends ``failed`` when every item
failed, ``finished with errors`` when some did (:func:`run_status`, shown as "finished with N errors"), else
``finished``. Leaderboards and paired comparisons leave failed items out, and never rank a run without one
successful item.

**Likelihood** (``scoring: likelihood``) scores the options of choice items; in a chunk holding both choice and
free-text items the free-text ones are generated, each kind as itself (the chunk is split, never switched). A
backend that can score many items at once (``score_each``: the openai backend, ``concurrency`` in flight) gets
the whole chunk; a backend that cannot score faithfully refuses before any item is asked (``check_likelihood``).
A served model's identity is read anew at the start of every run (:mod:`backend.inference.revision`). The model is loaded only when something is missing:
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

from backend.errors import InferenceError
from backend.inference.base import Backend, ItemAnswerer, best_option
from backend.inference.batching import (
    AUTO_CAP,
    BatchSizer,
    Prefetcher,
    batch_sizer,
    by_length,
    is_auto,
    is_out_of_memory,
)
from backend.inference.benchmarks import BenchmarkSpec, EvalItem, get_benchmark
from backend.inference.digests import FileDigests
from backend.inference.manifest import run_manifest
from backend.inference.outcomes import outcome_counts, run_status
from backend.inference.overrides import Overrides, apply_overrides
from backend.inference.parsing import ParsedAnswer, parse_choice
from backend.inference.registry import SPEED_OPTIONS, ModelSpec, get_spec
from backend.inference.request import GenerationParams, Request, request_hash, text
from backend.inference.revision import (
    current_revision,
    download_if_unresolved,
    revision_warnings,
    served_identity,
)
from backend.inference.run_config import RunConfig, record_run
from backend.inference.run_items import record_run_items
from backend.inference.store import Prediction, finish_run, lookup, save, settings_hash, start_run
from backend.inference.video_input import video_input

if TYPE_CHECKING:
    from backend.context import AppContext

Progress = Callable[[int, int], None]


@dataclass
class RunSummary:
    benchmark: str
    model: str
    items: int
    metric: str
    score: float | None  # over the items with an answer (failed calls left out); None when none has one
    answered: int
    answered_rate: float
    parse_failures: int  # unparsed answers only (refusals are counted apart)
    parse_failure_rate: float
    refusals: int
    refusal_rate: float
    errors: int
    scored: int  # items with an answer (read, refused or unparsed): what ``score`` is over
    status: str  # finished | finished with errors | failed (run_status)
    newly_computed: int
    from_store: int
    run_id: int
    seconds: float
    judge: dict[str, Any] | None = None
    error_examples: list[str] = field(default_factory=list)
    manifest: dict[str, Any] | None = None  # what decided these numbers (backend.inference.manifest)
    warnings: list[str] = field(default_factory=list)
    serving: dict[str, Any] | None = None  # how requests travelled (openai: replicas, settled concurrency)
    config: str | None = None  # the run file that runs it again (backend.inference.run_config)
    item_keys: tuple[tuple[str, str], ...] = ()  # (item id, prompt hash) of the run's items; not printed

    @property
    def settings_hash(self) -> str | None:
        """The key the run stored its answers under (what a reader of this run's answers reads)."""
        return (self.manifest or {}).get("key", {}).get("settings_hash")

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


def effective_params(bench: BenchmarkSpec, spec: ModelSpec, gen: Overrides | None = None) -> GenerationParams:
    """The benchmark's generation settings, the model's ``max_new_tokens`` where it names none, then the run's
    ``gen`` overrides (:mod:`backend.inference.overrides`)."""
    params = bench.params
    if params.max_new_tokens is None:
        params = replace(params, max_new_tokens=spec.max_new_tokens)
    return apply_overrides(params, gen)


def store_key(ctx: AppContext, bench: BenchmarkSpec, spec: ModelSpec, gen: Overrides | None = None) -> str:
    """The settings hash ``spec``'s answers to ``bench`` (under ``gen`` overrides) are stored under
    (:mod:`backend.inference.store`): what runs write and read. Views read through
    :func:`backend.inference.reading.read_key` (a served model whose server is down: its last run's)."""
    return settings_hash(spec, effective_params(bench, spec, gen), current_revision(ctx, spec))


def status_label(status: str, errors: int | None) -> str:
    """A run's status as shown: ``finished with 3 errors``, ``failed (5 errors)``, ``finished``.

    >>> status_label("finished with errors", 3), status_label("failed", 5), status_label("finished", 0)
    ('finished with 3 errors', 'failed (5 errors)', 'finished')
    """
    if status == "finished with errors":
        return f"finished with {errors} error{'s' if errors != 1 else ''}"
    if status == "failed" and errors:
        return f"failed ({errors} error{'s' if errors != 1 else ''})"
    return status


def likelihood_request(item: EvalItem) -> Request:
    """What an item's options are scored after: the question (without the lettered options), then "Answer:"."""
    return [*item.request, text("Answer:")]


def _likelihood_answers(backend: Backend, batch: Sequence[Prepared]) -> list[str | Exception]:
    """The letter of each item's most likely option (sum of its tokens' log-probabilities over their number,
    :func:`best_option`); all at once where the backend can (``score_each``)."""
    asks = [(likelihood_request(p.item), list(p.item.options)) for p in batch]
    each = getattr(backend, "score_each", None)
    scored = each(asks) if each is not None else [backend.score_options(r, o) for r, o in asks]
    return [
        found if isinstance(found, Exception) else p.item.letters[best_option(found)]
        for p, found in zip(batch, scored, strict=True)
    ]


def _answers(
    backend: Backend, chunk: Sequence[Prepared], params: GenerationParams, score: bool, ready: Any = None
) -> list:
    if ready is not None:  # prepared ahead by the backend itself (backend.inference.batching)
        return list(backend.generate_prepared(ready, params))  # type: ignore[attr-defined]
    if isinstance(backend, ItemAnswerer):
        return list(backend.answer_items([p.item for p in chunk], params))
    if score:
        return _likelihood_answers(backend, chunk)
    each = getattr(backend, "generate_each", None)
    if each is not None:
        return list(each([p.request for p in chunk], params))
    return list(backend.generate([p.request for p in chunk], params))


def _call_group(
    backend: Backend,
    batch: Sequence[Prepared],
    params: GenerationParams,
    score: bool,
    ready: Any = None,
    raise_oom: bool = False,
) -> list[str | Exception]:
    try:
        return _answers(backend, batch, params, score, ready)
    except Exception as exc:  # one bad item must not stop the run: retry alone, record what still fails
        if raise_oom and is_out_of_memory(exc):
            raise  # batch_size auto: the caller asks again with a smaller batch
        if len(batch) == 1:
            return [exc]
    results: list[str | Exception] = []
    for prepared in batch:
        try:
            results.extend(_answers(backend, [prepared], params, score))
        except Exception as exc:
            results.append(exc)
    return results


def call_model(
    backend: Backend,
    spec: ModelSpec,
    batch: Sequence[Prepared],
    params: GenerationParams,
    ready: Any = None,
    raise_oom: bool = False,
) -> list[str | Exception]:
    """Answers for a batch, in order; an exception in place of each answer that failed. Under ``scoring:
    likelihood`` the choice items are scored and the free-text items generated: the batch is split by kind.
    ``ready``: the whole batch as the backend prepared it ahead (``prepare_batch``), for generation; ``raise_oom``:
    raise an out-of-memory error of the whole batch instead of retrying item by item."""
    score = spec.scoring == "likelihood" and not isinstance(backend, ItemAnswerer)
    groups: dict[bool, list[int]] = {True: [], False: []}
    for index, prepared in enumerate(batch):
        groups[score and bool(prepared.item.options)].append(index)
    results: list[str | Exception | None] = [None] * len(batch)
    for scored, indices in groups.items():
        if indices:
            whole = ready if len(indices) == len(batch) and not scored else None
            answers = _call_group(backend, [batch[i] for i in indices], params, scored, whole, raise_oom)
            for index, answer in zip(indices, answers, strict=True):
                results[index] = answer
    return [r if r is not None else InferenceError("no answer") for r in results]


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


def _stream_all(
    ctx: AppContext,
    stream: Callable[..., Any],
    todo: list[Prepared],
    params: GenerationParams,
    prediction: Callable[[int, Any, float], Prediction],
    step: int,
    keep: Callable[[list[Prediction]], None],
) -> None:
    """Every request of ``todo`` to a streaming backend at once, in one pool slot (the backend keeps its own limit
    in flight); the answers are kept in groups of ``step`` or each second."""
    pending: list[Prediction] = []
    last = time.perf_counter()
    with ctx.pool.slot():
        for index, answer, latency in stream([p.request for p in todo], params):
            pending.append(prediction(index, answer, latency))
            if len(pending) >= step or time.perf_counter() - last >= 1.0:
                keep(pending)
                pending, last = [], time.perf_counter()
    if pending:
        keep(pending)


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
) -> tuple[int, dict[str, Any] | None, dict[str, Any]]:
    """Answer ``todo``, saving as answers come; the number computed, the backend's serving report (if any) and
    what the engine used (the manifest's ``engine``: batch size used, and what the backend's ``usage_report`` says).

    A backend with ``generate_stream`` (openai) gets every request at once and keeps its limit in flight; the
    answers are saved in groups of ``max(batch_size, concurrency)`` (or each second). Others get chunks of that
    size, each saved when answered."""
    if not todo:
        return 0, None, {**engine_defaults(spec), "note": "no model call: every answer came from the store"}
    backend = ctx.pool.get(spec)
    check = getattr(backend, "check_likelihood", None)
    if spec.scoring == "likelihood" and check is not None and any(p.item.options for p in todo):
        with ctx.pool.slot():
            check()  # refuse before any item is asked: no answer stands in for a likelihood it is not
    mark = backend.serving_mark() if hasattr(backend, "serving_report") else None
    stream = getattr(backend, "generate_stream", None)
    computed = 0
    report: dict[str, Any] = engine_defaults(spec)

    def keep(predictions: list[Prediction]) -> None:
        nonlocal computed
        save(ctx.database, predictions, run_id)
        computed += len(predictions)
        if progress:
            progress(done_before + computed, total)

    if stream is not None and not isinstance(backend, ItemAnswerer) and spec.scoring != "likelihood":
        report["streamed"] = True
        _stream_all(ctx, stream, todo, params, lambda i, a, t: to_prediction(bench, spec, shash, todo[i], a, t),
                    max(1 if is_auto(spec.batch_size) else int(spec.batch_size), spec.concurrency), keep)  # fmt: skip
        report["batch_size_used"] = None  # the server batches (continuous batching); concurrency is what we set
    else:
        usage = backend.usage_mark() if hasattr(backend, "usage_report") else None
        sizer = _batches(ctx, bench, spec, params, todo, backend, keep, shash)
        report["batch_size_used"] = sizer.used
        if sizer.auto:
            report["batch_size_ceiling"] = sizer.ceiling
        if usage is not None:
            report.update(backend.usage_report(usage))
    return computed, backend.serving_report(mark) if mark is not None else None, report


def engine_defaults(spec: ModelSpec) -> dict[str, Any]:
    """What the manifest's ``engine`` says of every run, whatever the backend: which engine, the batch size set
    (the used one is added when a model is called), and the speed options. In-process backends add their own
    (``usage_report``: placement, dtype, attention implementation, peak memory, visual tokens per item)."""
    speed = {k: v for k, v in spec.options.items() if k in SPEED_OPTIONS}
    engine = {"openai": "OpenAI-compatible server"}.get(spec.backend, spec.backend)
    out: dict[str, Any] = {
        "engine": engine,
        "batch_size": spec.batch_size,
        "concurrency": spec.concurrency,
        "dtype_requested": spec.dtype,
        "speed_options": speed,
    }
    if spec.backend == "openai":  # the server's version is in model.served; the rest the API does not report
        out.update(dtype=None, attn_implementation=None, peak_memory_gib=None)
        out["note"] = "dtype, attention and memory are the server's own; the OpenAI API does not report them"
    return out


def _batches(
    ctx: AppContext,
    bench: BenchmarkSpec,
    spec: ModelSpec,
    params: GenerationParams,
    todo: list[Prepared],
    backend: Backend,
    keep: Callable[[list[Prediction]], None],
    shash: str,
) -> BatchSizer:
    """Answer ``todo`` in batches (:mod:`backend.inference.batching`): similar lengths together, the next batch
    prepared while this one generates, ``batch_size: auto`` searched (a batch that runs out of memory is asked
    again at half its size). Each batch is saved when answered; a slot is held per batch, so a live answer waits
    for one batch, not the whole run."""
    cap = min(AUTO_CAP, int(spec.options.get("max_batch_size") or AUTO_CAP))
    key = (spec.load_key(), shash)
    fixed = spec.batch_size if is_auto(spec.batch_size) else max(int(spec.batch_size), spec.concurrency)
    sizer = batch_sizer(fixed, ctx.pool.batch_sizes, key, cap)
    generated = spec.scoring != "likelihood" or not any(p.item.options for p in todo)
    prepare = getattr(backend, "prepare_batch", None) if generated else None
    if prepare is not None and (sizer.auto or sizer.size > 1):  # a backend that pads its batches: similar lengths
        todo = [todo[i] for i in by_length([p.request for p in todo])]
    with Prefetcher(prepare or (lambda requests: None)) as prefetch:
        start = 0
        while start < len(todo):
            size = sizer.next(len(todo) - start)
            chunk = todo[start : start + size]
            ready = None
            if prepare is not None:
                try:
                    ready = prefetch.take((start, size), [p.request for p in chunk])
                except Exception:
                    ready = None  # call_model prepares again, item by item, and records what fails
                if start + size < len(todo):
                    ahead = todo[start + size : start + size + sizer.following()]
                    prefetch.ahead((start + size, len(ahead)), [p.request for p in ahead])
            with ctx.pool.slot():
                began = time.perf_counter()
                try:
                    answers = call_model(backend, spec, chunk, params, ready, raise_oom=sizer.auto and size > 1)
                except Exception as exc:
                    if not is_out_of_memory(exc):
                        raise
                    sizer.out_of_memory(size)
                    ctx.pool.batch_sizes[key] = sizer.remembered()
                    continue
                latency = (time.perf_counter() - began) * 1000 / len(chunk)
            sizer.answered(size)
            keep([to_prediction(bench, spec, shash, p, a, latency) for p, a in zip(chunk, answers, strict=True)])
            start += size
    if sizer.auto:
        ctx.pool.batch_sizes[key] = sizer.remembered()
    return sizer


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
    resolved, asked, judged_total, scored = 0, 0, 0.0, 0
    for p in prepared:
        prediction = stored[(p.item.item_id, p.prompt_hash)]
        if prediction.failed:
            continue  # a failed call is not an answer: neither judged nor scored
        scored += 1
        verdict = prediction.judge if prediction.judge and prediction.judge.get("model") == judge else None
        if prediction.status in {"unparsed", "refusal"} and p.item.options and verdict is None:
            judge_backend = judge_backend or ctx.pool.get(get_spec(ctx, judge))
            with ctx.pool.slot():
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
        "score_with_judge": judged_total / scored if scored else None,
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
    gen: Overrides | None = None,
) -> RunSummary:
    """Evaluate ``model`` on ``benchmark`` (the first ``limit`` items), reusing stored predictions. ``gen``
    overrides generation settings for this run (in its key and manifest).

    Every evaluation goes through here (the Models, VQA, Planning and In-context tabs, grids, ``eval``, the
    API): one ``eval_runs`` row per run and the one prediction store, which every leaderboard reads."""
    began = time.perf_counter()
    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    judge, judge_chosen_by = resolve_judge(ctx, judge)
    if judge is not None:
        get_spec(ctx, judge)  # fail before any work when the judge is unknown
    download_if_unresolved(ctx, spec)
    load_options = bench.resolve_options(ctx, load_options)
    warnings = revision_warnings(spec, served_identity(ctx, spec, refresh=True))
    items = bench.load_items(ctx, **(load_options or {}))
    prepared = prepare(bench, items[:limit] if limit is not None else items, ctx.digests)
    params = effective_params(bench, spec, gen)
    shash = store_key(ctx, bench, spec, gen)
    stored = lookup(ctx.database, spec.name, bench.name, shash)
    todo = [
        p
        for p in prepared
        if (p.item.item_id, p.prompt_hash) not in stored
        or (retry_failed and stored[(p.item.item_id, p.prompt_hash)].failed)
    ]
    options = {"limit": limit, "retry_failed": retry_failed, "judge": judge, "load_options": load_options}
    if gen:
        options["gen"] = dict(gen)
    run_id = start_run(ctx.database, bench.name, spec.name, shash, actor, options)
    if progress:
        progress(len(prepared) - len(todo), len(prepared))
    try:
        record_run_items(ctx, run_id, prepared)  # what the run covers and what its model sees (the Samples view)
        computed, serving, engine = _compute(
            ctx, bench, spec, shash, todo, params, run_id, progress, len(prepared) - len(todo), len(prepared)
        )
    except BaseException as exc:
        problem = _describe(exc) if isinstance(exc, Exception) else "interrupted"
        finish_run(ctx.database, run_id, {"error": problem, "warnings": warnings}, status="failed")
        raise
    if computed:
        stored = lookup(ctx.database, spec.name, bench.name, shash)
    summary = summarise(bench, spec, prepared, stored, computed, run_id, time.perf_counter() - began)
    summary.warnings = warnings
    summary.serving = serving
    summary.manifest = run_manifest(
        ctx, bench.name, spec.name, load_options=load_options, prepared=prepared, warnings=warnings, gen=gen
    )
    summary.manifest["engine"] = engine
    videos = video_input(ctx, bench.name, spec, prepared, shash, computed)
    if videos is not None:
        summary.manifest["frame_sampling"]["video_input"] = videos
    if judge is not None:
        summary.judge = {**_run_judge(ctx, judge, prepared, stored, bench), "chosen_by": judge_chosen_by}
    config = RunConfig(bench.name, spec.name, limit, dict(gen or {}), dict(load_options or {}), judge or "off")
    path = record_run(ctx, summary, replace(config, retry_failed=retry_failed))
    summary.config = str(path) if path else None
    finish_run(ctx.database, run_id, summary.as_dict(), status=summary.status)
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
    answered = [r for r in rows if not r.failed]
    errors = int(outcomes["errors"])
    return RunSummary(
        benchmark=bench.name,
        model=spec.name,
        items=count,
        metric=bench.metric,
        score=sum(r.score or 0.0 for r in answered) / len(answered) if answered else None,
        answered=int(outcomes["answered"]),
        answered_rate=outcomes["answered_rate"],
        parse_failures=int(outcomes["parse_failures"]),
        parse_failure_rate=outcomes["parse_failure_rate"],
        refusals=int(outcomes["refusals"]),
        refusal_rate=outcomes["refusal_rate"],
        errors=errors,
        scored=len(answered),
        status=run_status(count, errors),
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


def answer_item(
    ctx: AppContext,
    benchmark: str,
    model: str,
    item: EvalItem,
    *,
    actor: str = "live",
    load_options: dict[str, Any] | None = None,
) -> Answer:
    """Ask ``model`` one item of ``benchmark`` through the store (a stored answer is reused). A new answer is a
    run of one item (an ``eval_runs`` row, options ``live``), so the leaderboards that read runs count it;
    ``load_options``: how the benchmark's items were loaded for it (e.g. VQA's image mode)."""
    from backend.inference.request import request_text

    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    download_if_unresolved(ctx, spec)
    served_identity(ctx, spec, refresh=True)  # a served model's answers are keyed by what it serves now
    params = effective_params(bench, spec)
    shash = store_key(ctx, bench, spec)
    prepared = prepare(bench, [item], ctx.digests)[0]
    key = (item.item_id, prepared.prompt_hash)
    stored = lookup(ctx.database, spec.name, bench.name, shash)
    from_store = key in stored and not stored[key].failed
    if not from_store:
        options = {"live": True, "ids": [item.item_id], "load_options": bench.resolve_options(ctx, load_options)}
        run_id = start_run(ctx.database, bench.name, spec.name, shash, actor, options)
        backend = ctx.pool.get(spec)
        with ctx.pool.slot():
            began = time.perf_counter()
            answer = call_model(backend, spec, [prepared], params)[0]
            latency = (time.perf_counter() - began) * 1000
        prediction = to_prediction(bench, spec, shash, prepared, answer, latency)
        save(ctx.database, [prediction], run_id)
        failed = int(prediction.failed)
        outcome: dict[str, Any] = {"items": 1, "errors": failed, "scored": 1 - failed, "score": prediction.score}
        outcome["revision"] = current_revision(ctx, spec)  # what the key was made of (backend.inference.reading)
        finish_run(ctx.database, run_id, outcome, status=run_status(1, failed))
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
