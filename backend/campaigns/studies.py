"""Studies (crowd campaigns, issue 16 §1): create, list, close, and the counts admins watch.

A study fixes the kind of work its workers do (``intents``, ``planning`` or ``vqa``), how many tasks one
worker does (``tasks_per_worker``), a time limit from the first visit, the completion and screen-out codes, the
platform's return URL (``{code}`` in it is replaced by the code the worker earned), which URL parameters carry
the platform's worker / study / session ids (:data:`PLATFORMS`), and the qualification's size and pass mark
(backend/campaigns/qualification.py) with its number of tries, and its **places**. Every function that changes or
reveals a study checks the admin role, except when called by the operator's own shell (``operator=True``: the
``python -m backend study`` commands).

A study that cannot pay nobody (issue 26 §3): it has a completion code, a screen-out code when it has a
qualification, and a name no other open study has (checked here, and by a unique index on open names).

Places (issue 26 §5, issue 40 §1): a place is held by a worker who works, not by a visit. Opening the link,
reading the instructions or sitting in the qualification takes none; a worker takes one when they start work
(passing the qualification, or their first task where there is none: :func:`take_place`, inside the same
``BEGIN IMMEDIATE`` transaction, so exactly ``places`` workers start), and holds it until they finish, are
screened out or return. With no number given (``places`` NULL) the limit is *what the quota needs*: one more
worker may start only while the open slots of the study's pool are more than the tasks the placed workers still
owe (:func:`places_free`). Who passes when the last place is gone is *turned away*: screened out (they are paid
the screen-out code) and counted apart (``full``).
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import statistics
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import sqlite_utils

from backend import webhooks
from backend.accounts.admin import acting_admin
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
    worker_id: re.Pattern[str]  # the shape of the platform's worker ids (docs/decisions.md, "Worker ids")
    worker_id_words: str  # that shape, said to a worker whose link does not carry one
    lowercase: bool = False  # ids are compared lower-cased (Prolific's hex ids)


PLATFORMS = {
    # Prolific ids are 24 hexadecimal characters (MongoDB ObjectIds), e.g. 5f00aa11bb22cc33dd44ee55
    "prolific": Platform(
        "PROLIFIC_PID",
        "STUDY_ID",
        "SESSION_ID",
        "https://app.prolific.com/submissions/complete?cc={code}",
        re.compile(r"^[0-9a-f]{24}$"),
        "the 24 letters and digits of your Prolific ID",
        lowercase=True,
    ),
    # Mechanical Turk appends these to an ExternalQuestion URL; the HIT is submitted to turkSubmitTo. A WorkerId is
    # the API's CustomerId: "A" then capitals and digits, 1-64 characters (pattern ^A[A-Z0-9]+$)
    "mturk": Platform(
        "workerId",
        "hitId",
        "assignmentId",
        "",
        re.compile(r"^A[A-Z0-9]{1,63}$"),
        "your Mechanical Turk Worker ID (an A followed by capital letters and digits)",
    ),
    # CloudResearch Connect (where MTurk Toolkit users were moved) appends participantId, assignmentId and projectId
    # to the study URL; its completion redirect is https://connect.cloudresearch.com/participant/project/<code>/complete
    # (Connect's help, "Project Completion"; docs/decisions.md, "Platforms as they are in December 2026")
    "connect": Platform(
        "participantId",
        "projectId",
        "assignmentId",
        "https://connect.cloudresearch.com/participant/project/{code}/complete",
        re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
        "your CloudResearch Connect participant ID (letters and digits)",
    ),
    # any other platform (SONA, Clickworker, Microworkers, a lab's own pool): the owner names the id parameter
    "generic": Platform(
        "worker", None, None, "", re.compile(r"^[A-Za-z0-9_.@:-]{1,128}$"), "a worker id of letters and digits"
    ),
}
# platforms that closed: their studies keep their records and reports, and no new study or worker may start
ARCHIVED = {
    "mturk": (
        "Amazon Mechanical Turk closed permanently on 2026-09-30 (it took no new requesters from 2026-07-30), so "
        "no new Mechanical Turk study can be made; existing ones keep their records and reports. Use connect "
        "(CloudResearch Connect, where MTurk Toolkit users were moved), prolific, or generic"
    ),
}
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,39}$")
MAX_ATTEMPTS = 5


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
    qualification_attempts: int
    places: int | None  # None: what the quota needs (:func:`places_free`)
    status: str
    created_by: str
    created_at: str
    closed_at: str | None
    prolific_study_id: str = ""  # with the owner's API token: new ids are checked against Prolific (issue 40 §1)
    gold_rate: float | None = None  # the study's share of gold items (None on older studies: the server's gold_rate)
    partial_code: str = (
        ""  # paid to a worker who waited past study_wait_minutes with no task free ("" : the completion code)
    )

    @property
    def archived(self) -> bool:
        """The study's platform has closed (Mechanical Turk): records and reports only, nobody new."""
        return self.platform in ARCHIVED

    @property
    def pool_kind(self) -> str:
        return POOL_KIND[self.kind]

    def return_link(self, code: str) -> str:
        """The platform's return URL with the code filled in ("" when the study has none)."""
        return self.return_url.replace("{code}", code) if self.return_url else ""

    def public(self) -> dict[str, Any]:
        """What admins and the API see (never the secret)."""
        return asdict(self)


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


