"""Numbers and times in tables a person reads (issue 44 §11): scores as the papers print them, times in the person's
own time zone, which the browser tells the page (:data:`BROWSER_ZONE_JS`).

Pure functions; the JSON endpoints keep the raw values (fractions, ISO times in UTC)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: an event's ``js``: the browser's time zone as the event's one input (e.g. "Europe/Paris")
BROWSER_ZONE_JS = "() => [Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC']"
#: an event's ``js`` whose last input is the browser's time zone (the others pass as they are)
ZONE_LAST_JS = "(...a) => [...a.slice(0, -1), Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC']"


def paper_score(value: float | None) -> str:
    """A score in [0, 1] as the papers print it: a percentage with two decimals ("" when there is none).

    >>> paper_score(0.3555555555555555), paper_score(1.0), paper_score(None)
    ('35.56', '100.00', '')
    """
    return "" if value is None else f"{value * 100:.2f}"


def zone_of(name: str | None) -> ZoneInfo:
    """The time zone named by the browser; UTC for a name that is missing or unknown here.

    >>> zone_of("Europe/Paris").key, zone_of("Mars/Olympus").key, zone_of(None).key
    ('Europe/Paris', 'UTC', 'UTC')
    """
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def local_time(stamp: str | None, zone: str | None) -> str:
    """An ISO time stored in UTC, in the person's time zone, to the minute, with the zone's abbreviation.

    >>> local_time("2026-12-04T20:35:01.123456+00:00", "Europe/Paris")
    '2026-12-04 21:35 CET'
    >>> local_time("2026-07-01T08:00:00", "America/New_York"), local_time(None, "UTC"), local_time("soon", "UTC")
    ('2026-07-01 04:00 EDT', '', 'soon')
    """
    return _in_zone(stamp, zone, "%Y-%m-%d %H:%M %Z")


def local_clock(stamp: str | None, zone: str | None) -> str:
    """The time of day of an ISO time stored in UTC, in the person's time zone, to the second (issue 44: "Draft saved
    at 20:35:01 UTC" was the server's clock, not the person's).

    >>> local_clock("2026-12-04T20:35:01.123456+00:00", "Europe/Paris"), local_clock("2026-12-04T20:35:01", None)
    ('21:35:01 CET', '20:35:01 UTC')
    """
    return _in_zone(stamp, zone, "%H:%M:%S %Z")


def _in_zone(stamp: str | None, zone: str | None, form: str) -> str:
    """``stamp`` (ISO, UTC when it names no zone) in ``zone``, as ``form`` says; "" for none, as it is when not a
    time."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone_of(zone)).strftime(form)
