"""The planning leaderboard: chance (1/6), human majority, and every model run stored by the shared
runner on ``vilpact-planning`` — accuracy with a 95% bootstrap interval, by future length and scene, and
an exact McNemar test of each against a chosen baseline (default ``bigram-prior``, the blind prior); for
every stored run, its answers read, refused and unparsed (:mod:`backend.inference.outcomes`). A run is the
model's current one when it is stored under the key the model is read under now
(:func:`backend.inference.reading.read_key`: a served model whose server is down, its last run's, with ``note``)."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING

from backend.inference.circular import circular_outcome, circular_summary
from backend.inference.outcomes import outcome_counts, run_status
from backend.inference.store import list_runs, lookup
from backend.planning.evaluation import BENCHMARK
from backend.planning.questions import CHOICE_LETTERS, N_CHOICES, list_questions
from backend.planning.results import report
from backend.storage import Database

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.reading import ReadKey

_ROTATED = re.compile(r"^(?P<qid>.+)#(?P<mode>frames|text)-r(?P<rotation>\d)$")


def _index(letters: Collection[str] | None, rotation: int) -> int | None:
    if not letters or len(letters) != 1:
        return None
    return (CHOICE_LETTERS.index(next(iter(letters))) + rotation) % N_CHOICES


def _current_keys(ctx: AppContext) -> dict[str, ReadKey]:
    """The key each registered model's answers are read under now (to name older runs apart): the key it
    would be run under, or a served model's last run while its server is unreachable
    (:func:`backend.inference.reading.read_key`)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.reading import read_key
    from backend.inference.registry import list_models

    bench = get_benchmark(ctx, BENCHMARK)
    return {name: read_key(ctx, bench, spec) for name, spec in list_models(ctx).items()}


def stored_answers(
    database: Database, circular: bool = False, ctx: AppContext | None = None
) -> dict[str, dict[str, int | None]]:
    """Per ``model`` (a run under settings other than the current ones is named ``model [earlier settings
    abc123]``; without ``ctx`` every model run under several settings is named so): question id ->
    chosen index. With ``circular``, only questions answered right under all six rotations keep their key
    (the others get None), from runs made with ``circular=True``."""
    return {name: answers for name, (answers, _) in stored_runs(database, circular, ctx).items()}


def stored_runs(
    database: Database, circular: bool = False, ctx: AppContext | None = None
) -> dict[str, tuple[dict[str, int | None], dict]]:
    """:func:`stored_answers` with each run's outcomes (:func:`backend.inference.outcomes.outcome_counts`)
    over the predictions the report reads: one per question (rotation 0), or all six rotations of the
    questions answered under all six when ``circular``; rates are shares of those predictions (a partial run's
    rates are over what it ran). With ``circular``, the outcomes also hold ``consistent`` and
    ``consistency_rate`` (the same underlying choice under all six rotations; :mod:`backend.inference.circular`)
    and ``incomplete`` (questions with some rotation missing)."""
    return _noted_runs(database, circular, ctx)[0]


def _noted_runs(
    database: Database, circular: bool = False, ctx: AppContext | None = None
) -> tuple[dict[str, tuple[dict[str, int | None], dict]], dict[str, str]]:
    """:func:`stored_runs`, and the sentence of each run shown because its served model's server is unreachable
    (its last run: :mod:`backend.inference.reading`), by run name."""
    seen: dict[tuple[str, str], None] = {}
    for run in list_runs(database, limit=10_000):
        if run["benchmark"] == BENCHMARK:
            seen.setdefault((run["model"], run["settings_hash"]), None)
    out: dict[str, tuple[dict[str, int | None], dict]] = {}
    notes: dict[str, str] = {}
    current = _current_keys(ctx) if ctx is not None else None
    questions = {q.id: q for q in list_questions(database)}
    for model, shash in seen:
        answers, statuses, consistency = _answers(lookup(database, model, BENCHMARK, shash), questions, circular)
        if answers:
            if current is not None:
                key = current.get(model)
                name = model if key and key.settings_hash == shash else f"{model} [earlier settings {shash[:6]}]"
                if key and key.settings_hash == shash and key.note:
                    notes[name] = key.note
            else:
                name = model if sum(1 for m, _ in seen if m == model) == 1 else f"{model} [{shash[:6]}]"
            counts = outcome_counts(statuses)
            status = {"status": run_status(len(statuses), int(counts["errors"]))}
            out[name] = (answers, counts | status | consistency)
    return out, notes


