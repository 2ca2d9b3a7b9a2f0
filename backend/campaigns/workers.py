"""Study workers (issue 16 §1-2, issue 26): arriving by a study link, the qualification, the quota, finishing.

A worker's life in a study, one row of ``study_workers`` (status in brackets; the report's words in quotes):

1. the first visit of a valid link creates an annotator account bound to (study, platform worker id), with no
   password (it signs in by the link only) [started, "qualifying"]; with a qualification of size 0 they are
   qualified at once. A new id is let in only within the arrival limit and the study's places
   (backend/campaigns/arrivals.py);
2. the qualification, after the study's instructions: passing lets them into the pool [qualified, "working"]; a
   failed try shows the mistakes explained and, while tries are left (``qualification_attempts``), another
   quiz; only the last failed try shows the screen-out code and disables the account [screened_out];
3. tasks of the study's kind are handed out (:func:`may_hand_out`, called by the hand-out inside its
   transaction) until they submitted ``tasks_per_worker`` of them, or the study closes: then they see the
   completion code [finished];
4. leaving the study, running past its time limit, or the platform reporting the submission returned, timed
   out or rejected (backend/campaigns/prolific.py) ends it [returned]: their leases are freed at once.

A worker id that reached screened_out, finished or returned is never let in again: its later visits show what
it earned, and start nothing. One worker id has one live session: a new visit by the link ends the others.
Every change is audited; state changes run in one ``write()``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlite_utils

from backend import assignment, webhooks
from backend.accounts import sessions
from backend.accounts.auth import insert_user
from backend.campaigns import arrivals
from backend.campaigns.links import Visit
from backend.campaigns.qualification import QuizItem, QuizResult, draw_quiz, explain, score_quiz
from backend.campaigns.reservations import lab_may_take
from backend.campaigns.studies import WORK_TAB, Study, get_study, places_free, study_from_row
from backend.errors import PermissionDenied, ValidationError
from backend.settings import Settings
from backend.storage import Database, audit, utcnow

ACTIVE = ("started", "qualified")
CLOSED_WITH_WORK = "study closed"  # finished: the completion code for the tasks done
CLOSED_BEFORE_WORK = "study closed before their first task"  # screened out: the screen-out code
ENDED = ("screened_out", "finished", "returned")
_NAME_SAFE = re.compile(r"^[A-Za-z0-9_.@-]{1,48}$")


@dataclass(frozen=True)
class StudyWorker:
    id: int
    study_id: int
    platform_worker_id: str
    username: str
    status: str
    started_at: str
    qualified_at: str | None
    finished_at: str | None
    quiz_score: float | None
    params: dict[str, str]
    quiz_attempts: int = 0
    quiz_feedback: list[dict[str, Any]] | None = None  # the mistakes of the last failed try, explained
    platform_status: str | None = None  # the last status the platform reported (Prolific's webhook)
    placed_at: str | None = None  # when they took a place (started work); None: in the qualification, or turned away
    turned_away_at: str | None = None  # they passed when the last place was gone (screened out, screen-out code)
    end_reason: str | None = None  # why their part ended (quota done, study closed, no task free after waiting, ...)
    waiting_since: str | None = None  # when they first found no task free (backend/campaigns/waiting.py)


def _worker(row: Any) -> StudyWorker:
    row = dict(row)
    fields = {k: row[k] for k in StudyWorker.__dataclass_fields__ if k not in ("params", "quiz_feedback")}
    return StudyWorker(
        **fields,
        params=json.loads(row["params"]),
        quiz_feedback=json.loads(row["quiz_feedback"]) if row.get("quiz_feedback") else None,
    )


def worker_username(study_id: int, worker_id: str) -> str:
    """The account name of a study worker: ``s<study>-<platform id>``, or a digest of the id when it holds
    characters an account name may not.

    >>> worker_username(3, "5f2a9c")
    's3-5f2a9c'
    >>> worker_username(3, "a:b")
    's3-w6783a31eabf68ccc'
    """
    if _NAME_SAFE.match(worker_id):
        return f"s{study_id}-{worker_id}"
    return f"s{study_id}-w{hashlib.sha256(worker_id.encode()).hexdigest()[:16]}"


def _row_by_id(db: sqlite_utils.Database, study_id: int, worker_id: str) -> StudyWorker | None:
    row = db.conn.execute(
        "SELECT * FROM study_workers WHERE study_id = ? AND platform_worker_id = ?", (study_id, worker_id)
    ).fetchone()
    return _worker(row) if row else None


def row_by_user(db: sqlite_utils.Database, username: str) -> StudyWorker | None:
    row = db.conn.execute("SELECT * FROM study_workers WHERE username = ?", (username,)).fetchone()
    return _worker(row) if row else None


def submitted(db: sqlite_utils.Database, username: str, study: Study) -> int:
    """Tasks of the study's kind this worker submitted (their account belongs to this study only)."""
    return int(
        db.conn.execute(
            "SELECT count(*) FROM assignments WHERE annotator = ? AND kind = ? AND status = 'submitted'",
            (username, study.pool_kind),
        ).fetchone()[0]
    )


