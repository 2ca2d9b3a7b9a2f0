"""The worker report for payment and bonuses (issue 16 §4): per worker, tasks submitted, accepted in review,
gold accuracy, active time, flags; exported as CSV.

Per annotator; with ``study_id`` only the workers of that study (the ``study_workers`` table of
backend/campaigns/studies.py, joined by user name). Active time is the union of the worker's task intervals
(lease to submission, or lease to its end when not submitted), so two kinds worked at once count once.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

from backend.accounts import auth
from backend.campaigns.quality import gold_accuracy
from backend.storage import Database

COLUMNS = (
    "username",
    "state",
    "submitted",
    "accepted_in_review",
    "gold_correct",
    "gold_judged",
    "gold_pending",
    "gold_accuracy",
    "active_minutes",
    "flags_open",
    "flags_total",
    "flag_reasons",
    "first_at",
    "last_at",
)


def active_seconds(intervals: list[tuple[str, str]]) -> float:
    """Seconds covered by the union of ISO-time intervals (overlaps count once).

    By hand: 10:00-10:05 and 10:03-10:10 merge into 10:00-10:10 (600 s); 10:20-10:21 adds 60 s.

    >>> active_seconds([("2026-01-01T10:00:00", "2026-01-01T10:05:00"), ("2026-01-01T10:03:00", "2026-01-01T10:10:00"),
    ...                 ("2026-01-01T10:20:00", "2026-01-01T10:21:00")])
    660.0
    >>> active_seconds([])
    0.0
    """
    spans = sorted((datetime.fromisoformat(a), datetime.fromisoformat(b)) for a, b in intervals if b > a)
    total, current_start, current_end = 0.0, None, None
    for start, end in spans:
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += (current_end - current_start).total_seconds()
            current_start, current_end = start, end
        elif end > current_end:
            current_end = end
    if current_end is not None and current_start is not None:
        total += (current_end - current_start).total_seconds()
    return total


def _workers(database: Database, study_id: str | None) -> list[str]:
    if study_id is None:
        rows = database.query(
            "SELECT DISTINCT annotator AS name FROM assignments WHERE kind IN ('intent', 'planning', 'vqa_answer') "
            "UNION SELECT username FROM users WHERE role = 'annotator' AND source != 'imported' ORDER BY 1"
        )
        return [r["name"] for r in rows]
    from backend.campaigns.studies import get_study

    study = get_study(database, int(study_id))  # NotFound, said plainly, for a study that does not exist
    rows = database.query("SELECT username FROM study_workers WHERE study_id = ? ORDER BY username", (study.id,))
    return [r["username"] for r in rows]


def _worker_row(database: Database, name: str, now: str) -> dict[str, Any]:
    tasks = database.query(
        """SELECT a.status, a.leased_at, a.finished_at, a.expires_at, g.assignment_id IS NOT NULL AS gold
           FROM assignments a LEFT JOIN gold_answers g ON g.assignment_id = a.id
           WHERE a.annotator = ? AND a.kind IN ('intent', 'planning', 'vqa_answer')""",
        (name,),
    )
    intervals = [(t["leased_at"], t["finished_at"] or min(t["expires_at"], now)) for t in tasks]
    submitted = [t for t in tasks if t["status"] == "submitted"]
    accepted = database.scalar(
        """SELECT count(DISTINCT a.id) FROM annotations a JOIN review_judgments j ON j.annotation_id = a.id
           WHERE a.annotator = ? AND a.source = 'live' AND j.reasonable = 1""",
        (name,),
    )
    gold = database.query_one(
        """SELECT coalesce(sum(outcome = 'correct'), 0) AS correct, coalesce(sum(outcome IN ('correct', 'wrong')), 0)
                  AS judged, coalesce(sum(outcome = 'pending'), 0) AS pending
           FROM gold_answers WHERE annotator = ?""",
        (name,),
    ) or {"correct": 0, "judged": 0, "pending": 0}
    flags = database.query("SELECT reason, resolved_at FROM quality_flags WHERE annotator = ?", (name,))
    state = database.scalar("SELECT state FROM worker_quality WHERE username = ?", (name,)) or "active"
    reasons = sorted({f["reason"] for f in flags})
    return {
        "username": name,
        "state": state,
        "submitted": sum(1 for t in submitted if not t["gold"]),
        "accepted_in_review": int(accepted or 0),
        "gold_correct": int(gold["correct"]),
        "gold_judged": int(gold["judged"]),
        "gold_pending": int(gold["pending"]),
        "gold_accuracy": gold_accuracy(int(gold["correct"]), int(gold["judged"])),
        "active_minutes": round(active_seconds(intervals) / 60, 1),
        "flags_open": sum(1 for f in flags if f["resolved_at"] is None),
        "flags_total": len(flags),
        "flag_reasons": " ".join(reasons),
        "first_at": min((t["leased_at"] for t in tasks), default=""),
        "last_at": max((t["finished_at"] or t["leased_at"] for t in tasks), default=""),
    }


def worker_report(database: Database, username: str | None, study_id: str | None = None) -> list[dict[str, Any]]:
    """One row per worker (admins): see :data:`COLUMNS`. Submitted counts real tasks; gold answers apart."""
    auth.require_role(database, username, "admin")
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    return [_worker_row(database, name, now) for name in _workers(database, study_id)]


def _cell(value: Any) -> str:
    """A CSV cell a spreadsheet shows as text: a leading = + - @ would start a formula.

    >>> _cell("=HYPERLINK(1)"), _cell(0.75), _cell(None)
    ("'=HYPERLINK(1)", '0.75', '')
    """
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def report_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    return out.getvalue()