def _check_numbers(kind: str, tasks: int, minutes: int, size: int, pass_mark: float, attempts: int) -> None:
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
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise ValidationError(f"the qualification may be tried 1 to {MAX_ATTEMPTS} times (the default is 2)")


def _check_codes(completion: str, screenout: str, size: int) -> None:
    """Codes that let the platform pay: a completion code always, a screen-out code when there is a quiz."""
    problems = []
    if not completion:
        problems.append("give a completion code: without one a worker who finishes cannot be paid")
    if size > 0 and not screenout:
        problems.append(
            "give a screen-out code: workers who do not pass the qualification need one to be paid for their time "
            "(or set the qualification size to 0)"
        )
    if completion and completion == screenout:
        problems.append("the completion and screen-out codes must differ, so the platform can tell them apart")
    if problems:
        raise ValidationError(problems)


def _check_prolific(platform: str, token: str, study_id: str) -> tuple[str, str]:
    """The Prolific check's token and study id: both or neither, for a Prolific study only."""
    token, study_id = (token or "").strip(), (study_id or "").strip().lower()
    if not token and not study_id:
        return "", ""
    if platform != "prolific":
        raise ValidationError("a Prolific API token checks Prolific participants: choose the platform prolific")
    if not token or len(token) > 500 or any(ch.isspace() for ch in token):
        raise ValidationError("give the Prolific API token (Prolific: Settings, API tokens) without spaces")
    if not re.fullmatch(r"[0-9a-f]{24}", study_id):
        raise ValidationError(
            "give the study's id on Prolific (24 letters and digits, in the study's address on Prolific) beside the "
            "token: arrivals are checked against that study's submissions"
        )
    return token, study_id


def open_platforms() -> list[str]:
    """The platforms a new study may use (Mechanical Turk is archived)."""
    return [name for name in PLATFORMS if name not in ARCHIVED]


def _check_worker_param(platform: str, name: str) -> str:
    """The generic platform's id parameter, as the owner named it ("" : the default)."""
    name = (name or "").strip()
    if not name:
        return ""
    if platform != "generic":
        raise ValidationError(f"the id parameter is fixed by {platform}; name your own only on the generic platform")
    if not _PARAM_NAME.match(name) or name == "sig":
        raise ValidationError(
            f"the id parameter must be a URL parameter name: a letter, then letters, digits, '_', '.' or '-', at most "
            f"40 (and not 'sig'); you wrote {name[:50]!r}"
        )
    return name


def prolific_token(db: sqlite_utils.Database, study_id: int) -> str:
    """The owner's Prolific API token for this study ("" when none): for the arrival check only."""
    row = db.conn.execute("SELECT prolific_token FROM studies WHERE id = ?", (int(study_id),)).fetchone()
    return str(row[0]) if row else ""