def set_status(db: sqlite_utils.Database, worker: StudyWorker, status: str, reason: str) -> StudyWorker:
    """Move an active worker to an ended status. Inside ``write()``. Finishing sends ``study.worker_finished``."""
    now = utcnow()
    db.conn.execute(
        "UPDATE study_workers SET status = ?, finished_at = ?, end_reason = ? WHERE id = ?",
        (status, now, reason, worker.id),
    )
    if status in ("screened_out", "returned"):  # out of the pool for good: no session, no lease, no sign-in
        db.conn.execute("UPDATE users SET disabled = 1 WHERE username = ?", (worker.username,))
        sessions.end_all_in(db, worker.username)
        assignment.release_leases(db, worker.username)
    audit(db, worker.username, f"study.{status}", str(worker.study_id), {"reason": reason})
    updated = row_by_user(db, worker.username)
    assert updated is not None
    if status == "finished":
        study = study_from_row(db.conn.execute("SELECT * FROM studies WHERE id = ?", (worker.study_id,)).fetchone())
        webhooks.emit(db, "study.worker_finished", _finished_event(db, study, updated, reason))
    return updated


def _finished_event(db: sqlite_utils.Database, study: Study, worker: StudyWorker, reason: str) -> dict[str, Any]:
    return {
        "study_id": study.id,
        "study": study.name,
        "platform": study.platform,
        "platform_worker_id": worker.platform_worker_id,
        "username": worker.username,
        "platform_params": worker.params,
        "tasks_done": submitted(db, worker.username, study),
        "started_at": worker.started_at,
        "finished_at": worker.finished_at,
        "reason": reason,
    }


def refresh_in(db: sqlite_utils.Database, study: Study, worker: StudyWorker) -> StudyWorker:
    """Apply what time and the study did to an active worker: the study closed (finished), the time limit
    passed (returned), the quota is done (finished). Inside ``write()``."""
    if worker.status not in ACTIVE:
        return worker
    if study.status == "closed":  # the completion code only for work done (issue 40 §5)
        if worker.status == "qualified" and submitted(db, worker.username, study) >= 1:
            return set_status(db, worker, "finished", CLOSED_WITH_WORK)
        return set_status(db, worker, "screened_out", CLOSED_BEFORE_WORK)
    deadline = datetime.fromisoformat(worker.started_at) + timedelta(minutes=study.time_limit_minutes)
    if datetime.now(UTC) > deadline:
        return set_status(db, worker, "returned", "time limit passed")
    if worker.status == "qualified" and submitted(db, worker.username, study) >= study.tasks_per_worker:
        return set_status(db, worker, "finished", "quota done")
    return worker


@dataclass(frozen=True)
class Arrival:
    study: Study
    worker: StudyWorker
    token: str | None  # a new session for the cookie; None when the worker's part has ended
    first_visit: bool


