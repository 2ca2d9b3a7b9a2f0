"""Review figures: per round and per annotator (ViLPAct reports 82%, 94% and 100% reasonable in rounds 1-3).

Only *decision* reviews count here (check reviews are for agreement). Two shares are given per round,
because the paper's wording fits both: the share of reviewed sequences with at least one reasonable
annotation (``sequences_accepted_share``) and the share of judged annotations that were reasonable
(``annotations_reasonable_share``).
"""

from __future__ import annotations

import statistics
from typing import Any

from backend.accounts import auth
from backend.storage import Database


def _share(part: int, whole: int) -> float | None:
    """``part / whole`` rounded to 4 places, or None for an empty whole.

    >>> _share(41, 50), _share(0, 0)
    (0.82, None)
    """
    return round(part / whole, 4) if whole else None


def per_round(database: Database) -> list[dict[str, Any]]:
    rows = database.query(
        """SELECT r.round,
                  count(DISTINCT r.id) AS sequences_reviewed,
                  count(DISTINCT CASE WHEN r.outcome = 'accepted' THEN r.id END) AS sequences_accepted,
                  count(DISTINCT CASE WHEN r.outcome = 'returned' THEN r.id END) AS sequences_returned,
                  count(DISTINCT CASE WHEN r.outcome = 'discarded' THEN r.id END) AS sequences_discarded,
                  count(j.annotation_id) AS annotations_judged,
                  coalesce(sum(j.reasonable), 0) AS annotations_reasonable
           FROM reviews r LEFT JOIN review_judgments j ON j.review_id = r.id
           WHERE r.role = 'decision' GROUP BY r.round ORDER BY r.round"""
    )
    for row in rows:
        row["sequences_accepted_share"] = _share(row["sequences_accepted"], row["sequences_reviewed"])
        row["annotations_reasonable_share"] = _share(row["annotations_reasonable"], row["annotations_judged"])
    return rows


def per_annotator(database: Database) -> list[dict[str, Any]]:
    """Submissions, judged, reasonable, acceptance rate and median seconds per task, per live annotator."""
    submitted = database.query(
        "SELECT annotator, seconds_spent FROM annotations WHERE source = 'live' ORDER BY annotator"
    )
    judged = {
        row["annotator"]: row
        for row in database.query(
            """SELECT a.annotator, count(*) AS judged, sum(j.reasonable) AS reasonable
               FROM review_judgments j JOIN reviews r ON r.id = j.review_id AND r.role = 'decision'
               JOIN annotations a ON a.id = j.annotation_id GROUP BY a.annotator"""
        )
    }
    times: dict[str, list[float]] = {}
    for row in submitted:
        times.setdefault(row["annotator"], [])
        if row["seconds_spent"] is not None:
            times[row["annotator"]].append(float(row["seconds_spent"]))
    result = []
    for annotator, seconds in times.items():
        counts = judged.get(annotator, {"judged": 0, "reasonable": 0})
        result.append(
            {
                "annotator": annotator,
                "submissions": sum(1 for r in submitted if r["annotator"] == annotator),
                "judged": int(counts["judged"]),
                "reasonable": int(counts["reasonable"] or 0),
                "acceptance_rate": _share(int(counts["reasonable"] or 0), int(counts["judged"])),
                "median_seconds_per_task": round(statistics.median(seconds), 1) if seconds else None,
            }
        )
    return result


def totals(database: Database) -> dict[str, int]:
    status = {
        row["status"]: row["n"]
        for row in database.query("SELECT status, count(*) AS n FROM tasks WHERE kind = 'intent' GROUP BY status")
    }
    return {
        "in_annotation": int(status.get("open", 0)),
        "awaiting_review": int(status.get("complete", 0)),
        "accepted": int(status.get("accepted", 0)),
        "discarded": int(status.get("discarded", 0)),
        "final_sequences": int(database.scalar("SELECT count(DISTINCT sequence_id) FROM final_intents") or 0),
        "edited_final_intents": int(database.scalar("SELECT count(*) FROM final_intents WHERE edited = 1") or 0),
    }


def dashboard(database: Database, username: str | None) -> dict[str, Any]:
    """Everything the review dashboard shows (reviewers and admins)."""
    auth.require_role(database, username, "reviewer")
    return {"rounds": per_round(database), "annotators": per_annotator(database), "totals": totals(database)}
