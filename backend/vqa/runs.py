"""Runs (a model, a blind model, or an imported predictions file), the leaderboard and the appendix A.4
analysis.

Leaderboard rows, all scored with :mod:`backend.vqa.scoring` over the verified items:

* **Random choice**: the exact expected score of a uniformly random answer;
* **Human**: each item's score is the mean over the annotators who answered it; only answered items count
  (``questions`` says how many);
* every run: items the run did not answer score 0.

Every row has ``questions`` and ``answered``; a run's row keeps apart the answers read (``answered``),
refused (``refusals``) and unparsed (``parse_failures``), and failed calls (``errors``), each with its rate
over the items (:mod:`backend.inference.outcomes`); random and human rows have None there.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from backend.accounts import auth
from backend.errors import ImportFileError, NotFound, ValidationError
from backend.inference.outcomes import outcome_counts
from backend.storage import Database, audit, utcnow
from backend.storage.jsonl import read_jsonl
from backend.vqa.categories import CATEGORIES, SHORT_NAMES
from backend.vqa.difficulty import level_distribution
from backend.vqa.items import VqaItem, list_items, parse_letters
from backend.vqa.scoring import ScoreTable, aggregate, item_random_score, partial_credit, random_table

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


def run_predictions(database: Database, run_id: str) -> dict[str, tuple[str, ...]]:
    rows = database.query("SELECT item_id, answer FROM vqa_predictions WHERE run_id = ?", (run_id,))
    return {r["item_id"]: tuple(json.loads(r["answer"])) for r in rows}


def run_statuses(database: Database, run_id: str) -> dict[str, str]:
    """Item id -> how the run's answer was read; a row without a status (an imported file, or saved
    before statuses were kept) is ``ok`` when it has letters, else ``unparsed``."""
    rows = database.query("SELECT item_id, answer, status FROM vqa_predictions WHERE run_id = ?", (run_id,))
    return {r["item_id"]: r["status"] or ("ok" if json.loads(r["answer"]) else "unparsed") for r in rows}


def list_runs(database: Database) -> list[dict[str, Any]]:
    return database.query(
        """SELECT r.*, (SELECT count(*) FROM vqa_predictions p WHERE p.run_id = r.id) AS answers
           FROM vqa_runs r ORDER BY r.created_at"""
    )


def human_item_scores(database: Database, items: Iterable[VqaItem]) -> dict[str, Fraction]:
    by_item: dict[str, list[Fraction]] = defaultdict(list)
    keys = {i.id: i.answer for i in items}
    for row in database.query("SELECT item_id, answer FROM vqa_answers"):
        if row["item_id"] in keys:
            by_item[row["item_id"]].append(partial_credit(json.loads(row["answer"]), keys[row["item_id"]]))
    return {item_id: sum(scores, Fraction(0)) / len(scores) for item_id, scores in by_item.items()}


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def _row(name: str, kind: str, table: ScoreTable) -> dict[str, Any]:
    pct = _pct
    row: dict[str, Any] = {"name": name, "kind": kind, "overall": pct(table.overall)}
    row |= {dim: pct(v) for dim, v in table.dimensions.items()}
    row |= {SHORT_NAMES[c]: pct(v) for c, v in table.categories.items()}
    row["questions"], row["answered"] = table.questions, table.answered
    rate = round(table.answered / table.questions, 4) if table.questions else 0.0
    return row | {"answered_rate": rate} | dict.fromkeys(_NOT_READ)


# outcome columns that apply only to runs (random and human rows show None)
_NOT_READ = ("refusals", "refusal_rate", "parse_failures", "parse_failure_rate", "errors", "error_rate")


def _run_row(database: Database, run: dict[str, Any], items: list[VqaItem]) -> dict[str, Any]:
    """A run's row: its scores, and its answers read, refused and unparsed (rates: shares of the items)."""
    predictions = run_predictions(database, run["id"])
    scores = {i.id: partial_credit(predictions[i.id], i.answer) for i in items if i.id in predictions}
    statuses = run_statuses(database, run["id"])
    read = outcome_counts([statuses[i.id] for i in items if i.id in statuses], total=len(items))
    return _row(run["id"], run["kind"], aggregate(items, scores)) | read


