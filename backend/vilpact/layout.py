"""The released layout of an extracted sequence: a row of ``all_gt_seq.csv`` without the intents.

ViLPAct (§3, "Planning evaluation"): the first 20% of a video's sequence is its initial state, and "an action
of a sequence [is initial] if it starts before the end time of the initial state". The release writes that
window as frame numbers at 24 fps. On all 2,912 released rows:

* ``act_seq_start`` / ``act_seq_end`` are the earliest start and the latest end, spelled without trailing zeros;
* ``ob_start_frame = floor(24 * act_seq_start) + 1`` and ``ob_end_frame = floor(24 * (start + 20% of the span))``;
* the actions are sorted by start (a stable sort), ``action_flow_des`` names them in that order.

Which actions are observed (``ob_act_seq``) has two readings, the setting ``extract_observed_rule``: ``frame``,
"starts before ``ob_end_frame / 24``" (the issue's rule; 2,900 released rows follow it), and ``seconds``,
"starts before ``start + span / 5``" computed exactly (2,911 rows: all but EJIKG, whose last action starts
exactly at the window's end and is observed anyway). :func:`release_agreement` counts them; times are taken
as the decimals the file wrote, never as binary floats (2.4 is not 2.4000000000000004).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction

from backend.vilpact.extraction import TimedAction
from backend.vilpact.released_rows import SEQUENCE_COLUMNS

FPS = 24
OBSERVED_SHARE = Fraction(1, 5)
OBSERVED_RULES = ("frame", "seconds")
#: ``all_gt_seq.csv``'s columns without the two crowd intents: what an extraction writes.
LAYOUT_COLUMNS = tuple(c for c in SEQUENCE_COLUMNS if not c.startswith("intention"))


def exact(text: str, value: float) -> Fraction:
    """The time as the file wrote it (``"2.40"`` is exactly 12/5), else the float's exact value."""
    return Fraction(Decimal(text)) if text else Fraction(value)


def seconds_text(text: str, value: float) -> str:
    """A time spelled as the release spells ``act_seq_start``/``act_seq_end``: no trailing zeros.

    >>> seconds_text("0.00", 0.0), seconds_text("15.70", 15.7), seconds_text("33.0", 33.0), seconds_text("", 100.0)
    ('0', '15.7', '33', '100')
    """
    number = Decimal(text) if text else Decimal(repr(value))
    return format(number.normalize(), "f")


def observed_window(start: Fraction, end: Fraction) -> tuple[int, int, Fraction]:
    """``(ob_start_frame, ob_end_frame, window end in seconds)`` of a sequence spanning ``start..end`` seconds.

    >>> observed_window(Fraction(157, 10), Fraction(33))   # R00LO: 15.7..33 s, window ends at 19.16 s
    (377, 459, Fraction(479, 25))
    """
    window_end = start + (end - start) * OBSERVED_SHARE
    return math.floor(start * FPS) + 1, math.floor(window_end * FPS), window_end


def observed_flags(starts: Sequence[Fraction], start: Fraction, end: Fraction, rule: str) -> list[bool]:
    """Whether each action (by its start) is observed, under ``rule`` (``frame`` or ``seconds``).

    >>> s = [Fraction(0), Fraction(11, 10), Fraction(12, 5), Fraction(5, 2)]   # KIJG4: window 0..2.4 s, frame 57
    >>> observed_flags(s, Fraction(0), Fraction(12), "frame"), observed_flags(s, Fraction(0), Fraction(12), "seconds")
    ([True, True, False, False], [True, True, False, False])
    """
    _first, last_frame, window_end = observed_window(start, end)
    limit = Fraction(last_frame, FPS) if rule == "frame" else window_end
    return [s < limit for s in starts]


def layout_row(
    video_id: str, scene: str, actions: Sequence[TimedAction], names: Mapping[str, str], rule: str = "frame"
) -> dict[str, str]:
    """The released-layout row of a sequence (``actions`` in sequence order).

    >>> acts = [TimedAction("c155", 0.0, 14.5, "0.00", "14.50"), TimedAction("c001", 10.8, 16.6, "10.80", "16.60"),
    ...         TimedAction("c148", 11.1, 33.0, "11.10", "33.0")]
    >>> row = layout_row("2NZ5C", "Stairs", acts, {"c155": "Someone is undressing", "c001": "Putting clothes somewhere",
    ...                  "c148": "Someone is dressing"})
    >>> [row[c] for c in ("act_seq_start", "act_seq_end", "ob_start_frame", "ob_end_frame", "ob_act_seq")]
    ['0', '33', '1', '158', 'Someone is undressing']
    >>> row["future_act_seq"]
    'Putting clothes somewhere;Someone is dressing'
    """
    starts = [exact(a.start_text, a.start) for a in actions]
    ends = [exact(a.end_text, a.end) for a in actions]
    first = min(range(len(actions)), key=lambda i: starts[i])
    last = max(range(len(actions)), key=lambda i: ends[i])
    ob_start, ob_end, _end = observed_window(starts[first], ends[last])
    observed = observed_flags(starts, starts[first], ends[last], rule)
    return {
        "id": video_id,
        "action_flow_id": ";".join(a.item for a in actions),
        "action_flow_des": ";".join(names[a.class_id] for a in actions),
        "act_seq_start": seconds_text(actions[first].start_text, actions[first].start),
        "act_seq_end": seconds_text(actions[last].end_text, actions[last].end),
        "ob_start_frame": str(ob_start),
        "ob_end_frame": str(ob_end),
        "ob_act_seq": ";".join(names[a.class_id] for a, o in zip(actions, observed, strict=True) if o),
        "future_act_seq": ";".join(names[a.class_id] for a, o in zip(actions, observed, strict=True) if not o),
        "scene": scene,
    }


def parse_items(value: str) -> list[TimedAction]:
    """``cNNN start end`` items joined by ``;`` (an already validated ``action_flow_id``)."""
    items = [item.split() for item in value.split(";") if item.strip()]
    return [TimedAction(c, float(s), float(e), s, e) for c, s, e in items]


def release_agreement(rows: Iterable[Mapping[str, str]], names: Mapping[str, str]) -> dict[str, int]:
    """How many released rows each column of :func:`layout_row` reproduces, per observed rule (``rows`` as
    ``csv.DictReader`` reads ``all_gt_seq.csv``). ``split_<rule>`` counts rows whose ``ob_act_seq`` and
    ``future_act_seq`` both match; ``row_<rule>`` rows where every column matches."""
    counts = dict.fromkeys(
        ["rows", *[c for c in LAYOUT_COLUMNS if c not in ("ob_act_seq", "future_act_seq")]]
        + [f"{kind}_{rule}" for kind in ("split", "row") for rule in OBSERVED_RULES],
        0,
    )
    for released in rows:
        counts["rows"] += 1
        actions = parse_items(released["action_flow_id"])
        for rule in OBSERVED_RULES:
            row = layout_row(released["id"], released["scene"], actions, names, rule)
            same = {c for c in LAYOUT_COLUMNS if row[c] == released[c]}
            counts[f"split_{rule}"] += {"ob_act_seq", "future_act_seq"} <= same
            counts[f"row_{rule}"] += len(same) == len(LAYOUT_COLUMNS)
            if rule == "frame":
                for column in same - {"ob_act_seq", "future_act_seq"}:
                    counts[column] += 1
    return counts
