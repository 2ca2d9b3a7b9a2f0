"""Intent annotation: hand out sequences, save drafts, accept submissions, skip.

Every function takes the caller's user name and checks the role itself: the Gradio handlers and the
named API endpoints (``intent_next``, ``intent_submit``, ``intent_skip``) are thin shells over these.
Results are plain dicts, so they travel as JSON.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlite_utils

from backend import assignment, webhooks
from backend.accounts import auth
from backend.campaigns import gold, quality
from backend.campaigns import workers as study_workers
from backend.errors import ValidationError, WatchTooShort
from backend.intents import watching
from backend.intents.rules import check_intent_pair
from backend.settings import Settings
from backend.storage import Database, audit, utcnow
from backend.vilpact.sequences import Sequence, get_sequence
from backend.vilpact.video import PLAYBACK_SPEEDS, servable_video, video_facts

KIND = "intent"
WATCH_CLOCK_SLACK_S = 0.5  # rounding in the watch-time floor (the lease and the submit are both read on the server)


def _task_view(database: Database, settings: Settings, lease: assignment.Lease, annotator: str) -> dict[str, Any]:
    sequence = get_sequence(database, lease.item_id)
    video = servable_video(settings, sequence.video_id, sequence.video_path)
    draft = database.query_one(
        "SELECT payload, played FROM drafts WHERE annotator = ? AND kind = ? AND item_id = ?",
        (annotator, KIND, lease.item_id),
    )
    payload = json.loads(draft["payload"]) if draft else None
    return {
        "sequence_id": sequence.id,
        "round": lease.review_round,
        "scene": sequence.scene,
        "source": sequence.source,
        "actions": [{"class_id": a.class_id, "name": a.name, "start": a.start, "end": a.end} for a in sequence.actions],
        "timeline": sequence.timeline(),
        "video": str(video) if video else None,
        "video_missing": video is None,
        "must_view": bool(settings.require_full_view and video is not None and lease.viewed_at is None),
        "lease_expires_at": lease.expires_at,
        "guidance": lease.guidance,
        "draft": payload or None,  # a row that holds only played ranges is no draft
        "played": watching.read_played(draft["played"]) if draft else [],  # kept across reloads (issue 44 §3)
    }


def progress(database: Database, username: str) -> dict[str, int]:
    """Mine today / in total, ``left_for_me`` (sequences this annotator can still be handed, or holds) and
    ``left_in_pool`` (sequences that still need any annotator)."""
    counts = assignment.pool_progress(database.db, KIND, username)
    return {**counts, "left_for_me": assignment.left_for(database.db, KIND, username)}


def _reply(database: Database, settings: Settings, lease: assignment.Lease | None, username: str) -> dict[str, Any]:
    task = _task_view(database, settings, lease, username) if lease else None
    reply: dict[str, Any] = {"task": task, "progress": progress(database, username)}
    if lease is None:  # a paused worker is told why instead of "nothing left"
        reply["paused"] = quality.paused_message(database, username)
    study = study_workers.study_view(database, username)  # a crowd-study worker: their quota and completion code
    if study is not None:
        reply["study"] = study
    return reply


def _next_lease(db: sqlite_utils.Database, settings: Settings, username: str) -> assignment.Lease | None:
    """The next lease (gold items mixed in, quality checked first: backend/campaigns/gold.py), unless a
    crowd-study worker's quota is done (backend/campaigns/workers.py). Inside write()."""
    if not study_workers.may_hand_out(db, username, KIND):
        return None
    return gold.next_task(db, settings, KIND, username)


def next_intent_task(database: Database, settings: Settings, username: str | None) -> dict[str, Any]:
    """The caller's current task (same one on reload) or a newly leased one; ``task`` is None when done."""
    username = auth.require_role(database, username, "annotator").username
    with database.write() as db:
        lease = _next_lease(db, settings, username)
    return _reply(database, settings, lease, username)


def held_intent_task(database: Database, settings: Settings, username: str) -> dict[str, Any]:
    """Like :func:`next_intent_task` but leases nothing: the task the caller already holds, or None."""
    auth.require_role(database, username, "annotator")
    return _reply(database, settings, assignment.current_lease(database.db, KIND, username), username)


