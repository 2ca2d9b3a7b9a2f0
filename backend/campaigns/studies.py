"""Studies (crowd campaigns, issue 16 §1): create, list, close, and the counts admins watch.

A study fixes the kind of work its workers do (``intents``, ``planning`` or ``vqa``), how many tasks one
worker does (``tasks_per_worker``), a time limit from the first visit, the completion and screen-out codes, the
platform's return URL (``{code}`` in it is replaced by the code the worker earned), which URL parameters carry
the platform's worker / study / session ids (:data:`PLATFORMS`), and the qualification's size and pass mark
(backend/campaigns/qualification.py). Every function that changes or reveals a study checks the admin role,
except when called by the operator's own shell (``operator=True``: the ``python -m backend study`` commands).
"""

from __future__ import annotations

import secrets
import statistics
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from backend.accounts import auth
from backend.errors import NotFound, ValidationError
from backend.storage import Database, audit, utcnow

KINDS = ("intents", "planning", "vqa")
# the assignment kind (backend/assignment) whose submissions count toward a worker's quota, and the tab they work in
POOL_KIND = {"intents": "intent", "planning": "planning", "vqa": "vqa_answer"}
WORK_TAB = {"intents": "intents", "planning": "planning", "vqa": "vqa"}


@dataclass(frozen=True)
class Platform:
    worker_param: str
    study_param: str | None
    session_param: str | None
    return_url: str  # the default; ``{code}`` is replaced


PLATFORMS = {
    "prolific": Platform(
        "PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "https://app.prolific.com/submissions/complete?cc={code}"
    ),
    # Mechanical Turk appends these to an ExternalQuestion URL; the HIT is submitted to turkSubmitTo
    "mturk": Platform("workerId", "hitId", "assignmentId", ""),
    "generic": Platform("worker", None, None, ""),
}


@dataclass(frozen=True)
class Study:
    id: int
    name: str
    kind: str
    tasks_per_worker: int
    time_limit_minutes: int
    completion_code: str
    screenout_code: str
    return_url: str
    platform: str
    worker_param: str
    study_param: str | None
    session_param: str | None
    qualification_size: int
    pass_mark: float
    status: str
    created_by: str
    created_at: str
    closed_at: str | None

    @property
    def pool_kind(self) -> str:
        return POOL_KIND[self.kind]

    def return_link(self, code: str) -> str:
        """The platform's return URL with the code filled in ("" when the study has none)."""
        return self.return_url.replace("{code}", code) if self.return_url else ""

    def public(self) -> dict[str, Any]:
        """What admins and the API see (never the secret)."""
        return asdict(self)


def acting_admin(database: Database, username: str | None, operator: bool = False) -> str:
    """The name to audit: the signed-in admin (checked), or ``cli`` for the operator's shell."""
    return "cli" if operator else auth.require_role(database, username, "admin").username


def study_from_row(row: Any) -> Study:
    fields = Study.__dataclass_fields__
    return Study(**{name: row[name] for name in fields})


def _clean_code(label: str, code: str) -> str:
    code = (code or "").strip()
    if len(code) > 64 or any(not (ch.isalnum() or ch in "-_") for ch in code):
        raise ValidationError(f"the {label} must be at most 64 letters, digits, '-' or '_' (you wrote {code[:70]!r})")
    return code


def _clean_url(url: str) -> str:
    url = (url or "").strip()
    if url and (urlsplit(url).scheme not in {"https", "http"} or not urlsplit(url).netloc or len(url) > 500):
        raise ValidationError(f"the return URL must be an http(s) address (you wrote {url[:80]!r})")
    return url


def _check_numbers(kind: str, tasks: int, minutes: int, size: int, pass_mark: float) -> None:
    from backend.campaigns.qualification import pool_for

    if kind not in KINDS:
        raise ValidationError(f"unknown kind of work {kind!r}; choose one of {', '.join(KINDS)}")
    if not 1 <= tasks <= 1000:
        raise ValidationError("tasks per worker must be between 1 and 1000")
    if not 1 <= minutes <= 10_000:
        raise ValidationError("the time limit must be between 1 and 10000 minutes")
    available = len(pool_for(kind))
    if not 0 <= size <= available:
        raise ValidationError(f"the qualification for {kind} has {available} questions: choose a size from 0 to that")
    if not 0.0 <= pass_mark <= 1.0:
        raise ValidationError("the pass mark is a share of right answers, from 0 to 1 (e.g. 0.8)")


