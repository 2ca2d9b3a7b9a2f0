"""The limit on requests in flight (:class:`ConcurrencyLimit`: fixed, or additive increase / multiplicative
decrease) and ``Retry-After`` (:func:`retry_after_seconds`): the pure parts of the transport
(:mod:`backend.inference.backends.transport`), each with its worked example.
"""

from __future__ import annotations

import email.utils
import threading
import time
from statistics import median
from typing import Any


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay-seconds or an HTTP date (RFC 9110 §10.2.3).

    >>> retry_after_seconds("3"), retry_after_seconds(None), retry_after_seconds("soon")
    (3.0, None, None)
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0)
    10.0
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


class ConcurrencyLimit:
    """The limit on requests in flight: fixed, or additive increase / multiplicative decrease.

    :meth:`acquire` blocks until a request may go and returns the *window* it was sent in; :meth:`release`
    reports how it went. Worked example (a limit that starts at 2, between 1 and 4, tolerance 2):

    >>> limit = ConcurrencyLimit(2, 1, 4, adaptive=True)
    >>> a, b = limit.acquire(), limit.acquire()  # two in flight: the limit is in use
    >>> limit.release(a, "ok", 0.10); limit.release(b, "ok", 0.12)  # a window of 2 replies, median 0.11 s
    >>> limit.value  # the first window sets the reference latency; latency holds: +1
    3
    >>> w = [limit.acquire() for _ in range(3)]
    >>> for token in w: limit.release(token, "ok", 0.30)  # median 0.30 > 2 x 0.11: latency did not hold
    >>> limit.value
    3
    >>> w = [limit.acquire() for _ in range(3)]
    >>> limit.release(w[0], "throttled"); limit.release(w[1], "throttled")  # one burst: halved once
    >>> limit.value, limit.report()["decreases"]
    (1, 1)
    """

    def __init__(
        self,
        start: int,
        minimum: int,
        maximum: int,
        *,
        adaptive: bool,
        tolerance: float = 2.0,
        decrease: float = 0.5,
        condition: threading.Condition | None = None,
    ) -> None:
        self.start, self.minimum, self.maximum = start, minimum, maximum
        self.adaptive, self.tolerance, self.decrease = adaptive, tolerance, decrease
        self._limit = float(start)
        self._in_flight = 0
        self._window = 0  # bumped at every change: replies from an older window do not change the limit again
        self._latencies: list[float] = []
        self._saturated = False
        self._reference: float | None = None
        self._changes: list[tuple[int, str, int]] = []  # (sequence, "up" | "down", new value)
        self._sequence = 0
        self._cond = condition or threading.Condition()

    @property
    def value(self) -> int:
        return max(self.minimum, min(self.maximum, int(self._limit)))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def may_send(self) -> bool:
        """Whether one more request fits (call with the condition held)."""
        return self._in_flight < self.value

    def acquire(self) -> int:
        with self._cond:
            self._cond.wait_for(self.may_send)
            return self.take()

    def take(self) -> int:
        """Count one more request in flight (the condition held, :meth:`may_send` true); its window."""
        self._in_flight += 1
        if self._in_flight >= self.value:
            self._saturated = True
        return self._window

    def release(self, window: int, outcome: str, latency_s: float | None = None) -> None:
        """``outcome``: ``ok`` (with its latency), ``throttled`` (429/503), ``timeout``, or anything else
        (an error that says nothing about load)."""
        with self._cond:
            self._in_flight -= 1
            self._sequence += 1
            if self.adaptive and outcome in {"throttled", "timeout"} and window == self._window:
                self._change("down", max(float(self.minimum), self._limit * self.decrease))
            elif self.adaptive and outcome == "ok" and latency_s is not None and window == self._window:
                self._latencies.append(latency_s)
                if len(self._latencies) >= self.value:
                    self._end_window()
            self._cond.notify_all()

    def _end_window(self) -> None:
        middle = median(self._latencies)
        self._reference = middle if self._reference is None else min(self._reference, middle)
        if self._saturated and middle <= self._reference * self.tolerance and self.value < self.maximum:
            self._change("up", self._limit + 1)
        else:
            self._latencies, self._saturated = [], self._in_flight >= self.value

    def _change(self, direction: str, limit: float) -> None:
        self._limit = max(float(self.minimum), min(float(self.maximum), limit))
        self._window += 1
        self._latencies, self._saturated = [], self._in_flight >= self.value
        self._changes.append((self._sequence, direction, self.value))
        del self._changes[:-1000]

    def mark(self) -> int:
        """A position in the history, for :meth:`report` ``since``."""
        with self._cond:
            return self._sequence

    def report(self, since: int = 0) -> dict[str, Any]:
        """Start, settled (current) value, lowest and highest since ``since``, and the changes."""
        with self._cond:
            changes = [c for c in self._changes if c[0] > since]
            before = [c[2] for c in self._changes if c[0] <= since]
            first = before[-1] if before else self.start
            values = [first, *(c[2] for c in changes)]
            return {
                "adaptive": self.adaptive,
                "start": self.start,
                "settled": self.value,
                "min": self.minimum,
                "max": self.maximum,
                "lowest": min(values),
                "highest": max(values),
                "increases": sum(1 for c in changes if c[1] == "up"),
                "decreases": sum(1 for c in changes if c[1] == "down"),
                "history": [c[2] for c in changes][-50:],
            }