def leaderboard(database: Database, username: str | None, status: str = "verified") -> list[dict[str, Any]]:
    """Rows (percent): random, human, then every run; sorted by overall, best first (random/human kept)."""
    auth.require_role(database, username, "annotator")
    items = list_items(database, status=status)
    rows = [_row("Random choice", "random", random_table(items))]
    humans = human_item_scores(database, items)
    answered = [i for i in items if i.id in humans]
    if answered:
        rows.append(_row("Human", "human", aggregate(answered, humans)))
    runs = [_run_row(database, run, items) for run in list_runs(database)]
    runs.sort(key=lambda r: -(r["overall"] or 0))
    return rows + runs


def run_manifests(database: Database) -> dict[str, dict[str, Any]]:
    """Run name -> the run manifest of its latest batch (runs saved before manifests, and imports, have none)."""
    rows = database.query("SELECT id, manifest FROM vqa_runs WHERE manifest IS NOT NULL")
    return {r["id"]: json.loads(r["manifest"]) for r in rows}


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


def low_cpv_analysis(database: Database, username: str | None, status: str = "verified") -> dict[str, Any]:
    """Appendix A.4: each question's comprehensive performance value (CPV, its mean score across model
    runs) against the random score of its category; the questions below chance, and the distributions of
    option counts and difficulty for all questions and for those below chance. Blind and imported runs
    are left out of the CPV."""
    auth.require_role(database, username, "reviewer")
    items = list_items(database, status=status)
    model_runs = [r["id"] for r in list_runs(database) if r["kind"] == "model"]
    if not model_runs:
        raise NotFound("no model runs yet: run models on the items first")
    predictions = {run_id: run_predictions(database, run_id) for run_id in model_runs}
    category_random = random_table(items).categories
    below, rows = [], []
    for item in items:
        scores = [partial_credit(predictions[r].get(item.id, ()), item.answer) for r in model_runs]
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


def run_outcomes(database: Database, run_id: str, items: list[VqaItem]) -> dict[str, bool]:
    """Item id -> fully right (partial credit 1: the exact set of key letters), for the items the run has an
    answer for; a refused or unread answer counts wrong, a failed call (``error``) or an item not asked is
    absent (it did not answer)."""
    predictions, statuses = run_predictions(database, run_id), run_statuses(database, run_id)
    return {
        i.id: partial_credit(predictions[i.id], i.answer) == 1
        for i in items
        if i.id in predictions and statuses.get(i.id) != "error"
    }


def comparison(
    database: Database,
    username: str | None,
    run_ids: Iterable[str] | None = None,
    status: str = "verified",
    samples: int = 2000,
) -> dict[str, Any]:
    """Paired comparison of runs (default: all; every blind run always joins,
    :func:`backend.inference.comparison.compare_models`) on the items every one of them answered, scored
    fully right or not (McNemar needs a right/wrong outcome; partial credit stays in the leaderboard).
    ``random_choice`` is the expected share of fully right answers of a uniform random pick, for reference
    (an expectation, not a paired run)."""
    from backend.inference.comparison import compare_models
    from backend.vqa.scoring import item_random_score

    auth.require_role(database, username, "annotator")
    items = list_items(database, status=status)
    runs = {r["id"]: r for r in list_runs(database)}
    wanted = list(runs) if run_ids is None else [r for r in run_ids if r in runs]
    wanted += [r for r, row in runs.items() if row["kind"] == "blind" and r not in wanted]
    chance = sum(float(item_random_score(i)) for i in items if i.choice_type == "single")
    singles = sum(1 for i in items if i.choice_type == "single")
    return {
        "benchmark": "mmcomposition",
        "items": len(items),
        "comparison": compare_models({r: run_outcomes(database, r, items) for r in wanted}, samples),
        "blind_runs": [r for r in wanted if runs[r]["kind"] == "blind"],
        "not_run": [r for r in (run_ids or []) if r not in runs],
        "random_choice_single": round(chance / singles, 4) if singles else None,
    }
