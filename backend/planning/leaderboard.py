"""The planning leaderboard: chance (1/6), human majority, and every model run stored by the shared
runner on ``vilpact-planning`` — accuracy with a 95% bootstrap interval, by future length and scene, and
an exact McNemar test of each against a chosen baseline (default ``bigram-prior``, the blind prior)."""

from __future__ import annotations

import re

from backend.inference.store import list_runs, lookup
from backend.planning.evaluation import BENCHMARK
from backend.planning.questions import CHOICE_LETTERS, N_CHOICES, list_questions
from backend.planning.results import report
from backend.planning.validation import human_answers

_ROTATED = re.compile(r"^(?P<qid>.+)#(?P<mode>frames|text)-r(?P<rotation>\d)$")


def _index(letters, rotation: int) -> int | None:
    if not letters or len(letters) != 1:
        return None
    return (CHOICE_LETTERS.index(next(iter(letters))) + rotation) % N_CHOICES


def _current_hashes(settings) -> dict[str, str]:
    """The settings hash each registered model would be run under now (to name older runs apart)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.registry import list_models
    from backend.inference.runner import effective_params
    from backend.inference.store import settings_hash

    bench = get_benchmark(BENCHMARK)
    return {name: settings_hash(spec, effective_params(bench, spec)) for name, spec in list_models(settings).items()}


def stored_answers(database, circular: bool = False, settings=None) -> dict[str, dict[str, int | None]]:
    """Per ``model`` (a run under settings other than the current ones is named ``model [earlier settings
    abc123]``; without ``settings`` every model run under several settings is named so): question id ->
    chosen index. With ``circular``, only questions answered right under all six rotations keep their key
    (the others get None), from runs made with ``circular=True``."""
    seen: dict[tuple[str, str], None] = {}
    for run in list_runs(database, limit=10_000):
        if run["benchmark"] == BENCHMARK:
            seen.setdefault((run["model"], run["settings_hash"]), None)
    out: dict[str, dict[str, int | None]] = {}
    current = _current_hashes(settings) if settings is not None else None
    questions = {q.id: q for q in list_questions(database)}
    for model, shash in seen:
        per_question: dict[str, dict[int, int | None]] = {}
        for (item_id, _), prediction in lookup(database, model, BENCHMARK, shash).items():
            match = _ROTATED.match(item_id)
            qid, rotation = (match["qid"], int(match["rotation"])) if match else (item_id, 0)
            letters = prediction.parsed.letters if prediction.parsed and prediction.parsed.ok else None
            per_question.setdefault(qid, {})[rotation] = _index(letters, rotation)
        answers: dict[str, int | None] = {}
        for qid, by_rotation in per_question.items():
            if circular:
                if len(by_rotation) < 6 or qid not in questions:
                    continue
                key = questions[qid].answer_index
                answers[qid] = key if all(v == key for v in by_rotation.values()) else None
            elif 0 in by_rotation:
                answers[qid] = by_rotation[0]
        if answers:
            if current is not None:
                name = model if current.get(model) == shash else f"{model} [earlier settings {shash[:6]}]"
            else:
                name = model if sum(1 for m, _ in seen if m == model) == 1 else f"{model} [{shash[:6]}]"
            out[name] = answers
    return out


def leaderboard(
    database, baseline: str | None = "bigram-prior", circular: bool = False, samples: int = 2000, settings=None
) -> dict:
    """The report of :func:`backend.planning.results.report` over every stored run plus the human row."""
    questions = list_questions(database)
    runs = stored_answers(database, circular, settings)
    human = human_answers(database)
    if human:
        runs["human (majority)"] = human
    if baseline not in runs:
        baseline = None
    result = report(questions, runs, baseline, samples, answered_only=("human (majority)",))
    result["baseline"] = baseline
    result["circular"] = circular
    return result