def save_draft(
    database: Database,
    username: str | None,
    sequence_id: str,
    concrete: str,
    high_level: str,
    client_ms: float | None = None,
) -> str | None:
    """Keep what the annotator typed so a reload or a crash restores it. Returns the time saved, or None
    when nothing was kept: the sequence is already submitted or skipped (a late save as the page closes),
    or the stored draft was typed later (``client_ms``, the browser's clock, is newer there)."""
    username = auth.require_role(database, username, "annotator").username
    now = utcnow()
    payload = json.dumps({"concrete_intent": (concrete or "")[:2000], "high_level_intent": (high_level or "")[:2000]})
    with database.write() as db:
        if not _still_leased(db, sequence_id, username):
            return None
        written = db.conn.execute(
            """INSERT INTO drafts (annotator, kind, item_id, payload, updated_at, client_ms) VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (annotator, kind, item_id) DO UPDATE SET payload = excluded.payload,
                   updated_at = excluded.updated_at, client_ms = excluded.client_ms
               WHERE excluded.client_ms IS NULL OR drafts.client_ms IS NULL
                  OR excluded.client_ms >= drafts.client_ms""",
            (username, KIND, sequence_id, payload, now, int(client_ms) if client_ms is not None else None),
        ).rowcount
    return now if written else None


def _still_leased(db: sqlite_utils.Database, sequence_id: str, username: str) -> bool:
    """Whether ``sequence_id`` is still leased to ``username`` (inside ``write()``): False once it is submitted or
    skipped (a late save as the page closes); ValidationError when it was never handed to them."""
    handed = assignment.get_assignment(db, KIND, sequence_id, username)
    if handed is None:
        raise ValidationError(f"sequence {sequence_id!r} is not handed to you")
    return bool(handed["status"] == "leased")


def save_played(
    database: Database, settings: Settings, username: str | None, sequence_id: str, ranges: list[list[float]]
) -> list[list[float]] | None:
    """Keep the parts of the video the annotator has played (``ranges``: pairs of media seconds, from the player),
    joined with those stored before, so a reload or a crash restores "Watched N%" (backend/intents/watching.py).
    Returns the stored ranges, or None when nothing was kept (the sequence is no longer leased to them)."""
    username = auth.require_role(database, username, "annotator").username
    if not isinstance(ranges, list) or len(ranges) > watching.MAX_RANGES:
        raise ValidationError(f"ranges must be a list of at most {watching.MAX_RANGES} [start, end] pairs.")
    _, duration = _video_to_watch(settings, get_sequence(database, sequence_id))
    with database.write() as db:
        if not _still_leased(db, sequence_id, username):
            return None
        row = db.conn.execute(
            "SELECT played FROM drafts WHERE annotator = ? AND kind = ? AND item_id = ?", (username, KIND, sequence_id)
        ).fetchone()
        merged = watching.merge_ranges([*watching.read_played(row["played"] if row else None), *ranges], duration)
        db.conn.execute(
            """INSERT INTO drafts (annotator, kind, item_id, payload, updated_at, played) VALUES (?, ?, ?, '{}', ?, ?)
               ON CONFLICT (annotator, kind, item_id) DO UPDATE SET played = excluded.played""",
            (username, KIND, sequence_id, utcnow(), json.dumps(merged)),
        )
    return merged


def watch_problem(settings: Settings, watched_share: float | None) -> str | None:
    """Why ``watched_share`` (the share of the video the browser's played ranges cover, 0–1) is too little for
    ``full_view_share``, or None when it is enough. Played ranges are in the video's time, so watching at 2×
    covers it all, and a seek ahead covers nothing.

    >>> from backend.settings import Settings
    >>> watch_problem(Settings(full_view_share=0.95), 0.62)
    'Watched 62% of the video: play at least 95% of it (any speed from 0.5×; seeking ahead does not count), then submit.'
    >>> watch_problem(Settings(full_view_share=0.95), 0.95) is None
    True
    """
    share = 0.0 if watched_share is None else float(watched_share)
    if share != share or share < 0 or share > 1:  # NaN or out of range: a broken or forged report
        raise ValidationError("watched_share must be a number from 0 to 1 (the share of the video played).")
    if share + 1e-9 >= settings.full_view_share:
        return None
    return (
        f"Watched {int(share * 100 + 1e-9)}% of the video: play at least {round(settings.full_view_share * 100)}% "
        "of it (any speed from 0.5×; seeking ahead does not count), then submit."
    )