def _by_rotation(predictions: dict) -> tuple[dict[str, dict[int, tuple[int | None, str]]], dict[str, set[int]]]:
    """Per question id, each rotation's chosen index and status, and the rotations whose call failed (a failed
    call is neither an answer nor a wrong answer: out of every score, but counted among the run's errors)."""
    per_question: dict[str, dict[int, tuple[int | None, str]]] = {}
    failed: dict[str, set[int]] = {}
    for (item_id, _), prediction in predictions.items():
        match = _ROTATED.match(item_id)
        qid, rotation = (match["qid"], int(match["rotation"])) if match else (item_id, 0)
        if prediction.failed:
            failed.setdefault(qid, set()).add(rotation)
            continue
        letters = prediction.parsed.letters if prediction.parsed and prediction.parsed.ok else None
        per_question.setdefault(qid, {})[rotation] = (_index(letters, rotation), prediction.status)
    return per_question, failed


def _answers(predictions: dict, questions: dict, circular: bool) -> tuple[dict[str, int | None], list[str], dict]:
    """Question id -> chosen index (see :func:`stored_answers`), the statuses of the predictions read, and
    with ``circular`` the consistency counts (:func:`backend.inference.circular.circular_summary`)."""
    per_question, failed = _by_rotation(predictions)
    answers: dict[str, int | None] = {}
    statuses: list[str] = []
    rotated = []
    for qid, by_rotation in per_question.items():
        if circular:
            if qid not in questions:
                continue
            key = questions[qid].answer_index
            outcome = circular_outcome({r: v for r, (v, _) in by_rotation.items()}, key, 6)
            rotated.append(outcome)
            if outcome.complete:
                answers[qid] = key if outcome.right else None
                statuses += [status for _, status in by_rotation.values()]
        elif 0 in by_rotation:
            answers[qid] = by_rotation[0][0]
            statuses.append(by_rotation[0][1])
    for qid, rotations in failed.items():
        if circular:
            statuses += ["error"] * len(rotations - set(per_question.get(qid, {})))
        elif 0 in rotations and 0 not in per_question.get(qid, {}):
            statuses.append("error")
    consistency = circular_summary(rotated) if circular else {}
    keep = ("consistent", "consistency_rate", "incomplete")
    return answers, statuses, {k: v for k, v in consistency.items() if k in keep}


def leaderboard(
    database: Database,
    baseline: str | None = "bigram-prior",
    circular: bool = False,
    samples: int = 2000,
    ctx: AppContext | None = None,
) -> dict:
    """The report of :func:`backend.planning.results.report` over every stored run plus the runs of people
    (:func:`people_runs`: kind ``people``, each over the questions people checked; one annotator's mean has
    its own interval and no breakdown); a run on part of the questions is reported as partial
    (``run: "10 of 510"``), scored on what it answered. ``people_vs_models``: each model against each run of
    people on the questions both answered (:func:`backend.humans.paired.people_vs_models`)."""
    from backend.humans.paired import people_vs_models
    from backend.planning.results import run_outcomes

    questions = list_questions(database)
    stored, notes = _noted_runs(database, circular, ctx)
    runs = {name: answers for name, (answers, _) in stored.items()}
    people, means = people_runs(database, questions, ctx)
    runs |= {name: answers for name, (answers, _) in people.items()}
    if baseline not in runs:
        baseline = None
    outcomes = {name: counts for name, (_, counts) in stored.items()}
    # the paired comparison: every stored model run (the blind bigram-prior among them once run), not the
    # people, who checked a sample (they are paired with each model apart, below)
    result = report(questions, runs, baseline, samples, answer_outcomes=outcomes, compared=list(stored))
    for name, (_, manifest) in people.items():
        result["runs"][name] |= {"kind": "people", "manifest": manifest}
    for name, entry in means.items():
        result["runs"][name] = entry
    for name in stored:
        result["runs"][name]["kind"] = "model"
    for name, note in notes.items():
        result["runs"][name]["note"] = note  # a served model's last run, its server unreachable: said beside it
    result["people_vs_models"] = people_vs_models(
        {n: run_outcomes(questions, runs[n]) for n in stored},
        {n: run_outcomes(questions, runs[n]) for n in people},
        samples,
    )
    result["baseline"] = baseline
    result["circular"] = circular
    result["notes"] = notes
    return result