def _open_name_taken(db: sqlite_utils.Database, name: str) -> bool:
    return (
        db.conn.execute(
            "SELECT 1 FROM studies WHERE status = 'open' AND lower(trim(name)) = lower(trim(?))", (name,)
        ).fetchone()
        is not None
    )


def _check_name_and_platform(name: str, platform: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationError("give the study a name (at most 200 characters)")
    if platform in ARCHIVED:
        raise ValidationError(ARCHIVED[platform] + ".")
    if platform not in PLATFORMS:
        raise ValidationError(f"unknown platform {platform!r}; choose one of {', '.join(open_platforms())}")
    return name


def _check_places(places: int | None) -> int | None:
    """The most workers in the study at once; None (or 0): what the quota needs."""
    if places is not None and not 0 <= int(places) <= 100_000:
        raise ValidationError(
            "places is the most workers in the study at once: 1 or more (0 or empty: what the quota needs)"
        )
    return int(places) if places else None


def _insert_study(database: Database, row: dict[str, Any]) -> int:
    """The study's row, its name free among the open studies (checked again by the unique index); audited."""
    name = row["name"]
    sql = f"INSERT INTO studies ({', '.join(row)}) VALUES ({', '.join(':' + k for k in row)}) RETURNING id"
    with database.write() as db:
        if _open_name_taken(db, name):
            raise ValidationError(f"an open study is already named {name!r}: choose another name, or close that one")
        try:
            study_id = int(db.conn.execute(sql, row).fetchone()[0])
        except sqlite3.IntegrityError as exc:  # another process took the name in between (the unique index)
            raise ValidationError(f"an open study is already named {name!r}: choose another name") from exc
        audit(
            db,
            row["created_by"],
            "study.create",
            str(study_id),
            {"name": name, "kind": row["kind"], "platform": row["platform"]},
        )
    return study_id


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
    qualification_attempts: int = 2,
    places: int | None = None,
    prolific_token: str = "",
    prolific_study_id: str = "",
    worker_param: str = "",
    gold_rate: float = 0.0,
    partial_code: str = "",
    operator: bool = False,
) -> Study:
    """Create an open study with a fresh secret. ``return_url`` None takes the platform's default; ``places``
    None (or 0) means what the quota needs. ``prolific_token`` (a Prolific API token) with ``prolific_study_id``
    (the study's id on Prolific): every new worker id is checked against Prolific's submissions of that study
    (backend/campaigns/prolific_api.py); the token is kept but never shown. ``worker_param``: the generic
    platform's id parameter (default ``worker``; SONA: ``survey_code``). ``gold_rate``: the share of gold items
    among this study's tasks (lab annotators follow the server's ``gold_rate``). ``partial_code``: what a worker
    stranded with no task free is paid with (backend/campaigns/waiting.py); empty: the completion code."""
    admin = acting_admin(database, username, operator)
    name = _check_name_and_platform(name, platform)
    attempts = int(qualification_attempts)
    _check_numbers(
        kind, int(tasks_per_worker), int(time_limit_minutes), int(qualification_size), float(pass_mark), attempts
    )
    places = _check_places(places)
    completion, screenout = (
        _clean_code("completion code", completion_code),
        _clean_code("screen-out code", screenout_code),
    )
    _check_codes(completion, screenout, int(qualification_size))
    token, prolific_study = _check_prolific(platform, prolific_token, prolific_study_id)
    preset = PLATFORMS[platform]
    id_param = _check_worker_param(platform, worker_param) or preset.worker_param
    if not 0.0 <= float(gold_rate) < 1.0:
        raise ValidationError("the gold rate is a share of the tasks, from 0 (no gold) to below 1 (e.g. 0.2)")
    partial = _clean_code("partial-pay code", partial_code)
    row = {
        "name": name,
        "kind": kind,
        "tasks_per_worker": int(tasks_per_worker),
        "time_limit_minutes": int(time_limit_minutes),
        "completion_code": completion,
        "screenout_code": screenout,
        "return_url": _clean_url(preset.return_url if return_url is None else return_url),
        "platform": platform,
        "worker_param": id_param,
        "gold_rate": float(gold_rate),
        "partial_code": partial,
        "study_param": preset.study_param,
        "session_param": preset.session_param,
        "qualification_size": int(qualification_size),
        "pass_mark": float(pass_mark),
        "qualification_attempts": attempts,
        "places": places,
        "prolific_token": token,
        "prolific_study_id": prolific_study,
        "secret": secrets.token_urlsafe(32),
        "created_by": admin,
        "created_at": utcnow(),
    }
    study_id = _insert_study(database, row)
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


