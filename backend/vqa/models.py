"""Models answering VQA items through the inference layer: the ``mmcomposition`` benchmarks, batch runs,
live answers, and the difficulty-voting panel (paper section 3.1).

Two benchmarks are registered with :mod:`backend.inference.benchmarks`:

* ``mmcomposition``: the image(s) then the question; multi-image items go to the model as the labelled
  composite (the paper's setting) or as separate images (setting ``vqa_image_mode``, or the load option
  ``image_mode``);
* ``mmcomposition-blind``: question and options only, no image, to measure how much an item needs the image.

Answers are parsed by the inference layer (indefinite-choice items accept several letters) and scored
with partial credit (:func:`backend.vqa.scoring.partial_credit`). Batch runs and live answers go through the
inference layer's runner, whoever starts them (this tab, the Models tab, ``compstudio eval``, the API): its run
rows and prediction store are the one record the leaderboard reads (:func:`backend.vqa.runs.store_runs`), under a
run named after the model (``<model>``, ``<model> [blind]`` or ``<model> [separate]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from backend.accounts import auth
from backend.errors import ValidationError
from backend.inference.benchmarks import BenchmarkSpec, EvalItem, choice_request, get_benchmark
from backend.inference.circular import circular_report, rotation_order
from backend.inference.overrides import Overrides, run_label
from backend.inference.parsing import ParsedAnswer
from backend.inference.request import image, text
from backend.storage import audit, utcnow
from backend.vqa.difficulty import difficulty_level
from backend.vqa.images import media_path
from backend.vqa.items import LETTERS, VqaItem, get_item, list_items
from backend.vqa.scoring import partial_credit

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.settings import Settings

BENCHMARK = "mmcomposition"
# a run's summary: answers read, refused and unparsed apart, and failed calls (backend.inference.outcomes)
OUTCOME_KEYS = (
    "answered",
    "answered_rate",
    "refusals",
    "refusal_rate",
    "parse_failures",
    "parse_failure_rate",
    "errors",
)
BLIND_BENCHMARK = "mmcomposition-blind"
IMAGE_MODES = ("composite", "separate")
Progress = Callable[[int, int], None]


def eval_item(
    settings: Settings, item: VqaItem, image_mode: str = "composite", blind: bool = False, rotation: int = 0
) -> EvalItem:
    """The inference layer's view of an item: image part(s) unless blind, then the question. ``rotation``
    (single-choice items) shifts the options: position i shows option (i + r) mod k
    (:func:`backend.inference.circular.rotation_order`); a rotated item's id is ``<id>#r<r>``."""
    if image_mode not in IMAGE_MODES:
        raise ValidationError(f"image mode must be composite or separate, not {image_mode!r}")
    parts: list[dict[str, Any]] = []
    if not blind:
        if image_mode == "composite" or len(item.images) == 1:
            parts.append(image(str(media_path(settings, item.model_image))))
        else:
            labels = (
                ["Left", "Right"] if len(item.images) == 2 else [f"Image {i}" for i in range(1, len(item.images) + 1)]
            )
            for label, rel in zip(labels, item.images, strict=True):
                parts += [text(f"{label}:"), image(str(media_path(settings, rel)))]
    parts.append(text(item.question))
    order = rotation_order(len(item.options), rotation)
    if rotation and item.choice_type == "indefinite":
        raise ValidationError("only single-choice items are rotated (circular evaluation)")
    answer = frozenset(LETTERS[order.index(LETTERS.index(a))] for a in item.answer)
    return EvalItem(
        f"{item.id}#r{rotation}" if rotation else item.id,
        parts,
        tuple(item.options[i] for i in order),
        answer,
        item.choice_type == "indefinite",
        {"category": item.category, "choice_type": item.choice_type, "item_id": item.id, "rotation": rotation},
    )


def rotations(item: VqaItem, circular: bool) -> range:
    """The rotations evaluated for ``item``: all k of a single-choice item when ``circular``, else only 0."""
    return range(len(item.options)) if circular and item.choice_type == "single" else range(1)


def _load(
    ctx: AppContext,
    *,
    status: str = "verified",
    ids: Sequence[str] | None = None,
    image_mode: str | None = None,
    blind: bool = False,
    circular: bool = False,
) -> list[EvalItem]:
    mode = image_mode or ctx.settings.vqa_image_mode
    items = list_items(ctx.database, status=None if ids is not None else status, ids=ids)
    return [eval_item(ctx.settings, i, mode, blind, r) for i in items for r in rotations(i, circular)]


def _load_blind(ctx: AppContext, **options: Any) -> list[EvalItem]:
    return _load(ctx, **(options | {"blind": True}))


