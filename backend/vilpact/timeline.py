"""The action timeline a video player draws (issue 27 §2): one bar per action on the video's time axis, actions
that overlap in time in separate lanes (Charades actions overlap), and, where only the observed window may be
seen (planning: the first 20%), only the actions that begin inside it, cut at its end.

Pure functions over ``(name, start, end)`` in seconds; the player (components/player.py) draws what they return.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def assign_lanes(spans: Sequence[tuple[float, float]]) -> list[int]:
    """The lane of each span: the lowest lane whose last span has ended (greedy interval partitioning, which
    uses as few lanes as the most spans overlapping at one time). Touching spans share a lane.

    >>> assign_lanes([(0, 5), (3, 8), (5, 9), (6, 7)])
    [0, 1, 0, 2]
    >>> assign_lanes([])
    []
    """
    lane_ends: list[float] = []
    lanes: list[int] = []
    for start, end in spans:
        free = [lane for lane, last_end in enumerate(lane_ends) if last_end <= start]
        lane = free[0] if free else len(lane_ends)
        if lane == len(lane_ends):
            lane_ends.append(end)
        else:
            lane_ends[lane] = end
        lanes.append(lane)
    return lanes


def timeline_bars(
    actions: Iterable[tuple[str, float, float]], window: tuple[float, float] | None = None
) -> list[dict[str, Any]]:
    """The bars of the timeline, in the sequence's order: ``index`` (position in the sequence), ``name``,
    ``start``/``end`` on the player's time axis and ``lane``. With ``window`` (start, end in the source video's
    seconds) the player shows a clip of that window: only actions that begin before its end are kept, shifted so
    the window starts at 0 and cut at its end, so nothing after the window is told.

    >>> [(b["name"], b["start"], b["end"], b["lane"]) for b in timeline_bars([("a", 0, 4), ("b", 2, 6)])]
    [('a', 0.0, 4.0, 0), ('b', 2.0, 6.0, 1)]
    >>> [(b["name"], b["start"], b["end"]) for b in timeline_bars([("a", 10, 14), ("b", 13, 20)], window=(10, 15))]
    [('a', 0.0, 4.0), ('b', 3.0, 5.0)]
    """
    kept: list[tuple[int, str, float, float]] = []
    for index, (name, start, end) in enumerate(actions):
        start, end = float(start), float(end)
        if window is not None:
            w_start, w_end = window
            if start >= w_end:
                continue
            start, end = max(start, w_start) - w_start, min(end, w_end) - w_start
        kept.append((index, name, round(float(start), 3), round(float(max(end, start)), 3)))
    lanes = assign_lanes([(start, end) for _, _, start, end in kept])
    return [
        {"index": index, "name": name, "start": start, "end": end, "lane": lane}
        for (index, name, start, end), lane in zip(kept, lanes, strict=True)
    ]