def people_runs(
    database: Database, questions: list, ctx: AppContext | None = None
) -> tuple[dict[str, tuple[dict[str, int | None], dict]], dict[str, dict]]:
    """The runs of people on the planning questions (:mod:`backend.humans.runs`): the majority and the best
    annotator as answers (name -> (question id -> choice, manifest); a tie or "none is plausible" is never
    right), and one annotator's mean as a finished leaderboard entry (its accuracy the mean share of people
    choosing the key, with the same 95% bootstrap interval)."""
    from backend.humans.readers import planning_human_runs
    from backend.humans.runs import MEAN
    from backend.inference.comparison import bootstrap_interval
    from backend.settings import Settings

    settings = ctx.settings if ctx is not None else Settings()
    keys = {q.id: q.answer_index for q in questions}
    answers: dict[str, tuple[dict[str, int | None], dict]] = {}
    means: dict[str, dict] = {}
    for run in planning_human_runs(database, settings, keys):
        if run.method != MEAN:
            answers[run.name] = (dict(run.answers), run.manifest)
            continue
        scores = [float(v) for v in run.item_scores.values()]
        low, high = bootstrap_interval(scores, settings.bootstrap_samples)
        means[run.name] = {
            "kind": "people",
            "accuracy": round(sum(scores) / len(scores), 4),
            "ci95": [round(low, 4), round(high, 4)],
            "n": len(scores),
            "run": f"{len(scores)} of {len(questions)}",
            "partial": len(scores) < len(questions),
            "answered": len(scores),
            "answered_rate": 1.0,
            "by_length": {},
            "by_scene": {},
            "manifest": run.manifest,
        }
    return answers, means


BLIND_BASELINE = "bigram-prior"


def compare(
    database: Database,
    models: list[str] | None = None,
    circular: bool = False,
    samples: int = 2000,
    ctx: AppContext | None = None,
) -> dict:
    """Paired comparison (:func:`backend.inference.comparison.compare_models`: paired bootstrap, exact McNemar,
    Holm across all pairs, Cohen's h) of the stored runs named in ``models`` (default: all) and always the
    blind ``bigram-prior`` when it has been run, on the questions every one of them has a result for (a
    partial run shrinks the common questions; it is never scored on questions it was not asked). Each run's
    accuracy over its own questions stands beside (``runs``), with ``run: "10 of 510"``; ``people_vs_models``:
    each of them against each run of people, on the questions both answered."""
    questions = list_questions(database)
    stored, notes = _noted_runs(database, circular, ctx)
    wanted = list(stored) if models is None else [m for m in models if m in stored]
    if BLIND_BASELINE in stored and BLIND_BASELINE not in wanted:
        wanted.append(BLIND_BASELINE)
    runs = {name: stored[name][0] for name in wanted}
    board = report(questions, runs, None, samples, {n: stored[n][1] for n in wanted}, compared=wanted)
    keep = ("accuracy", "ci95", "n", "run", "partial", "status", "answered", "refusals", "parse_failures", "errors")
    missing = [m for m in (models or []) if m not in stored]
    from backend.humans.paired import people_vs_models
    from backend.planning.results import run_outcomes

    people, _means = people_runs(database, questions, ctx)
    return {
        "benchmark": BENCHMARK,
        "circular": circular,
        "questions": len(questions),
        "people_vs_models": people_vs_models(
            {n: run_outcomes(questions, runs[n]) for n in wanted},
            {n: run_outcomes(questions, answers) for n, (answers, _) in people.items()},
            samples,
        ),
        "chance": board["chance"],
        "runs": {name: {k: board["runs"][name].get(k) for k in keep} for name in wanted},
        "comparison": board["comparison"],
        "not_run": missing,
        "blind_baseline": BLIND_BASELINE if BLIND_BASELINE in stored else None,
        "notes": {name: note for name, note in notes.items() if name in wanted},
    }
