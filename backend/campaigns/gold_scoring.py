"""Scoring gold answers against their key (issue 16 §3, issue 26 §1): planning and VQA exactly, intents by
agreement with the reference (:func:`intent_agreement`) at or above ``gold_agreement_threshold``, else ``pending``
for a reviewer (``backend.campaigns.gold.judge``).

Its own module, below both :mod:`backend.campaigns.gold` (the hand-out, which asks quality first) and
:mod:`backend.campaigns.quality` (which scores what a worker submitted), so neither imports the other back.
"""

from __future__ import annotations

import json

import sqlite_utils

from backend.intents.rules import bigram_jaccard
from backend.settings import Settings
from backend.storage import utcnow


def intent_agreement(concrete: str, high_level: str, references: list[tuple[str, str]]) -> float:
    """Agreement of a worker's two intents with the reference: the best, over reference pairs, of the mean
    character-bigram Jaccard similarity of the concrete and of the high-level intent (0.0 without reference).

    >>> intent_agreement("S/He wants to drink water", "S/He is thirsty", [("S/He wants to drink water", "S/He is thirsty")])
    1.0

    By hand, worker ("abc", "xyz") against ("abc", "xyw"): concrete 1.0; high-level {xy, yz} vs {xy, yw}
    share 1 of 3 bigrams, 1/3; mean 2/3. Against ("zzz", "xyz"): (0 + 1) / 2. The best is 2/3.

    >>> round(intent_agreement("abc", "xyz", [("abc", "xyw"), ("zzz", "xyz")]), 3)
    0.667
    """
    best = 0.0
    for ref_concrete, ref_high in references:
        best = max(best, (bigram_jaccard(concrete, ref_concrete) + bigram_jaccard(high_level, ref_high)) / 2)
    return best


def references(db: sqlite_utils.Database, sequence_id: str) -> list[tuple[str, str]]:
    """The reference intents of a gold sequence: its reviewed final intents, and imported ones judged reasonable."""
    rows = db.conn.execute(
        """SELECT concrete_intent, high_level_intent FROM final_intents WHERE sequence_id = :s
           UNION SELECT a.concrete_intent, a.high_level_intent FROM annotations a
           JOIN review_judgments j ON j.annotation_id = a.id
           WHERE a.sequence_id = :s AND a.source = 'imported' AND j.reasonable = 1""",
        {"s": sequence_id},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _outcome(db: sqlite_utils.Database, settings: Settings, gold: dict) -> tuple[str | None, float | None]:
    """(outcome, agreement) of one submitted gold answer; (None, None) when its answer row is missing."""
    kind, item, who = gold["kind"], gold["item_id"], gold["annotator"]
    if kind == "planning":
        row = db.conn.execute(
            """SELECT c.plausible_choice = q.answer_index FROM planning_checks c
               JOIN planning_questions q ON q.id = c.question_id WHERE c.question_id = ? AND c.annotator = ?""",
            (item, who),
        ).fetchone()
        return (None, None) if row is None else ("correct" if row[0] else "wrong", None)
    if kind == "vqa_answer":
        row = db.conn.execute(
            """SELECT a.answer, i.answer FROM vqa_answers a JOIN vqa_items i ON i.id = a.item_id
               WHERE a.item_id = ? AND a.annotator = ?""",
            (item, who),
        ).fetchone()
        if row is None:
            return None, None
        return ("correct" if sorted(json.loads(row[0])) == sorted(json.loads(row[1])) else "wrong"), None
    row = db.conn.execute(
        "SELECT concrete_intent, high_level_intent FROM annotations WHERE sequence_id = ? AND annotator = ? "
        "AND source = 'live'",
        (item, who),
    ).fetchone()
    if row is None:
        return None, None
    agreement = round(intent_agreement(row[0], row[1], references(db, item)), 4)
    return ("correct" if agreement >= settings.gold_agreement_threshold else "pending"), agreement


def _store_outcome(db: sqlite_utils.Database, assignment_id: int, outcome: str, agreement: float | None) -> None:
    db.conn.execute(
        "UPDATE gold_answers SET outcome = ?, agreement = ?, judged_by = ?, judged_at = ? WHERE assignment_id = ?",
        (outcome, agreement, None if outcome == "pending" else "key", utcnow(), assignment_id),
    )


def score_submitted(db: sqlite_utils.Database, settings: Settings, assignment_id: int) -> str | None:
    """Score one gold answer as it is submitted: call it in the submit's ``write()``, after the answer row is
    stored. Returns the outcome (``correct``, ``wrong``, ``pending``), or None when the assignment is no gold
    item (one read by primary key: every submit pays only that)."""
    row = db.conn.execute(
        "SELECT * FROM gold_answers WHERE assignment_id = ? AND outcome IS NULL", (int(assignment_id),)
    ).fetchone()
    if row is None:
        return None
    outcome, agreement = _outcome(db, settings, dict(row))
    if outcome is not None:
        _store_outcome(db, int(assignment_id), outcome, agreement)
    return outcome


def score_new_answers(db: sqlite_utils.Database, settings: Settings, annotator: str) -> int:
    """Score the annotator's gold answers submitted since the last look; returns how many. Inside ``write()``."""
    rows = db.conn.execute(
        """SELECT g.* FROM gold_answers g JOIN assignments a ON a.id = g.assignment_id
           WHERE g.annotator = ? AND g.outcome IS NULL AND a.status = 'submitted'""",
        (annotator,),
    ).fetchall()
    for gold in rows:
        outcome, agreement = _outcome(db, settings, dict(gold))
        if outcome is not None:
            _store_outcome(db, gold["assignment_id"], outcome, agreement)
    return len(rows)