def closing_preview(database: Database, username: str | None, study_id: int, operator: bool = False) -> dict[str, Any]:
    """What closing a study would do, for the admin's confirmation: who is mid-study and what they will see."""
    acting_admin(database, username, operator)
    study = get_study(database, study_id)
    counts = _counts(database, study.id)
    mid = counts["qualifying"] + counts["working"]
    with_work = int(
        database.scalar(
            """SELECT count(*) FROM study_workers w WHERE w.study_id = ? AND w.status = 'qualified'
               AND EXISTS (SELECT 1 FROM assignments a WHERE a.annotator = w.username AND a.kind = ?
                           AND a.status = 'submitted')""",
            (study.id, study.pool_kind),
        )
        or 0
    )
    without_work = mid - with_work
    screenout = (
        f"the screen-out code {study.screenout_code}"
        if study.screenout_code
        else "no code (the study has no screen-out code: pay them on the platform if you wish)"
    )
    effect = (
        f"Closing study {study.id} (“{study.name}”) cannot be undone: nobody new may start. "
        f"{with_work} worker(s) who did at least one task will be shown the completion code on their next page or "
        f"task and count as finished (pay them); a task they hold can still be submitted. {without_work} worker(s) "
        f"still in the qualification or without a task done ({counts['qualifying']} in the qualification) get "
        f"{screenout}."
    )
    return {
        "study_id": study.id,
        "name": study.name,
        "status": study.status,
        "mid_study": mid,
        "completion_on_close": with_work,
        "screenout_on_close": without_work,
        "effect": effect,
        **counts,
    }


def close_study(database: Database, username: str | None, study_id: int, operator: bool = False) -> Study:
    """Close a study: nobody new may start, and workers still in it are shown their completion code on their
    next visit or task (backend/campaigns/workers.py). Sends ``study.completed`` (backend/webhooks)."""
    admin = acting_admin(database, username, operator)
    get_study(database, study_id)  # NotFound for a wrong number
    with database.write() as db:
        changed = db.conn.execute(
            "UPDATE studies SET status = 'closed', closed_at = ? WHERE id = ? AND status = 'open'",
            (utcnow(), int(study_id)),
        ).rowcount
        if changed:
            audit(db, admin, "study.close", str(study_id))
            closed = study_from_row(db.conn.execute("SELECT * FROM studies WHERE id = ?", (int(study_id),)).fetchone())
            webhooks.emit(db, "study.completed", _event_data(db, closed))
    return get_study(database, study_id)


def _event_data(db: sqlite_utils.Database, study: Study) -> dict[str, Any]:
    counts = dict(
        db.conn.execute(
            "SELECT status, count(*) FROM study_workers WHERE study_id = ? GROUP BY status", (study.id,)
        ).fetchall()
    )
    return {
        "study_id": study.id,
        "name": study.name,
        "kind": study.kind,
        "platform": study.platform,
        "closed_at": study.closed_at,
        "workers": {status: int(counts.get(status, 0)) for status in WORKER_STATUSES},
    }


WORKER_STATUSES = ("started", "qualified", "screened_out", "finished", "returned")