def partial_credit_score(item: EvalItem, parsed: ParsedAnswer) -> float:
    """Paper section 3.2's s_q for a parsed answer (unparsed answers select nothing: 0)."""
    if not parsed.ok or not isinstance(item.answer, frozenset):
        return 0.0
    return float(partial_credit(parsed.letters, item.answer))


BENCHMARKS = (
    BenchmarkSpec(
        BENCHMARK,
        "MMComposition-style compositional VQA (verified items; partial credit)",
        _load,
        build_request=choice_request,
        score=partial_credit_score,
        metric="partial_credit",
        default_options=lambda ctx: {"image_mode": ctx.settings.vqa_image_mode},
        aliases=("vqa",),
        compare="backend.vqa.runs:compare_command",
    ),
    BenchmarkSpec(
        BLIND_BENCHMARK,
        "MMComposition-style VQA without images (blind baseline)",
        _load_blind,
        build_request=choice_request,
        score=partial_credit_score,
        metric="partial_credit",
    ),
)


def run_name(model: str, blind: bool, image_mode: str, gen: Overrides | None = None) -> str:
    """The leaderboard's name of a run: the model, ``[blind]`` or ``[separate]``, and ``--gen`` overrides.

    >>> run_name("m", False, "composite", {"temperature": 0.7})
    'm [temperature=0.7]'
    """
    name = f"{model} [blind]" if blind else (f"{model} [separate]" if image_mode == "separate" else model)
    return f"{name} [{run_label(gen)}]" if gen else name


def _stored_letters(
    ctx: AppContext, bench_name: str, model: str, items: list[EvalItem], shash: str
) -> tuple[dict[str, tuple[tuple[str, ...], str]], dict[str, str]]:
    """The store's parsed letters and raw text for ``items`` under ``shash`` (after a run: the run's key), and
    how each answer was read (its status: ``ok``, ``refusal``, ``unparsed`` or ``error``)."""
    from backend.inference.prepared import prepare
    from backend.inference.store import lookup

    bench = get_benchmark(ctx, bench_name)
    stored = lookup(ctx.database, model, bench.name, shash)
    out, statuses = {}, {}
    for prepared in prepare(bench, items, ctx.digests):
        row = stored.get((prepared.item.item_id, prepared.prompt_hash))
        if row is not None:
            letters = tuple(sorted(row.parsed.letters)) if row.parsed and row.parsed.ok else ()
            out[prepared.item.item_id] = (letters, row.raw_output or row.error or "")
            statuses[prepared.item.item_id] = row.status
    return out, statuses