def watch_time_problem(settings: Settings, duration: float | None, seconds_since_lease: float) -> str | None:
    """Why the time since the task was handed out is too short to have played ``full_view_share`` of a video of
    ``duration`` seconds, or None when it is long enough (or the duration cannot be read).

    The share comes from the browser, so a forged request (or a console) can claim any share; time cannot be
    saved. At the player's fastest speed (2×), covering ``full_view_share`` of the video takes
    ``full_view_share × duration / 2`` seconds from the lease, less ``WATCH_CLOCK_SLACK_S``.

    >>> from backend.settings import Settings
    >>> watch_time_problem(Settings(full_view_share=0.95), 30.0, 5.0)
    'Submitted 5.0 s after this task was handed out: playing 95% of this 30 s video takes at least 14 s, even at 2×.'
    >>> watch_time_problem(Settings(full_view_share=0.95), 30.0, 14.0) is None  # 0.95 × 30 / 2 = 14.25, less 0.5
    True
    """
    if not duration:
        return None
    fastest = max(PLAYBACK_SPEEDS)
    need = settings.full_view_share * duration / fastest
    if seconds_since_lease + WATCH_CLOCK_SLACK_S >= need:
        return None
    return (
        f"Submitted {_secs(max(seconds_since_lease, 0))} s after this task was handed out: playing "
        f"{round(settings.full_view_share * 100)}% of this {_secs(duration)} s video takes at least {_secs(need)} s, "
        f"even at {fastest:g}×."
    )


def _secs(seconds: float) -> str:
    """Seconds as a person reads them: one decimal under 10 s (1.9), whole seconds above (14)."""
    return f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"


def _seconds_since(moment: str, now: str | None = None) -> float:
    """Seconds from ``moment`` to ``now`` (default: now), both :func:`utcnow` strings."""
    return (datetime.fromisoformat(now or utcnow()) - datetime.fromisoformat(moment)).total_seconds()


def _video_to_watch(settings: Settings, sequence: Sequence) -> tuple[bool, float | None]:
    """Whether ``require_full_view`` applies to the sequence (on, and a video to watch), and that video's duration
    read from the file (None when it cannot be read)."""
    if not settings.require_full_view:
        return False, None
    video = servable_video(settings, sequence.video_id, sequence.video_path)
    if video is None:
        return False, None
    return True, video_facts(video).duration


def mark_viewed(
    database: Database, settings: Settings, username: str | None, sequence_id: str, watched_share: float | None
) -> None:
    """The browser reports the share of the video played (``watched_share``); enough of it (``full_view_share``)
    is recorded as viewed, and submitting may require that (or the share sent with the submit)."""
    username = auth.require_role(database, username, "annotator").username
    problem = watch_problem(settings, watched_share)
    if problem:
        raise WatchTooShort(problem)
    must_view, duration = _video_to_watch(settings, get_sequence(database, sequence_id))
    with database.write() as db:
        handed = assignment.get_assignment(db, KIND, sequence_id, username)
        if must_view and handed is not None and handed["viewed_at"] is None:
            too_soon = watch_time_problem(settings, duration, _seconds_since(handed["leased_at"]))
            if too_soon:
                raise WatchTooShort(too_soon)
        assignment.mark_viewed(db, KIND, sequence_id, username)
        audit(db, username, "intent.viewed", sequence_id, {"watched_share": watched_share})


def _stored(db: sqlite_utils.Database, sequence_id: str, username: str) -> dict[str, Any]:
    row = db.conn.execute(
        "SELECT * FROM annotations WHERE sequence_id = ? AND annotator = ? AND source = 'live'",
        (sequence_id, username),
    ).fetchone()
    return dict(row)