def places_free(db: sqlite_utils.Database, study: Study) -> bool:
    """Whether one more worker may take a place now (inside ``write()``, with the taking).

    Only placed workers count (``placed_at`` set, still working): a visit or a worker in the qualification holds
    nothing. With ``places`` set: fewer than ``places`` of them. Without: what the quota needs, i.e. the open slots
    of the pool (N minus the submissions of each open task of the study's kind) are more than the tasks the placed
    workers still owe (``tasks_per_worker`` minus what each submitted). By hand: 10 open slots, tasks_per_worker 4,
    two workers placed, one with 1 task done: they owe 3 + 4 = 7 < 10, so a third may start; once the third is in
    they owe 11 >= 10, and a fourth is turned away.
    """
    if study.places is not None:
        return placed_count(db, study) < study.places
    return open_slots(db, study.pool_kind) > owed_by_placed(db, study)


def placed_count(db: sqlite_utils.Database, study: Study) -> int:
    """Workers of the study holding a place now."""
    return int(
        db.conn.execute(
            "SELECT count(*) FROM study_workers WHERE study_id = ? AND status = 'qualified' AND placed_at IS NOT NULL",
            (study.id,),
        ).fetchone()[0]
    )


def owed_by_placed(db: sqlite_utils.Database, study: Study) -> int:
    """Tasks the placed workers of the study still owe (their quota minus what each submitted)."""
    rows = db.conn.execute(
        """SELECT (SELECT count(*) FROM assignments a WHERE a.annotator = w.username AND a.kind = ?
                   AND a.status = 'submitted') AS done
           FROM study_workers w WHERE w.study_id = ? AND w.status = 'qualified' AND w.placed_at IS NOT NULL""",
        (study.pool_kind, study.id),
    ).fetchall()
    return sum(max(study.tasks_per_worker - int(row["done"]), 0) for row in rows)


def open_slots(db: sqlite_utils.Database, pool_kind: str) -> int:
    """Submissions the pool of ``pool_kind`` still needs: N minus the submissions of each open task's round."""
    return int(
        db.conn.execute(
            """SELECT coalesce(sum(max(t.needed - (SELECT count(*) FROM assignments a WHERE a.kind = t.kind
                   AND a.item_id = t.item_id AND a.round = t.round AND a.status = 'submitted'), 0)), 0)
               FROM tasks t WHERE t.kind = ? AND t.status = 'open'""",
            (pool_kind,),
        ).fetchone()[0]
    )


def _counts(database: Database, study_id: int) -> dict[str, Any]:
    rows = database.query(
        "SELECT status, qualified_at, started_at, finished_at, placed_at, turned_away_at FROM study_workers "
        "WHERE study_id = ?",
        (study_id,),
    )
    minutes = [
        (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds() / 60
        for r in rows
        if r["status"] == "finished" and r["finished_at"]
    ]
    return {
        "started": len(rows),
        "qualifying": sum(r["status"] == "started" for r in rows),
        "placed": sum(r["placed_at"] is not None for r in rows),
        "full": sum(r["turned_away_at"] is not None for r in rows),
        "working": sum(r["status"] == "qualified" for r in rows),
        "qualified": sum(r["qualified_at"] is not None for r in rows),
        "screened_out": sum(r["status"] == "screened_out" for r in rows),
        "finished": sum(r["status"] == "finished" for r in rows),
        "returned": sum(r["status"] == "returned" for r in rows),
        "median_minutes": round(statistics.median(minutes), 1) if minutes else None,
    }


def study_stats(database: Database, username: str | None, study_id: int, operator: bool = False) -> dict[str, Any]:
    """Per study: workers started (everyone who arrived), qualifying (in the quiz now), placed (took a place:
    started work), full (passed when the last place was gone: turned away with the screen-out code), working (doing
    tasks now), qualified (passed the quiz), screened out (turned-away ones included), finished, returned (left, ran
    out of time, or returned on the platform), and the median minutes from first visit to finishing."""
    acting_admin(database, username, operator)
    study = get_study(database, study_id)
    return {"study_id": study.id, "name": study.name, "status": study.status, **_counts(database, study.id)}
