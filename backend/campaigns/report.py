"""The worker report for payment and bonuses (issue 16 §4, issue 26 §4): one row per worker per study, with
their state, tasks done, accepted in review, gold accuracy, active time, completion time and flags; exported as
CSV with formula cells neutralised.

A study worker's account belongs to one study (``s<study>-<platform id>``), so one row per account is one row
per worker per study; lab annotators (no study) have the study columns empty. With ``study_id`` only that
study's workers. Active time is the union of the worker's task intervals (lease to submission, or lease to its
end when not submitted), so two kinds worked at once count once.

The state (:func:`worker_state`) is what pays: ``qualifying`` (in the quiz), ``working`` (doing tasks),
``finished`` (pay: completion code shown), ``screened out`` (pay the screen-out fee), ``study full`` (passed
when the last place had gone: shown the screen-out code, pay the screen-out fee; issue 40), ``returned`` (left, ran
out of time, or the platform reported the submission returned, timed out or rejected: ``platform_status``),
``blocked`` (by an admin, or the account disabled). ``quality`` says whether the quality rule paused them;
``end_reason`` why their part ended (quota done, study closed, no task free after waiting, ...), ``code`` the code
they were shown, and ``platform`` the study's platform (an archived one, Mechanical Turk, says so).
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
    "study_id",
    "study",
    "platform_worker_id",
    "username",
    "state",
    "platform_status",
    "quality",
    "tasks_done",
    "submitted",
    "accepted_in_review",
    "gold_correct",
    "gold_judged",
    "gold_pending",
    "gold_accuracy",
    "active_minutes",
    "started_at",
    "finished_at",
    "completion_minutes",
    "flags_open",
    "flags_total",
    "flag_reasons",
    "first_at",
    "last_at",
    "platform",
    "end_reason",
    "code",
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


STUDY_STATES = {
    "started": "qualifying",
    "qualified": "working",
    "finished": "finished",
    "screened_out": "screened out",
    "returned": "returned",
}


def worker_state(study_status: str | None, quality_state: str, disabled: bool) -> str:
    """The report's state of one worker.

    >>> worker_state("qualified", "active", False), worker_state("started", "active", False)
    ('working', 'qualifying')
    >>> worker_state("screened_out", "active", True), worker_state("returned", "active", True)
    ('screened out', 'returned')
    >>> worker_state("qualified", "blocked", True), worker_state("qualified", "active", True), worker_state(None, "paused", False)
    ('blocked', 'blocked', 'working')
    """
    if quality_state == "blocked":
        return "blocked"
    if study_status is None:  # a lab annotator
        return "blocked" if disabled else "working"
    state = STUDY_STATES[study_status]
    # screened out and returned workers are disabled by the study itself; an active one only by an admin
    return "blocked" if disabled and state in ("qualifying", "working") else state


_PEOPLE = """SELECT u.username, u.disabled, w.study_id, s.name AS study, w.platform_worker_id, w.status AS study_status,
                    w.platform_status, w.started_at, w.finished_at, s.kind AS study_kind, w.turned_away_at,
                    w.end_reason, s.platform, s.completion_code, s.screenout_code, s.partial_code
             FROM users u LEFT JOIN study_workers w ON w.username = u.username LEFT JOIN studies s ON s.id = w.study_id"""


def _workers(database: Database, study_id: str | None) -> list[dict[str, Any]]:
    if study_id is None:
        return database.query(
            f"""{_PEOPLE} WHERE u.username IN (
                    SELECT annotator FROM assignments WHERE kind IN ('intent', 'planning', 'vqa_answer')
                    UNION SELECT username FROM users WHERE role = 'annotator' AND source != 'imported')
                ORDER BY w.study_id IS NOT NULL, w.study_id, u.username"""
        )
    from backend.campaigns.studies import get_study

    study = get_study(database, int(study_id))  # NotFound, said plainly, for a study that does not exist
    return database.query(f"{_PEOPLE} WHERE w.study_id = ? ORDER BY u.username", (study.id,))


def _minutes_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return round((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() / 60, 1)


def _worker_row(database: Database, person: dict[str, Any], now: str) -> dict[str, Any]:
    name = person["username"]
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
    quality_state = database.scalar("SELECT state FROM worker_quality WHERE username = ?", (name,)) or "active"
    reasons = sorted({f["reason"] for f in flags})
    study_status = person["study_status"]
    return {
        "study_id": person["study_id"],
        "study": person["study"] or "",
        "platform_worker_id": person["platform_worker_id"] or "",
        "username": name,
        "state": "study full"
        if person["turned_away_at"]
        else worker_state(study_status, quality_state, bool(person["disabled"])),
        "platform_status": person["platform_status"] or "",
        "quality": quality_state,
        "tasks_done": len(submitted),
        "submitted": sum(1 for t in submitted if not t["gold"]),
        "accepted_in_review": int(accepted or 0),
        "gold_correct": int(gold["correct"]),
        "gold_judged": int(gold["judged"]),
        "gold_pending": int(gold["pending"]),
        "gold_accuracy": gold_accuracy(int(gold["correct"]), int(gold["judged"])),
        "active_minutes": round(active_seconds(intervals) / 60, 1),
        "started_at": person["started_at"] or "",
        "finished_at": person["finished_at"] or "",
        "completion_minutes": _minutes_between(person["started_at"], person["finished_at"])
        if study_status == "finished"
        else None,
        "flags_open": sum(1 for f in flags if f["resolved_at"] is None),
        "flags_total": len(flags),
        "flag_reasons": " ".join(reasons),
        "first_at": min((t["leased_at"] for t in tasks), default=""),
        "last_at": max((t["finished_at"] or t["leased_at"] for t in tasks), default=""),
        "platform": _platform_words(person["platform"]),
        "end_reason": person["end_reason"] or "",
        "code": _code_earned(person),
    }


def _platform_words(platform: str | None) -> str:
    """The study's platform; an archived one says so (Mechanical Turk closed on 2026-09-30: records only)."""
    from backend.campaigns.studies import ARCHIVED

    if not platform:
        return ""
    return f"{platform} (archived: closed 2026-09-30)" if platform in ARCHIVED else platform


def _code_earned(person: dict[str, Any]) -> str:
    """The code the worker was shown, to check against the platform's: the completion code (or the partial-pay code
    for one who waited out with no task free), the screen-out code, or nothing."""
    status = person["study_status"]
    if status == "finished":
        waited = (person["end_reason"] or "").startswith("no task free")
        return (person["partial_code"] if waited and person["partial_code"] else person["completion_code"]) or ""
    return (person["screenout_code"] or "") if status == "screened_out" else ""


def worker_report(database: Database, username: str | None, study_id: str | None = None) -> list[dict[str, Any]]:
    """One row per worker per study (admins): see :data:`COLUMNS`. ``tasks_done`` counts what the quota counts
    (gold items too); ``submitted`` counts real tasks only, gold answers apart."""
    auth.require_role(database, username, "admin")
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    return [_worker_row(database, person, now) for person in _workers(database, study_id)]


def _cell(value: Any) -> str:
    r"""A CSV cell a spreadsheet shows as text: a leading = + - @ (or a tab or carriage return before one) would
    start a formula (OWASP, "CSV Injection"). Numbers are written as they are.

    >>> _cell("=HYPERLINK(1)"), _cell(0.75), _cell(None), _cell(-2), _cell("\t=1+2")
    ("'=HYPERLINK(1)", '0.75', '', '-2', "'\t=1+2")
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def report_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in COLUMNS])
    return out.getvalue()
