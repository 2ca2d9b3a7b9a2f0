"""The parts of a video an annotator has played, kept with their lease (issue 44 §3).

The player measures watching with the browser's played ranges (``HTMLMediaElement.played``: media time, so
2× covers the video in half the time and a seek ahead covers nothing). Those ranges live in the page, so a reload
or a crash threw them away and the worker had to watch the whole video again. The page now sends them as it
plays; they are stored beside the draft (``drafts.played``) and handed back with the task, and the player counts
them with what it plays after the reload. The server's own floor (the time since the lease,
``service.watch_time_problem``) still applies: stored ranges cannot claim more than the browser could have played.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

MAX_RANGES = 200  # a page sends its merged ranges; more than this is not a person watching


def merge_ranges(ranges: Iterable[Sequence[float]], limit: float | None = None) -> list[list[float]]:
    """The union of ``ranges`` (pairs of seconds), sorted, overlapping or touching ones joined, each clipped to
    ``[0, limit]`` (no limit: not clipped above); pairs that are not two finite numbers with start < end are dropped.

    >>> merge_ranges([[4, 6], [0, 2.5], [2.5, 3], [5, 8]])
    [[0.0, 3.0], [4.0, 8.0]]
    >>> merge_ranges([[1, 9], ["x", 2], [3, float("nan")], [7, 7]], limit=6)
    [[1.0, 6.0]]
    """
    clean: list[tuple[float, float]] = []
    for pair in ranges:
        try:
            start, end = float(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        if not (math.isfinite(start) and math.isfinite(end)):
            continue
        start, end = max(0.0, start), end if limit is None else min(float(limit), end)
        if end > start:
            clean.append((start, end))
    merged: list[list[float]] = []
    for start, end in sorted(clean):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def covered(ranges: Iterable[Sequence[float]]) -> float:
    """Seconds covered by merged ``ranges``.

    >>> covered([[0, 3], [4, 8]])
    7.0
    """
    return float(sum(end - start for start, end in ranges))


def read_played(text: str | None) -> list[list[float]]:
    """The ranges stored in ``drafts.played`` (JSON), or none."""
    if not text:
        return []
    try:
        return merge_ranges(json.loads(text))
    except (ValueError, TypeError):
        return []
