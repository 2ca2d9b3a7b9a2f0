"""Arriving by a study link without farming it (issue 26 §5): new worker ids are limited per client address and
per study, and a study holds at most its places. Both checks run inside the arrival's ``write()``, so two
arrivals at once cannot both take the last place or the last allowance.

* ``study_arrivals_per_address`` new ids per client address per study in ``study_arrival_window_minutes``
  (0: no limit). A worker coming back by their link is not a new arrival and is never limited.
* places: :func:`backend.campaigns.studies.places_free`. A latecomer is not recorded, so they may try again
  once a place is free.

The client address is the connection's, or the ``X-Forwarded-For`` of a proxy uvicorn trusts
(``FORWARDED_ALLOW_IPS``, loopback by default): behind a reverse proxy, configure it, or every worker shares the
proxy's address and the limit.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import sqlite_utils

from backend.campaigns.studies import Study, places_free
from backend.errors import StudyFull, TooManyArrivals
from backend.settings import Settings
from backend.storage import utcnow


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def check_rate(db: sqlite_utils.Database, settings: Settings, study: Study, address: str) -> None:
    """Refuse a new worker id from ``address`` past the limit, saying when to come back. Inside ``write()``."""
    limit = settings.study_arrivals_per_address
    if limit <= 0:
        return
    window = timedelta(minutes=settings.study_arrival_window_minutes)
    now = datetime.now(UTC)
    rows = db.conn.execute(
        "SELECT arrived_at FROM study_arrivals WHERE study_id = ? AND address = ? AND arrived_at > ? "
        "ORDER BY arrived_at",
        (study.id, address, _iso(now - window)),
    ).fetchall()
    if len(rows) < limit:
        return
    # the oldest arrival still counted leaves the window first: then one more is let in
    free_at = datetime.fromisoformat(rows[len(rows) - limit][0]) + window
    wait = max(1.0, (free_at - now).total_seconds())
    raise TooManyArrivals(
        f"Too many people have started this study from your network in the last "
        f"{_minutes(settings.study_arrival_window_minutes)}. Please come back after {free_at:%H:%M} UTC "
        f"(in about {math.ceil(wait / 60)} minute(s)) and open your study link again.",
        retry_after=wait,
    )


def _minutes(minutes: float) -> str:
    return f"{minutes:g} minutes" if minutes != 60 else "hour"


def record(db: sqlite_utils.Database, settings: Settings, study: Study, address: str) -> None:
    """Count a new worker id from ``address``; drop rows older than the window. Inside ``write()``."""
    if settings.study_arrivals_per_address <= 0:
        return
    cutoff = _iso(datetime.now(UTC) - timedelta(minutes=settings.study_arrival_window_minutes))
    db.conn.execute("DELETE FROM study_arrivals WHERE study_id = ? AND arrived_at <= ?", (study.id, cutoff))
    db.conn.execute(
        "INSERT INTO study_arrivals (study_id, address, arrived_at) VALUES (?, ?, ?)", (study.id, address, utcnow())
    )


def full_link(study: Study) -> str:
    """Where a latecomer goes back to: the return link with the screen-out code (the platform pays the time it
    took), else nothing (the page tells them to return the study on the platform)."""
    return study.return_link(study.screenout_code) if study.screenout_code else ""


def check_places(db: sqlite_utils.Database, study: Study) -> None:
    """Refuse a new worker when the study's places are taken. Inside ``write()``."""
    if places_free(db, study):
        return
    where = {"prolific": "Prolific", "mturk": "Mechanical Turk"}.get(study.platform, "the platform")
    hint = f"Please return the study on {where}" + (" (the button below takes you back)" if full_link(study) else "")
    raise StudyFull(
        f"This study is full right now: all its places are taken, or its tasks are all handed out. {hint}, so that "
        "your place goes to someone else; you may try again later if the study is still listed.",
        return_link=full_link(study),
    )
