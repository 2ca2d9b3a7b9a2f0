"""Runs, the leaderboard and the appendix A.4 analysis.

**One run record.** A model's VQA runs are read from the inference layer's run rows (``eval_runs``) and its
prediction store, whoever started them: the VQA tab, the Models tab, ``compstudio eval``, the API, a live
answer (:func:`store_runs`). Each (model, benchmark, settings hash, image mode) with a run row is one run,
named ``<model>``, ``<model> [blind]`` or ``<model> [separate]``, and ``[temperature=0.7]`` after it for a run with
generation overrides (``--gen``; :func:`backend.vqa.models.run_name`); runs
under settings other than the model's latest are named ``... [earlier settings abc123]`` (while a served model's
server is unreachable, its latest are those of its last finished run that matches its settings now, and that run's
row says so in ``note``: :mod:`backend.inference.reading`). Only imported
predictions files are kept apart, in ``vqa_runs`` / ``vqa_predictions`` (:func:`save_predictions`).

Leaderboard rows, all scored with :mod:`backend.vqa.scoring` over the verified items:

* **Random choice**: the exact expected score of a uniformly random answer;
* **People** (kind ``people``, never called a model): "Humans (majority of N)", "Humans (one annotator,
  mean)", "Best annotator", and the same three of experts (reviewers answering outside studies), read from the
  answers people gave and scored by the same partial credit (:mod:`backend.humans.runs`); each over the items
  people answered (``questions`` says how many);
* every run: scored over the items it has an answer for (read, refused or unparsed: a refused or unread answer
  scores 0). **Failed is failed**: a failed call is neither an answer nor a wrong answer, so it stays out of the
  score and of paired comparisons, and a run without one successful item is not ranked.

Every row has ``questions`` and ``answered``; a run's row keeps apart the answers read (``answered``),
refused (``refusals``) and unparsed (``parse_failures``), and failed calls (``errors``), each with its rate
over the items asked (:mod:`backend.inference.outcomes`), and its latest run's ``status``; random and people rows
have None there. Runs and people have the 95% bootstrap interval of their overall score (``ci95_low``,
``ci95_high``; items resampled).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.accounts import auth
from backend.errors import ImportFileError, NotFound, ValidationError
from backend.inference.outcomes import outcome_counts
from backend.storage import Database, audit, utcnow
from backend.storage.jsonl import read_jsonl
from backend.vqa.categories import CATEGORIES, SHORT_NAMES
from backend.vqa.circular import flip_rates
from backend.vqa.difficulty import level_distribution
from backend.vqa.items import VqaItem, list_items, parse_letters
from backend.vqa.scoring import ScoreTable, aggregate, item_random_score, partial_credit, random_table

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.benchmarks import CompareAsked
    from backend.inference.reading import ReadKey

RUN_KINDS = ("model", "blind", "imported")


def save_predictions(
    database: Database,
    run_id: str,
    kind: str,
    predictions: Mapping[str, tuple[Iterable[str], str | None]],
    *,
    actor: str,
    model: str | None = None,
    image_mode: str | None = None,
    statuses: Mapping[str, str] | None = None,
    manifest: dict[str, Any] | None = None,
) -> int:
    """Store (or overwrite) a run's answers: item id -> (letters, raw text), with how each was read
    (``statuses``: item id -> ``ok``, ``refusal``, ``unparsed`` or ``error``; models only), and the batch's run
    ``manifest`` (kept when None: a live answer added to the run). One transaction."""
    statuses = statuses or {}
    if kind not in RUN_KINDS:
        raise ValidationError(f"run kind must be one of {', '.join(RUN_KINDS)}")
    now = utcnow()
    with database.write() as db:
        db.conn.execute(
            """INSERT INTO vqa_runs (id, kind, model, image_mode, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (id) DO NOTHING""",
            (run_id, kind, model, image_mode, actor, now),
        )
        if manifest is not None:
            db.conn.execute("UPDATE vqa_runs SET manifest = ? WHERE id = ?", (json.dumps(manifest), run_id))
        db.conn.executemany(
            """INSERT INTO vqa_predictions (run_id, item_id, answer, raw, answered_at, status)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (run_id, item_id) DO UPDATE SET answer = excluded.answer, raw = excluded.raw,
                   answered_at = excluded.answered_at, status = excluded.status""",
            [
                (run_id, item_id, json.dumps(list(parse_letters(letters))), raw, now, statuses.get(item_id))
                for item_id, (letters, raw) in predictions.items()
            ],
        )
        audit(db, actor, "vqa.run.save", run_id, {"kind": kind, "answers": len(predictions)})
    return len(predictions)


def read_predictions_file(path: Path | str, known_ids: set[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Predictions JSONL ``{"id": ..., "answer": ["A", "C"]}`` (``answer`` may also be ``"AC"`` or ``"A,C"``)."""
    path = Path(path)
    out: dict[str, tuple[str, ...]] = {}
    for number, record in read_jsonl(path):
        if not isinstance(record, dict) or "id" not in record or "answer" not in record:
            raise ImportFileError(str(path), number, 'each line needs "id" and "answer"')
        item_id = str(record["id"])
        if item_id in out:
            raise ImportFileError(str(path), number, f"duplicate prediction for id {item_id!r}")
        if known_ids is not None and item_id not in known_ids:
            raise ImportFileError(str(path), number, f"no item with id {item_id!r}")
        out[item_id] = parse_letters(record["answer"])
    return out


@dataclass(frozen=True)
class VqaRun:
    """One leaderboard run: its answers (item id -> letters) and how each was read (item id -> ``ok``,
    ``refusal``, ``unparsed`` or ``error``)."""

    id: str
    kind: str  # model | blind | imported
    model: str | None
    image_mode: str | None
    answers: dict[str, tuple[str, ...]]
    statuses: dict[str, str]
    manifest: dict[str, Any] | None = None
    status: str = "finished"  # of the latest run row (imported files: finished)
    note: str | None = None  # a served model's last run shown while its server is unreachable (reading.py)
    item_scores: dict[str, Fraction] | None = None  # a run of people scored per item (one annotator, mean)

    @property
    def scored(self) -> dict[str, tuple[str, ...]]:
        """The answers that count: every item asked whose call did not fail."""
        return {i: a for i, a in self.answers.items() if self.statuses.get(i) != "error"}


def _imported_runs(database: Database) -> list[VqaRun]:
    runs = database.query("SELECT * FROM vqa_runs ORDER BY created_at")
    rows = database.query("SELECT run_id, item_id, answer, status FROM vqa_predictions")
    answers: dict[str, dict[str, tuple[str, ...]]] = defaultdict(dict)
    statuses: dict[str, dict[str, str]] = defaultdict(dict)
    for row in rows:
        letters = tuple(json.loads(row["answer"]))
        answers[row["run_id"]][row["item_id"]] = letters
        statuses[row["run_id"]][row["item_id"]] = row["status"] or ("ok" if letters else "unparsed")
    return [
        VqaRun(
            r["id"],
            r["kind"],
            r["model"],
            r["image_mode"],
            answers[r["id"]],
            statuses[r["id"]],
            json.loads(r["manifest"]) if r["manifest"] else None,
        )
        for r in runs
    ]


def _run_groups(ctx: AppContext) -> list[dict[str, Any]]:
    """(model, benchmark, settings hash, image mode) of every VQA run row, in order of their latest row, with
    that row's status and the manifest of the latest one that has one."""
    from backend.vqa.models import BENCHMARK, BLIND_BENCHMARK

    rows = ctx.database.query(
        "SELECT id, model, benchmark, settings_hash, options, status, summary FROM eval_runs "
        "WHERE benchmark IN (?, ?) AND status != 'running' ORDER BY id",
        (BENCHMARK, BLIND_BENCHMARK),
    )
    groups: dict[tuple[str, str, str, str | None], dict[str, Any]] = {}
    for row in rows:
        options = json.loads(row["options"]) if row["options"] else {}
        load = options.get("load_options") or {}
        blind = row["benchmark"] == BLIND_BENCHMARK
        mode = None if blind else load.get("image_mode") or ctx.settings.vqa_image_mode
        key = (row["model"], row["benchmark"], row["settings_hash"], mode)
        group = groups.pop(key, {"manifest": None})
        summary = json.loads(row["summary"]) if row["summary"] else {}
        group |= {"key": key, "status": row["status"], "latest": row["id"], "gen": options.get("gen")}
        if summary.get("manifest"):
            group["manifest"] = summary["manifest"]
        groups[key] = group  # re-inserted: dict order is the order of each group's latest row
    return list(groups.values())


def store_runs(ctx: AppContext, items: list[VqaItem]) -> list[VqaRun]:
    """The model and blind runs of the one run record (module docstring), answers for ``items``: each item's
    prediction under the run's settings hash and the item's current prompt (its text, options and image bytes in
    the run's image mode), so an edited item is not scored with an answer to its old version."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.overrides import run_label
    from backend.inference.prepared import prepare
    from backend.inference.store import lookup
    from backend.vqa.models import BLIND_BENCHMARK, eval_item, run_name

    groups = _run_groups(ctx)
    # the current settings of each run name (generation overrides name a run of their own:
    # backend.inference.overrides): the key a registered model is read under now, as planning's leaderboard reads
    # it (a later run that failed under other settings, e.g. with the server down or a mistyped URL since
    # mended, never makes the good run "earlier"); an unregistered model's latest run
    latest_hash = {(g["key"][0], g["key"][1], g["key"][3], run_label(g["gen"])): g["key"][2] for g in groups}
    keys = _read_keys(ctx, groups)
    for model, bench_name, mode, label in list(latest_hash):
        if (model, bench_name, label) in keys:
            latest_hash[(model, bench_name, mode, label)] = keys[(model, bench_name, label)].settings_hash
    down = {k: key for k, key in keys.items() if key.unreachable is not None}
    out = []
    for group in groups:
        model, bench_name, shash, mode = group["key"]
        blind = bench_name == BLIND_BENCHMARK
        bench = get_benchmark(ctx, bench_name)
        prepared = prepare(bench, [eval_item(ctx.settings, i, mode or "composite", blind) for i in items], ctx.digests)
        stored = lookup(ctx.database, model, bench_name, shash)
        answers, statuses = {}, {}
        for p in prepared:
            row = stored.get((p.item.item_id, p.prompt_hash))
            if row is not None:
                answers[p.item.item_id] = tuple(sorted(row.parsed.letters)) if row.parsed and row.parsed.ok else ()
                statuses[p.item.item_id] = row.status
        name = run_name(model, blind, mode or "composite", group["gen"])
        current = latest_hash[(model, bench_name, mode, run_label(group["gen"]))] == shash
        if not current:
            name = f"{name} [earlier settings {shash[:6]}]"
        key = down.get((model, bench_name, run_label(group["gen"])))
        note = key.note if key is not None and current else None
        kind = "blind" if blind else "model"
        out.append(VqaRun(name, kind, model, mode, answers, statuses, group["manifest"], group["status"], note))
    return out


def _read_keys(ctx: AppContext, groups: list[dict[str, Any]]) -> dict[tuple[str, str, str], ReadKey]:
    """(model, benchmark, run label) -> the key each registered model of ``groups`` is read under now
    (:func:`backend.inference.reading.read_key`; a served model whose server is unreachable: its last run that
    matches its settings, with ``unreachable`` set)."""
    from backend.errors import CompStudioError
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.overrides import run_label
    from backend.inference.reading import read_key
    from backend.inference.registry import list_models

    try:
        specs = list_models(ctx)
    except CompStudioError:  # a registry file that does not parse: runs are named by their latest row
        return {}
    out = {}
    for group in groups:
        model, bench_name = group["key"][0], group["key"][1]
        spec, label = specs.get(model), run_label(group["gen"])
        if spec is None or (model, bench_name, label) in out:
            continue
        try:
            out[(model, bench_name, label)] = read_key(ctx, get_benchmark(ctx, bench_name), spec, group["gen"])
        except CompStudioError:  # e.g. options the backend refuses: named by the latest row, as before
            continue
    return out


def list_runs(ctx: AppContext, items: list[VqaItem] | None = None, people: bool = True) -> list[VqaRun]:
    """Every run: imported files, then the runs of the one run record (a stored run replaces an imported row of
    the same name, e.g. one a version before the one run record saved), then (``people``) the runs of people
    (:func:`people_runs`). ``items``: default the verified ones."""
    items = list_items(ctx.database, status="verified") if items is None else items
    stored = store_runs(ctx, items)
    names = {r.id for r in stored}
    humans = people_runs(ctx, items) if people else []
    return [r for r in _imported_runs(ctx.database) if r.id not in names] + stored + humans


def people_runs(ctx: AppContext, items: list[VqaItem]) -> list[VqaRun]:
    """People's answers to ``items`` as runs of kind ``people`` (:mod:`backend.humans.runs`): the majority and
    the best annotator answer with letters (a tie: no letter, scored 0), one annotator's mean is a score per
    item; the manifest counts the people and gives Krippendorff's α."""
    from backend.humans.readers import vqa_human_runs
    from backend.humans.runs import MEAN

    out = []
    for run in vqa_human_runs(ctx.database, ctx.settings, items):
        answers = {q: tuple(a) if a is not None else () for q, a in run.answers.items()}
        if run.method == MEAN:
            answers = {q: () for q in run.item_scores}
        statuses = dict.fromkeys(answers, "ok")
        scores = dict(run.item_scores) if run.method == MEAN else None
        out.append(VqaRun(run.name, "people", None, None, answers, statuses, run.manifest, item_scores=scores))
    return out


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def _row(name: str, kind: str, table: ScoreTable) -> dict[str, Any]:
    pct = _pct
    row: dict[str, Any] = {"name": name, "kind": kind, "overall": pct(table.overall)}
    row |= {dim: pct(v) for dim, v in table.dimensions.items()}
    row |= {SHORT_NAMES[c]: pct(v) for c, v in table.categories.items()}
    row["ci95_low"] = row["ci95_high"] = None
    row["questions"], row["answered"] = table.questions, table.answered
    rate = round(table.answered / table.questions, 4) if table.questions else 0.0
    return row | {"answered_rate": rate} | dict.fromkeys(_NOT_READ) | {"status": None}


# outcome columns that apply only to runs (random and human rows show None)
_NOT_READ = ("refusals", "refusal_rate", "parse_failures", "parse_failure_rate", "errors", "error_rate")


def _run_row(run: VqaRun, items: list[VqaItem], samples: int = 2000) -> dict[str, Any] | None:
    """A run's row (None when it has no successful item: never ranked): scores over the items it answered, and
    its answers read, refused, unparsed and failed (rates: shares of the items asked)."""
    scores = item_scores(run, items)
    if not scores:
        return None
    asked = [i for i in items if i.id in scores]
    interval = _interval(list(scores.values()), samples)
    if run.kind == "people":  # people are not read from a model's output: no outcome columns, no run status
        return _row(run.id, run.kind, aggregate(asked, scores)) | interval
    read = outcome_counts([run.statuses[i.id] for i in items if i.id in run.statuses])
    row = _row(run.id, run.kind, aggregate(asked, scores)) | interval | read | {"status": run.status}
    return row | ({"note": run.note} if run.note else {})


def item_scores(run: VqaRun, items: list[VqaItem]) -> dict[str, Fraction]:
    """Item id -> the run's partial credit, for the items it answered (a failed call is no answer); a run of
    people scored per item (one annotator's mean) gives its own scores."""
    if run.item_scores is not None:
        return {i.id: run.item_scores[i.id] for i in items if i.id in run.item_scores}
    scored = run.scored
    return {i.id: partial_credit(scored[i.id], i.answer) for i in items if i.id in scored}


def _interval(scores: list[Fraction], samples: int) -> dict[str, float]:
    """The 95% bootstrap interval of the overall score (percent), the same for people and models."""
    from backend.inference.comparison import bootstrap_interval

    low, high = bootstrap_interval([float(s) for s in scores], samples)
    return {"ci95_low": round(100 * low, 2), "ci95_high": round(100 * high, 2)}


def leaderboard(ctx: AppContext, username: str | None, status: str = "verified") -> list[dict[str, Any]]:
    """Rows (percent): random, the runs of people, then every ranked run sorted by overall, best first. Every
    row covers the items in its ``questions`` (people and partial runs: the items they answered)."""
    auth.require_role(ctx.database, username, "annotator")
    items = list_items(ctx.database, status=status)
    rows = [_row("Random choice", "random", random_table(items))]
    samples = ctx.settings.bootstrap_samples
    every = [row for row in (_run_row(run, items, samples) for run in list_runs(ctx, items)) if row is not None]
    rows += [row for row in every if row["kind"] == "people"]
    ranked = [row for row in every if row["kind"] != "people"]
    ranked.sort(key=lambda r: -(r["overall"] or 0))
    rows += ranked
    flips = flip_rates(ctx, [r["name"] for r in ranked if r["kind"] == "model"])  # a model's current run only
    rows = [row | {"flip_rate": _pct(flips.get(row["name"]))} for row in rows]
    if any(row.get("note") for row in rows):  # a column only when a run needs the sentence (same keys: the CSV)
        rows = [row | {"note": row.get("note")} for row in rows]
    return rows


def unranked_runs(ctx: AppContext, username: str | None, status: str = "verified") -> list[dict[str, Any]]:
    """The runs left off the leaderboard because none of their items has an answer (every call failed)."""
    auth.require_role(ctx.database, username, "annotator")
    items = list_items(ctx.database, status=status)
    return [
        {"name": run.id, "status": run.status, "errors": sum(1 for s in run.statuses.values() if s == "error")}
        for run in list_runs(ctx, items)
        if not run.scored
    ]


def run_manifests(ctx: AppContext) -> dict[str, dict[str, Any]]:
    """Run name -> the manifest of its latest batch (imports and runs saved before manifests have none)."""
    return {run.id: run.manifest for run in list_runs(ctx) if run.manifest}


def leaderboard_csv(rows: list[dict[str, Any]], manifests: Mapping[str, dict[str, Any]] | None = None) -> str:
    """The leaderboard as CSV; with ``manifests`` (:func:`run_manifests`), a last column ``manifest`` holds
    each run's manifest as JSON, so the file names what decided its numbers."""
    if not rows:
        return ""
    if manifests is not None:
        rows = [r | {"manifest": json.dumps(manifests[r["name"]]) if r["name"] in manifests else ""} for r in rows]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def low_cpv_analysis(ctx: AppContext, username: str | None, status: str = "verified") -> dict[str, Any]:
    """Appendix A.4: each question's comprehensive performance value (CPV, its mean score across model
    runs) against the random score of its category; the questions below chance, and the distributions of
    option counts and difficulty for all questions and for those below chance. Blind and imported runs
    are left out of the CPV."""
    auth.require_role(ctx.database, username, "reviewer")
    items = list_items(ctx.database, status=status)
    ranked = [r for r in list_runs(ctx, items) if r.kind == "model" and r.scored]
    if not ranked:
        raise NotFound("no model runs yet: run models on the items first")
    model_runs = [r.id for r in ranked]
    predictions = {r.id: r.scored for r in ranked}
    category_random = random_table(items).categories
    below, rows = [], []
    for item in items:
        scores = [partial_credit(predictions[r][item.id], item.answer) for r in model_runs if item.id in predictions[r]]
        if not scores:
            continue  # no run answered it (asked of none, or every call failed): no CPV
        cpv = float(sum(scores) / len(scores))
        chance = category_random[item.category] or 0.0
        row = {
            "id": item.id,
            "category": item.category,
            "question": item.question,
            "options": len(item.options),
            "difficulty_level": item.difficulty_level,
            "cpv": round(cpv, 4),
            "category_random": round(chance, 4),
            "item_random": round(float(item_random_score(item)), 4),
        }
        rows.append(row)
        if cpv < chance:
            below.append(row)
    below_items = [i for i in items if i.id in {r["id"] for r in below}]
    return {
        "models": model_runs,
        "questions": len(items),
        "below_chance": below,
        "option_counts": dict(sorted(Counter(len(i.options) for i in items).items())),
        "option_counts_below": dict(sorted(Counter(len(i.options) for i in below_items).items())),
        "difficulty": level_distribution(items),
        "difficulty_below": level_distribution(below_items),
        "per_question": rows,
    }


def category_order() -> list[str]:
    return [SHORT_NAMES[c] for c in CATEGORIES]


def run_outcomes(run: VqaRun, items: list[VqaItem]) -> dict[str, bool]:
    """Item id -> fully right (partial credit 1: the exact set of key letters), for the items the run has an
    answer for; a refused or unread answer counts wrong, a failed call (``error``) or an item not asked is
    absent (it did not answer)."""
    scored = run.scored
    return {i.id: partial_credit(scored[i.id], i.answer) == 1 for i in items if i.id in scored}


def comparison(
    ctx: AppContext,
    username: str | None,
    run_ids: Iterable[str] | None = None,
    status: str = "verified",
    samples: int = 2000,
) -> dict[str, Any]:
    """Paired comparison of runs (default: all; every blind run always joins,
    :func:`backend.inference.comparison.compare_models`), each pair on the items **both** answered (its ``n``:
    a third run's gaps never shrink a pair, so the count agrees with the Samples view's), scored fully right or
    not (McNemar needs a right/wrong outcome; partial credit stays in the leaderboard). One annotator's mean is
    a score per item, not an answer: it is not paired (``not_paired``). A run without one successful item is
    left out (``not_ranked``): failed calls are not answers. ``random_choice`` is the expected share of fully
    right answers of a uniform random pick, for reference (an expectation, not a paired run). The runs of people
    are paired with each model apart (``people_vs_models``: :func:`backend.humans.paired.people_vs_models`)."""
    from backend.inference.comparison import compare_models
    from backend.vqa.scoring import item_random_score

    auth.require_role(ctx.database, username, "annotator")
    items = list_items(ctx.database, status=status)
    every = {r.id: r for r in list_runs(ctx, items)}
    runs = {name: run for name, run in every.items() if run.scored and run.item_scores is None}
    wanted = list(runs) if run_ids is None else [r for r in run_ids if r in runs]
    wanted += [r for r, run in runs.items() if run.kind == "blind" and r not in wanted]
    chance = sum(float(item_random_score(i)) for i in items if i.choice_type == "single")
    singles = sum(1 for i in items if i.choice_type == "single")
    from backend.humans.paired import people_vs_models

    machines = {r: run_outcomes(runs[r], items) for r in wanted if runs[r].kind != "people"}
    people = {r: run_outcomes(run, items) for r, run in runs.items() if run.kind == "people"}  # always in
    return {
        "benchmark": "mmcomposition",
        "items": len(items),
        "notes": {r: runs[r].note for r in wanted if runs[r].note},
        "people_vs_models": people_vs_models(machines, people, samples),
        "comparison": compare_models(machines, samples, pairwise=True),  # people: people_vs_models
        "blind_runs": [r for r in wanted if runs[r].kind == "blind"],
        "people_runs": list(people),
        "not_run": [r for r in (run_ids or []) if r not in every],
        "not_paired": [r for r, run in every.items() if run.item_scores is not None],
        "not_ranked": [r for r, run in every.items() if not run.scored],
        "random_choice_single": round(chance / singles, 4) if singles else None,
    }


def compare_command(ctx: AppContext, name: str, asked: CompareAsked) -> dict[str, Any]:
    """``compstudio compare --benchmark vqa`` (the spec's ``compare``): :func:`comparison` of the runs named (default:
    all) as the command line's operator. Not circular: ``compstudio vqa run MODEL --circular`` reports that."""
    from backend.accounts.admin import operator
    from backend.inference.benchmarks import CIRCULAR_COMPARE_ONLY

    if asked.circular:
        raise ValidationError(CIRCULAR_COMPARE_ONLY)
    return comparison(ctx, operator(ctx.database), asked.models, samples=asked.samples)