def intent_problems(
    database: Database,
    settings: Settings,
    username: str | None,
    sequence_id: str,
    concrete_intent: str,
    high_level_intent: str,
) -> list[str]:
    """What :func:`submit_intents` would refuse in the text itself (the form, an action name repeated, two equal
    intents), read without the write lock and storing nothing, so the page can say it at once; the submit
    checks again. Empty when the text is acceptable.

    The checks need the sequence's action names and the caller's role: two reads, no write.
    """
    auth.require_role(database, username, "annotator")
    sequence = get_sequence(database, sequence_id)
    concrete, high_level = (concrete_intent or "").strip(), (high_level_intent or "").strip()
    return check_intent_pair(concrete, high_level, sequence.action_names, settings.max_action_similarity)


def submit_intents(
    database: Database,
    settings: Settings,
    username: str | None,
    sequence_id: str,
    concrete_intent: str,
    high_level_intent: str,
    watched_share: float | None = None,
) -> dict[str, Any]:
    """Store one annotation and lease the next task, in one transaction. With ``require_full_view`` (and a video
    to watch), ``watched_share`` (the share of the video the page's player played) must reach
    ``full_view_share``, unless :func:`mark_viewed` recorded that already.

    A repeated submit of the same sequence (a client retry after a lost reply) returns the stored
    annotation with ``"duplicate": true`` and writes nothing.
    """
    username = auth.require_role(database, username, "annotator").username
    sequence = get_sequence(database, sequence_id)
    concrete, high_level = (concrete_intent or "").strip(), (high_level_intent or "").strip()
    # Checks that need no lock run before taking it: the write lock is what every submit queues on.
    problems = check_intent_pair(concrete, high_level, sequence.action_names, settings.max_action_similarity)
    must_view, duration = _video_to_watch(settings, sequence)
    watch = watch_problem(settings, watched_share) if must_view else None
    with database.write() as db:
        row, already = assignment.claim_for_submit(db, KIND, sequence_id, username)
        if already:
            annotation, duplicate = _stored(db, sequence_id, username), True
        else:
            if problems:
                raise ValidationError(problems)
            now = utcnow()
            spent = _seconds_since(row["leased_at"], now)
            if must_view and row["viewed_at"] is None:
                watch = watch or watch_time_problem(settings, duration, spent)
                if watch:
                    raise WatchTooShort(watch)
            db.conn.execute(
                """INSERT INTO annotations (sequence_id, annotator, concrete_intent, high_level_intent, round, source,
                       submitted_at, seconds_spent) VALUES (?, ?, ?, ?, ?, 'live', ?, ?)""",
                (sequence_id, username, concrete, high_level, row["round"], now, spent),
            )
            completion = assignment.finish(db, row["id"], "submitted")
            if completion is not None:
                webhooks.emit(db, "item.completed", webhooks.item_completed(db, completion))
            quality.after_submit(db, settings, row["id"], username)  # a gold answer is scored now (issue 26 §1)
            answer = {"concrete_intent": concrete, "high_level_intent": high_level}
            webhooks.emit(db, "annotation.created", webhooks.annotation_created(db, row["id"], answer))
            db.conn.execute(
                "DELETE FROM drafts WHERE annotator = ? AND kind = ? AND item_id = ?", (username, KIND, sequence_id)
            )
            audit(
                db,
                username,
                "intent.submit",
                sequence_id,
                {"concrete_intent": concrete, "high_level_intent": high_level, "round": row["round"]},
            )
            annotation, duplicate = _stored(db, sequence_id, username), False
        lease = _next_lease(db, settings, username)  # same transaction
    return {"stored": annotation, "duplicate": duplicate, **_reply(database, settings, lease, username)}


def skip_intent_task(
    database: Database, settings: Settings, username: str | None, sequence_id: str, reason: str
) -> dict[str, Any]:
    """Give the sequence back with a reason; the caller never gets it again. Returns the next task."""
    username = auth.require_role(database, username, "annotator").username
    with database.write() as db:
        assignment.skip(db, KIND, sequence_id, username, reason)
    return {"skipped": sequence_id, **next_intent_task(database, settings, username)}