def _new_worker(db: sqlite_utils.Database, study: Study, visit: Visit) -> StudyWorker:
    """Create the worker and their account (their arrival is already counted). Inside ``write()``."""
    if study.archived:
        raise PermissionDenied(
            "This study ran on Amazon Mechanical Turk, which closed permanently on 2026-09-30, so it takes no new "
            "workers. Nothing was recorded for you."
        )
    if study.status != "open":
        raise PermissionDenied("This study is closed and takes no new workers. Please return it on the platform.")
    arrivals.check_places(db, study)  # every place already held: the full page now, not after the quiz
    username = worker_username(study.id, visit.worker_id)
    if not insert_user(db.conn, username, "annotator", source="study"):  # the name is taken by another account
        username = worker_username(study.id, f"{visit.worker_id}:{utcnow()}")
        insert_user(db.conn, username, "annotator", source="study")
    now = utcnow()
    qualified = study.qualification_size == 0  # no quiz: the place is taken with the first task (may_hand_out)
    db.conn.execute(
        """INSERT INTO study_workers (study_id, platform_worker_id, username, status, started_at, qualified_at, params)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (
            study.id,
            visit.worker_id,
            username,
            "qualified" if qualified else "started",
            now,
            now if qualified else None,
            json.dumps(visit.params),
        ),
    )
    audit(db, username, "study.arrive", str(study.id), {"platform_worker_id": visit.worker_id, **visit.params})
    return _row_by_id(db, study.id, visit.worker_id)  # type: ignore[return-value]


def take_place(db: sqlite_utils.Database, study: Study, worker: StudyWorker) -> StudyWorker:
    """The worker starts work: they take a place if one is free, else they are turned away (screened out, with
    the screen-out code: :func:`backend.campaigns.arrivals.full_link`). Inside the ``write()`` that qualifies them
    or hands them their first task, so two workers passing at once cannot both take the last place."""
    if worker.placed_at is not None or worker.status != "qualified":
        return worker
    if places_free(db, study):
        db.conn.execute("UPDATE study_workers SET placed_at = ? WHERE id = ?", (utcnow(), worker.id))
        audit(db, worker.username, "study.placed", str(study.id))
    else:
        db.conn.execute("UPDATE study_workers SET turned_away_at = ? WHERE id = ?", (utcnow(), worker.id))
        set_status(db, worker, "screened_out", "study full when they started work")
    updated = row_by_user(db, worker.username)
    assert updated is not None
    return updated


def _continue(
    db: sqlite_utils.Database, settings: Settings, study: Study, worker: StudyWorker, address: str
) -> Arrival:
    """A known worker id's visit: brought up to date and, while active, a new session. Inside ``write()``."""
    worker = refresh_in(db, study, worker)
    disabled = db.conn.execute("SELECT disabled FROM users WHERE username = ?", (worker.username,)).fetchone()[0]
    if worker.status in ACTIVE and disabled:
        raise PermissionDenied(
            "Your part in this study was stopped by its researchers. Please contact them through the platform."
        )
    token = None
    if worker.status in ACTIVE:
        ended = sessions.end_all_in(db, worker.username)  # one live session per worker id
        token = sessions.create_in(db, worker.username, settings.session_hours, address)
        if ended:
            audit(db, worker.username, "study.session_replaced", str(study.id), {"sessions_ended": ended})
    return Arrival(study, worker, token, False)


def _study_now(db: sqlite_utils.Database, study_id: int) -> Study:
    return study_from_row(db.conn.execute("SELECT * FROM studies WHERE id = ?", (study_id,)).fetchone())


def arrive(
    database: Database,
    settings: Settings,
    study: Study,
    visit: Visit,
    address: str,
    check_platform: Callable[[Study, Visit], None] | None = None,
) -> Arrival:
    """A checked visit of the study link (backend/campaigns/links.py:verify_visit).

    A known worker id continues (a new session while active; none after their part ended). A new id is first
    counted against its address's limit, whatever happens next (``TooManyArrivals`` past it); then
    ``check_platform`` (outside any transaction: Prolific's API, backend/campaigns/prolific_api.py) may refuse it
    (``ParticipantUnknown``); then the worker and their account are created (``StudyFull`` when every place is
    already held). Opening the link takes no place (:func:`take_place`)."""
    with database.write() as db:
        current = _study_now(db, study.id)
        worker = _row_by_id(db, current.id, visit.worker_id)
        if worker is not None:
            return _continue(db, settings, current, worker, address)
        refusal = arrivals.count_arrival(db, settings, current, address)
    if refusal is not None:  # counted (committed), then refused
        raise refusal
    if check_platform is not None:
        check_platform(study, visit)
    with database.write() as db:
        current = _study_now(db, study.id)
        worker = _row_by_id(db, current.id, visit.worker_id)  # the same id twice at once: the second continues
        if worker is not None:
            return _continue(db, settings, current, worker, address)
        worker = _new_worker(db, current, visit)
        arrival = _continue(db, settings, current, worker, address)
    return Arrival(arrival.study, arrival.worker, arrival.token, True)


def worker_in_study(database: Database, username: str | None, study_id: int) -> tuple[Study, StudyWorker]:
    """The signed-in worker of this study, brought up to date (time limit, quota, closing)."""
    study = get_study(database, study_id)
    with database.write() as db:
        worker = row_by_user(db, username) if username else None
        if worker is None or worker.study_id != study.id:
            raise PermissionDenied("Open this study from its link on the platform's page (your visit has no study).")
        worker = refresh_in(db, study, worker)
    return study, worker


def quiz_for(study: Study, worker: StudyWorker) -> list[QuizItem]:
    """The quiz of the worker's next try."""
    return draw_quiz(
        study.kind, study.qualification_size, study.id, worker.platform_worker_id, worker.quiz_attempts + 1
    )


def tries_left(study: Study, worker: StudyWorker) -> int:
    return max(study.qualification_attempts - worker.quiz_attempts, 0)


@dataclass(frozen=True)
class QualificationOutcome:
    worker: StudyWorker
    result: QuizResult
    mistakes: list[dict[str, Any]]
    tries_left: int


def take_qualification(
    database: Database, username: str | None, study_id: int, answers: dict[str, str]
) -> QualificationOutcome:
    """Score one try at the qualification: qualified; or, with tries left, the mistakes explained for the next
    try; or, on the last try, screened out (account disabled)."""
    study, worker = worker_in_study(database, username, study_id)
    if worker.status != "started":
        raise ValidationError("You have already passed or ended this study's qualification; it is not taken again.")
    items = quiz_for(study, worker)
    result = score_quiz(items, answers, study.pass_mark)
    mistakes = explain(items, answers, study.kind)
    with database.write() as db:
        current = row_by_user(db, worker.username)
        if current is None or current.status != "started" or current.quiz_attempts != worker.quiz_attempts:
            raise ValidationError("This try was already sent (from another tab?); open your study page again.")
        attempt = current.quiz_attempts + 1
        kept = {item.id: str(answers.get(item.id, ""))[:4] for item in items}
        db.conn.execute(
            "UPDATE study_workers SET quiz_score = ?, quiz_answers = ?, quiz_attempts = ?, quiz_feedback = ? WHERE id = ?",
            (result.score, json.dumps(kept), attempt, None if result.passed else json.dumps(mistakes), current.id),
        )
        audit(
            db,
            current.username,
            "study.qualification",
            str(study.id),
            {
                "right": result.right,
                "of": result.asked,
                "attempt": attempt,
                "of_attempts": study.qualification_attempts,
            },
        )
        if result.passed:  # they start work now: a place, or the study is full for them
            db.conn.execute(
                "UPDATE study_workers SET status = 'qualified', qualified_at = ? WHERE id = ?", (utcnow(), current.id)
            )
            passed = row_by_user(db, current.username)
            assert passed is not None
            updated: StudyWorker | None = take_place(db, _study_now(db, study.id), passed)
        elif attempt >= study.qualification_attempts:
            reason = f"qualification {result.right}/{result.asked} on the last of {study.qualification_attempts} tries"
            updated = set_status(db, current, "screened_out", reason)
        else:
            updated = row_by_user(db, current.username)
    assert updated is not None
    return QualificationOutcome(updated, result, mistakes, tries_left(study, updated))


def leave_study(database: Database, username: str | None, study_id: int) -> StudyWorker:
    """The worker leaves (returns) the study: their leases are freed and the account closed."""
    study, worker = worker_in_study(database, username, study_id)
    with database.write() as db:
        return set_status(db, worker, "returned", "left the study") if worker.status in ACTIVE else worker


def may_hand_out(db: sqlite_utils.Database, username: str, pool_kind: str) -> bool:
    """Whether the hand-out may lease a task of ``pool_kind`` to ``username``; call it inside the hand-out's
    ``write()``. Anyone who is not a study worker: True while the open studies' reserved tasks are not touched
    (backend/campaigns/reservations.py:lab_may_take). A study worker: only while qualified, in time, under
    the quota and in an open study, and only for their study's kind (False otherwise, and their status is
    brought up to date); before the qualification, or after screening out or returning: PermissionDenied."""
    worker = row_by_user(db, username)
    if worker is None:  # a lab annotator: not into the tasks the open studies reserve (issue 40 §4)
        return lab_may_take(db, pool_kind, username)
    row = db.conn.execute("SELECT * FROM studies WHERE id = ?", (worker.study_id,)).fetchone()
    study, before = study_from_row(row), worker.status
    worker = refresh_in(db, study, worker)  # a change made now must be kept: no raising after it
    if worker.status == "qualified" and study.pool_kind == pool_kind:
        worker = take_place(db, study, worker)  # no qualification: the first task is when they start work
    if worker.status == "started":
        raise PermissionDenied("Take the study's qualification first: open your study link again.")
    if worker.status in ("screened_out", "returned") and worker.status == before:
        raise PermissionDenied("Your part in this study has ended; there are no more tasks for you.")
    return worker.status == "qualified" and study.pool_kind == pool_kind


def earned_code(study: Study, worker: StudyWorker) -> str:
    """The code a finished worker is paid with: the completion code, or, for one who waited out with no task free
    (backend/campaigns/waiting.py), the owner's partial-pay code when the study has one."""
    if worker.end_reason and worker.end_reason.startswith("no task free") and study.partial_code:
        return study.partial_code
    return study.completion_code


def study_view(database: Database, username: str) -> dict[str, Any] | None:
    """What a worker's task page says about their study (None for anyone who is no study worker): tasks done
    of the quota and, once finished, the completion code and the return link."""
    worker_row = database.query_one("SELECT * FROM study_workers WHERE username = ?", (username,))
    if worker_row is None:
        return None
    worker = _worker(worker_row)
    study = get_study(database, worker.study_id)
    done = submitted(database.db, username, study)
    finished = worker.status == "finished"
    full = worker.turned_away_at is not None  # started work when the last place had gone: the screen-out code
    closed_early = worker.status == "screened_out" and worker.end_reason == CLOSED_BEFORE_WORK
    code = earned_code(study, worker)
    return {
        "study_id": study.id,
        "name": study.name,
        "kind": study.kind,
        "work_tab": WORK_TAB[study.kind],
        "status": worker.status,
        "done": min(done, study.tasks_per_worker),
        "quota": study.tasks_per_worker,
        "completion_code": code if finished else None,
        "return_url": study.return_link(code) if finished else None,
        "end_reason": worker.end_reason,
        "full": full,
        "closed_early": closed_early,
        "screenout_code": study.screenout_code if (full or closed_early) else None,
        "screenout_url": study.return_link(study.screenout_code)
        if (full or closed_early) and study.screenout_code
        else None,
        "page": f"/study/{study.id}/here",  # from the server's root: the tab's page is at /worker-<tab>/
    }


def my_study(database: Database, username: str | None) -> dict[str, Any]:
    """The signed-in study worker's own state (the ``study_me`` endpoint): :func:`study_view` plus, while they have
    not passed the qualification, the questions of their next try (without the answers), the tries left and the
    mistakes of their last try explained."""
    row = database.query_one("SELECT study_id FROM study_workers WHERE username = ?", (username or "",))
    if row is None:
        raise PermissionDenied("You are not in a crowd study: open your study link from the platform's page first.")
    study, worker = worker_in_study(database, username, row["study_id"])
    view = study_view(database, worker.username)
    assert view is not None
    if worker.status == "started":
        view["qualification"] = [
            {"id": item.id, "prompt": item.prompt, "options": list(item.options)} for item in quiz_for(study, worker)
        ]
        view["pass_mark"] = study.pass_mark
        view["tries_left"] = tries_left(study, worker)
        view["mistakes"] = worker.quiz_feedback or []
    return view


def continue_link(database: Database, username: str | None, base_url: str) -> tuple[Study, StudyWorker, str] | None:
    """A study worker's own study link (their id and the platform parameters filled in), for the page they see
    after logging out; None for anyone who is no study worker."""
    from backend.campaigns.links import worker_link

    row = database.query_one("SELECT * FROM study_workers WHERE username = ?", (username or "",))
    if row is None:
        return None
    worker = _worker(row)
    study = get_study(database, worker.study_id)
    extra = {k: v for k, v in worker.params.items() if k != study.worker_param}
    return study, worker, worker_link(database, study, base_url, worker.platform_worker_id, **extra)