def run_model(
    ctx: AppContext,
    username: str | None,
    model: str,
    *,
    blind: bool = False,
    image_mode: str | None = None,
    ids: Sequence[str] | None = None,
    progress: Progress | None = None,
    circular: bool = False,
    gen: Overrides | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Answer every verified item (or ``ids``; the first ``limit`` of them) with ``model`` in batch; store and
    return the run's summary. ``gen`` overrides generation settings (the run is named after them).
    With ``circular``, every rotation of each single-choice item is asked too (the summary's counts are
    over all predictions) and ``circular`` gives :func:`backend.vqa.circular.circular_report`; the
    leaderboard run keeps the options as authored (rotation 0)."""
    from backend.inference.runner import run_eval

    user = auth.require_role(ctx.database, username, "reviewer")
    mode = image_mode or ctx.settings.vqa_image_mode
    bench_name = BLIND_BENCHMARK if blind else BENCHMARK
    if limit is not None:  # the first ``limit`` questions, every rotation of each
        ids = [i.id for i in list_items(ctx.database, status=None if ids is not None else "verified", ids=ids)][:limit]
    options = {"image_mode": mode, "ids": list(ids) if ids is not None else None, "circular": circular}
    summary = run_eval(ctx, bench_name, model, progress=progress, actor=user.username, load_options=options, gen=gen)
    reported = summary.as_dict()
    report = {}
    if circular:
        items = get_benchmark(ctx, bench_name).load_items(ctx, **options)
        stored = _stored_letters(ctx, bench_name, model, items, str(summary.settings_hash))[0]
        report = {"circular": circular_report(items, {k: v[0] for k, v in stored.items()})}
    return {
        "run": run_name(model, blind, mode, gen),
        "items": summary.items,
        "score": summary.score,
        "status": summary.status,
        "scored": summary.scored,
        **{key: reported[key] for key in OUTCOME_KEYS},
        "newly_computed": summary.newly_computed,
        **report,
        "manifest": summary.manifest,
    }


def ask_model(
    ctx: AppContext,
    username: str | None,
    model: str,
    item_id: str,
    *,
    blind: bool = False,
    image_mode: str | None = None,
) -> dict[str, Any]:
    """One live answer (a run of one item in the one run record, so the leaderboard includes it)."""
    from backend.inference.runner import answer_item

    user = auth.require_role(ctx.database, username, "reviewer")
    mode = image_mode or ctx.settings.vqa_image_mode
    item = get_item(ctx.database, item_id)
    evaluated = eval_item(ctx.settings, item, mode, blind)
    load_options = None if blind else {"image_mode": mode}
    bench_name = BLIND_BENCHMARK if blind else BENCHMARK
    answer = answer_item(ctx, bench_name, model, evaluated, actor=user.username, load_options=load_options)
    letters = tuple(sorted(answer.parsed.replace(" ", "").split(","))) if answer.status == "ok" else ()
    return {
        "item_id": item_id,
        "model": model,
        "raw_output": answer.raw_output,
        "letters": list(letters),
        "status": answer.status,
        "score": answer.score,
        "key": list(item.answer),
        "prompt": answer.prompt,
        "latency_ms": answer.latency_ms,
        "error": answer.error,
    }


def record_votes(ctx: AppContext, model: str, answers: dict[str, tuple[tuple[str, ...], str]], actor: str) -> int:
    """Store one panel model's votes: fully correct (score 1) or not, per item."""
    keys = {i.id: i.answer for i in list_items(ctx.database, ids=list(answers))}
    now = utcnow()
    with ctx.database.write() as db:
        db.conn.executemany(
            """INSERT INTO vqa_votes (item_id, model, answer, fully_correct, voted_at) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (item_id, model) DO UPDATE SET answer = excluded.answer,
                   fully_correct = excluded.fully_correct, voted_at = excluded.voted_at""",
            [
                (item_id, model, ",".join(letters), int(partial_credit(letters, keys[item_id]) == 1), now)
                for item_id, (letters, _raw) in answers.items()
            ],
        )
        audit(db, actor, "vqa.panel.votes", model, {"items": len(answers)})
    return len(answers)


def apply_levels(ctx: AppContext, panel: Sequence[str], actor: str) -> dict[str, int]:
    """Set each item's level from the votes of ``panel`` (items without a vote from every member: no level)."""
    marks = ",".join("?" * len(panel))
    rows = ctx.database.query(
        f"""SELECT item_id, count(*) AS votes, sum(fully_correct) AS correct FROM vqa_votes
            WHERE model IN ({marks}) GROUP BY item_id""",
        list(panel),
    )
    levels = {r["item_id"]: difficulty_level(r["correct"], len(panel)) for r in rows if r["votes"] == len(panel)}
    with ctx.database.write() as db:
        db.conn.execute("UPDATE vqa_items SET difficulty_level = NULL")
        db.conn.executemany(
            "UPDATE vqa_items SET difficulty_level = ? WHERE id = ?",
            [(level, item_id) for item_id, level in levels.items()],
        )
        audit(db, actor, "vqa.panel.levels", "vqa_items", {"panel": list(panel), "rated": len(levels)})
    counts = {lv: 0 for lv in ("super_hard", "hard", "medium", "easy")}
    for level in levels.values():
        counts[level] += 1
    return counts


def vote_difficulty(
    ctx: AppContext,
    username: str | None,
    panel: Sequence[str] | None = None,
    *,
    status: str = "verified",
    progress: Progress | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Every panel model answers every item (the first ``limit``; composite images, as in the paper); the number
    of fully correct answers sets each item's level (:func:`backend.vqa.difficulty.difficulty_level`), from every
    vote stored so far."""
    from backend.inference.registry import get_spec
    from backend.inference.runner import run_eval

    user = auth.require_role(ctx.database, username, "reviewer")
    panel = [m for m in (panel or ctx.settings.vqa_panel) if m]
    if not panel:
        raise ValidationError("choose the panel's models (setting vqa_panel, or pick them in the tab)")
    if len(set(panel)) != len(panel):
        raise ValidationError("each panel model may vote once: the panel lists a model twice")
    for model in panel:
        get_spec(ctx, model)
    ids = [i.id for i in list_items(ctx.database, status=status)][:limit]
    if not ids:
        raise ValidationError(f"there are no {status} items to vote on")
    options = {"image_mode": "composite", "ids": ids}
    total = len(ids) * len(panel)
    for index, model in enumerate(panel):
        step = (lambda done, _n, base=index * len(ids): progress(base + done, total)) if progress else None
        summary = run_eval(ctx, BENCHMARK, model, progress=step, actor=user.username, load_options=options)
        items = get_benchmark(ctx, BENCHMARK).load_items(ctx, **options)
        voted = _stored_letters(ctx, BENCHMARK, model, items, str(summary.settings_hash))[0]  # this run's answers
        record_votes(ctx, model, voted, user.username)
    return {"panel": panel, "items": len(ids), "levels": apply_levels(ctx, panel, user.username)}
