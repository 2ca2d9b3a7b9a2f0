"""Arriving by a study link without farming it (issue 26 §5, issue 40 §1): new worker ids are limited per client
address and per study, and a study holds at most its places. Both checks run inside a ``write()``, so two
arrivals at once cannot both take the last allowance.

* ``study_arrivals_per_address`` new ids per client address per study in ``study_arrival_window_minutes``
  (0: no limit). **Every** arrival of a new id counts, refused ones too (past the limit, unknown to Prolific,
  the study full or closed): a script that keeps trying stays refused. A worker coming back by their link is not
  a new arrival and is never limited.
* places: :func:`backend.campaigns.studies.places_free` counts workers who started work only. A newcomer who
  arrives when every place is held gets the "study full" page at once; one who passes the qualification when the
  last place has just gone is turned away with the screen-out code (backend/campaigns/workers.py:take_place).

The client address is the connection's; a proxy's ``X-Forwarded-For`` is believed only from the addresses in
``trusted_proxies`` (web/client_address.py).
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
    refusal = _over_limit(db, settings, study, address)
    if refusal is not None:
        raise refusal


def _over_limit(db: sqlite_utils.Database, settings: Settings, study: Study, address: str) -> TooManyArrivals | None:
    limit = settings.study_arrivals_per_address
    if limit <= 0:
        return None
    window = timedelta(minutes=settings.study_arrival_window_minutes)
    now = datetime.now(UTC)
    rows = db.conn.execute(
        "SELECT arrived_at FROM study_arrivals WHERE study_id = ? AND address = ? AND arrived_at > ? "
        "ORDER BY arrived_at",
        (study.id, address, _iso(now - window)),
    ).fetchall()
    if len(rows) < limit:
        return None
    # the oldest arrival still counted leaves the window first: then one more is let in (if nothing came since)
    free_at = datetime.fromisoformat(rows[len(rows) - limit][0]) + window
    wait = max(1.0, (free_at - now).total_seconds())
    return TooManyArrivals(
        f"Too many people have opened this study from your network in the last "
        f"{_minutes(settings.study_arrival_window_minutes)}. Please come back after {free_at:%H:%M} UTC "
        f"(in about {math.ceil(wait / 60)} minute(s)) and open your study link again.",
        retry_after=wait,
    )


def count_arrival(db: sqlite_utils.Database, settings: Settings, study: Study, address: str) -> TooManyArrivals | None:
    """Count a new worker id from ``address`` (always: a refused arrival counts too) and return the refusal when
    the address is past its limit, for the caller to raise once this is committed. Inside ``write()``."""
    refusal = _over_limit(db, settings, study, address)
    record(db, settings, study, address, "limited" if refusal is not None else "admitted")
    return refusal


def _minutes(minutes: float) -> str:
    return f"{minutes:g} minutes" if minutes != 60 else "hour"


def record(
    db: sqlite_utils.Database, settings: Settings, study: Study, address: str, outcome: str = "admitted"
) -> None:
    """Count a new worker id from ``address``; drop rows older than the window. Inside ``write()``."""
    if settings.study_arrivals_per_address <= 0:
        return
    cutoff = _iso(datetime.now(UTC) - timedelta(minutes=settings.study_arrival_window_minutes))
    db.conn.execute("DELETE FROM study_arrivals WHERE study_id = ? AND arrived_at <= ?", (study.id, cutoff))
    db.conn.execute(
        "INSERT INTO study_arrivals (study_id, address, arrived_at, outcome) VALUES (?, ?, ?, ?)",
        (study.id, address, utcnow(), outcome),
    )


def full_link(study: Study) -> str:
    """Where a latecomer goes back to: the return link with the screen-out code (the platform pays the time it
    took), else nothing (the page tells them to return the study on the platform)."""
    return study.return_link(study.screenout_code) if study.screenout_code else ""


PLATFORM_NAMES = {"prolific": "Prolific", "mturk": "Mechanical Turk", "connect": "CloudResearch Connect"}


def full_message(study: Study) -> str:
    """What a real worker reads when every place is taken: what happened, that it is not their fault, what to do
    and how they are paid for the minute it took."""
    where = PLATFORM_NAMES.get(study.platform, "the platform you came from")
    sorry = (
        "Sorry: every place in this study has just been taken by people who started before you, so there is no "
        "work left for you in it. This is not because of anything you did."
    )
    if study.screenout_code:
        how = "The button below takes you back with it." if full_link(study) else f"Enter it on {where}."
        return f"{sorry} Your screen-out code below tells {where} to pay you for the time this took. {how}"
    return f"{sorry} Please return the study on {where}, so that it does not count against you."


def check_places(db: sqlite_utils.Database, study: Study) -> None:
    """Refuse a new worker when every place is held by a worker who started work. Inside ``write()``."""
    if places_free(db, study):
        return
    raise StudyFull(full_message(study), return_link=full_link(study))