def create_study(
    database: Database,
    username: str | None,
    *,
    name: str,
    kind: str,
    tasks_per_worker: int,
    time_limit_minutes: int = 60,
    completion_code: str = "",
    screenout_code: str = "",
    return_url: str | None = None,
    platform: str = "prolific",
    qualification_size: int = 5,
    pass_mark: float = 0.8,
    operator: bool = False,
) -> Study:
    """Create an open study with a fresh secret. ``return_url`` None takes the platform's default."""
    admin = acting_admin(database, username, operator)
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationError("give the study a name (at most 200 characters)")
    if platform not in PLATFORMS:
        raise ValidationError(f"unknown platform {platform!r}; choose one of {', '.join(PLATFORMS)}")
    _check_numbers(kind, int(tasks_per_worker), int(time_limit_minutes), int(qualification_size), float(pass_mark))
    completion, screenout = (
        _clean_code("completion code", completion_code),
        _clean_code("screen-out code", screenout_code),
    )
    preset = PLATFORMS[platform]
    url = _clean_url(preset.return_url if return_url is None else return_url)
    if not completion and not url:
        raise ValidationError("give a completion code or a return URL, so workers can prove they finished")
    with database.write() as db:
        study_id = db.conn.execute(
            """INSERT INTO studies (name, kind, tasks_per_worker, time_limit_minutes, completion_code, screenout_code,
                   return_url, platform, worker_param, study_param, session_param, qualification_size, pass_mark,
                   secret, created_by, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
            (
                name,
                kind,
                int(tasks_per_worker),
                int(time_limit_minutes),
                completion,
                screenout,
                url,
                platform,
                preset.worker_param,
                preset.study_param,
                preset.session_param,
                int(qualification_size),
                float(pass_mark),
                secrets.token_urlsafe(32),
                admin,
                utcnow(),
            ),
        ).fetchone()[0]
        audit(db, admin, "study.create", str(study_id), {"name": name, "kind": kind, "platform": platform})
    return get_study(database, study_id)


def get_study(database: Database, study_id: int) -> Study:
    """The study (no role check: the study page needs it for anyone holding a link; it never shows the secret)."""
    row = database.query_one("SELECT * FROM studies WHERE id = ?", (int(study_id),))
    if row is None:
        raise NotFound(f"there is no study {study_id}; check the link or the study number")
    return study_from_row(row)


def list_studies(database: Database, username: str | None, operator: bool = False) -> list[dict[str, Any]]:
    """Every study, newest first, with its counts (:func:`study_stats`)."""
    acting_admin(database, username, operator)
    rows = database.query("SELECT * FROM studies ORDER BY id DESC")
    return [{**study_from_row(row).public(), **_counts(database, row["id"])} for row in rows]


def close_study(database: Database, username: str | None, study_id: int, operator: bool = False) -> Study:
    """Close a study: nobody new may start, and workers still in it are shown their completion code on their
    next visit or task (backend/campaigns/workers.py)."""
    admin = acting_admin(database, username, operator)
    get_study(database, study_id)  # NotFound for a wrong number
    with database.write() as db:
        changed = db.conn.execute(
            "UPDATE studies SET status = 'closed', closed_at = ? WHERE id = ? AND status = 'open'",
            (utcnow(), int(study_id)),
        ).rowcount
        if changed:
            audit(db, admin, "study.close", str(study_id))
    return get_study(database, study_id)


def _counts(database: Database, study_id: int) -> dict[str, Any]:
    rows = database.query(
        "SELECT status, qualified_at, started_at, finished_at FROM study_workers WHERE study_id = ?", (study_id,)
    )
    minutes = [
        (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds() / 60
        for r in rows
        if r["status"] == "finished" and r["finished_at"]
    ]
    return {
        "started": len(rows),
        "qualified": sum(r["qualified_at"] is not None for r in rows),
        "screened_out": sum(r["status"] == "screened_out" for r in rows),
        "finished": sum(r["status"] == "finished" for r in rows),
        "returned": sum(r["status"] == "returned" for r in rows),
        "median_minutes": round(statistics.median(minutes), 1) if minutes else None,
    }


def study_stats(database: Database, username: str | None, study_id: int, operator: bool = False) -> dict[str, Any]:
    """Per study: workers started (everyone who arrived), qualified (passed the quiz), screened out, finished,
    returned (left or ran out of time), and the median minutes from first visit to finishing."""
    acting_admin(database, username, operator)
    study = get_study(database, study_id)
    return {"study_id": study.id, "name": study.name, "status": study.status, **_counts(database, study.id)}
