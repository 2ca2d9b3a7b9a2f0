"""How requests reach an OpenAI-compatible deployment: replicas, retries and adaptive concurrency.

The ``openai`` backend (:mod:`backend.inference.backends.openai_compat`) builds request bodies and reads
replies; everything between the two is here, in :class:`Transport`. Its options come from the model entry
(:class:`TransportOptions`), and none of them can change an answer, so they are left out of the model's
fingerprint (:data:`TRANSPORT_OPTIONS`).

**Replicas.** ``options.base_url`` is one URL or a list of them: replicas of one model (one per GPU or node,
or routers in front of them). Each request goes to the replica with the fewest requests in flight (ties: the
one that has been sent the fewest). A replica that fails at the connection level (refused, reset, closed
mid-reply) while another is up is *taken out* at once, as is one that sends gateway errors (502, 504) or times
out ``down_after`` times in a row; the request it held is sent again to another replica at once, and this does
not count against the item's own ``retries`` (the item did nothing wrong). A lone replica is retried with
backoff and taken out only after ``down_after`` connection failures in a row. A background check asks each replica that is out for
``health_path`` (default ``models``, i.e. ``GET <base_url>/models``, which every OpenAI-compatible server
answers) every ``health_interval_s`` and *puts it back* on a 200. When every replica has been out for
``unavailable_after_s``, requests fail at once (an :class:`~backend.errors.InferenceError` per item, so a
batch run ends quickly and ``--retry-failed`` resumes it) until a check succeeds.

**Retries.** Timeouts and server errors (408, 409, 500, 502, 504) are retried ``retries`` times with
exponential backoff (``backoff_s``, doubled each time). A 429 or 503 says "slow down", not "this request is
wrong": it is retried until ``throttle_budget_s`` of waiting is spent, after the server's ``Retry-After``
(seconds or an HTTP date, capped at ``max_retry_after_s``) or, without one, the backoff. While a replica's
``Retry-After`` runs, nothing is sent to it; other replicas keep serving. Other 4xx fail at once.

**Adaptive concurrency** (``adaptive_concurrency: true``), additive increase, multiplicative decrease
(:class:`ConcurrencyLimit`): the limit on requests in flight starts at the model's ``concurrency``; after
each window of as many successful replies as the limit, taken while the limit was in use, it grows by one if
the window's median latency is within ``latency_tolerance`` times the lowest median seen (latency holds); a
429, 503 or timeout halves it (once per window: a burst of rejections from requests sent together counts
once). It stays within ``min_concurrency`` and ``max_concurrency`` (default 4 x ``concurrency``, at most 256).
Without it the limit stays at ``concurrency`` and only ``Retry-After`` and backoff slow requests down.

:meth:`Transport.report` gives what a run's summary records: per replica the requests sent, answered and
failed and how often it was taken out and put back; the concurrency it started at, settled at (its value at
the end), its lowest and highest, and its changes; the throttled replies, ``Retry-After`` waits, timeouts and
failovers; the prompt and completion tokens the server counted (``usage``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from backend.errors import InferenceError
from backend.inference.backends.concurrency import ConcurrencyLimit, retry_after_seconds
from backend.inference.backends.transport_options import TRANSPORT_OPTIONS, TransportOptions

if TYPE_CHECKING:
    import httpx

__all__ = ["TRANSPORT_OPTIONS", "ConcurrencyLimit", "Transport", "TransportOptions", "retry_after_seconds"]

THROTTLE_STATUS = frozenset({429, 503})  # the server asks the client to slow down
RETRY_STATUS = frozenset({408, 409, 500, 502, 504})  # this attempt failed; another may not
GATEWAY_STATUS = frozenset({502, 504})  # a router says the replica behind it is gone or hung


@dataclass
class Replica:
    """One server behind the model, with its own connection pool and counts."""

    url: str
    client: httpx.Client
    in_flight: int = 0
    sent: int = 0
    answered: int = 0
    failed: int = 0
    consecutive_failures: int = 0
    up: bool = True
    down_since: float = 0.0
    cooling_until: float = 0.0
    taken_out: int = 0
    put_back: int = 0
    last_problem: str = ""

    def counts(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "requests": self.sent,
            "answered": self.answered,
            "failed": self.failed,
            "taken_out": self.taken_out,
            "put_back": self.put_back,
            "up": self.up,
        }


@dataclass
class _Attempts:
    """What one request has been through so far."""

    errors: int = 0
    failovers: int = 0
    throttles: int = 0
    throttle_wait_s: float = 0.0
    problem: str = ""


@dataclass
class Counters:
    throttled: int = 0
    retry_after_waits: int = 0
    timeouts: int = 0
    failovers: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replicas: dict[str, dict[str, int]] = field(default_factory=dict)


class Unavailable(InferenceError):
    """Every replica is out and none has passed a health check for ``unavailable_after_s``."""


class Transport:
    """Sends JSON requests to the replicas of one model (thread-safe; see the module docstring)."""

    def __init__(
        self,
        options: TransportOptions,
        headers: Mapping[str, str] | None = None,
        *,
        name: str = "",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        self.options, self.name, self._clock, self._sleep = options, name, clock, sleep
        self._cond = threading.Condition()
        self.limit = ConcurrencyLimit(
            options.concurrency,
            options.min_concurrency,
            options.max_concurrency,
            adaptive=options.adaptive,
            tolerance=options.latency_tolerance,
            condition=self._cond,
        )
        connections = httpx.Limits(
            max_connections=options.max_concurrency, max_keepalive_connections=options.max_concurrency
        )
        self.replicas = [
            Replica(
                url,
                httpx.Client(
                    base_url=url + "/", headers=dict(headers or {}), timeout=options.timeout_s, limits=connections
                ),
            )
            for url in options.urls
        ]
        self._counters = Counters()
        self._health: threading.Thread | None = None
        self._closed = False

    # -- choosing a replica ---------------------------------------------------------------------
    def _usable(self, now: float) -> list[Replica]:
        return [r for r in self.replicas if r.up and r.cooling_until <= now]

    def _acquire(self) -> tuple[Replica, int]:
        """Wait for a slot under the limit and a replica that is up and not cooling down; take both."""
        with self._cond:
            while True:
                if self._closed:
                    raise InferenceError(f"model {self.name}: the backend was unloaded")
                now = self._clock()
                up = [r for r in self.replicas if r.up]
                if not up:
                    since = min(r.down_since for r in self.replicas)
                    if now - since >= self.options.unavailable_after_s:
                        problems = "; ".join(f"{r.url}: {r.last_problem}" for r in self.replicas)
                        raise Unavailable(
                            f"no replica of model {self.name} is reachable (out for "
                            f"{now - since:.0f} s; health checks every {self.options.health_interval_s:g} s): {problems}"
                        )
                    self._cond.wait(timeout=min(self.options.health_interval_s, self.options.unavailable_after_s))
                    continue
                usable = self._usable(now)
                if usable and self.limit.may_send():
                    replica = min(usable, key=lambda r: (r.in_flight, r.sent))
                    replica.in_flight += 1
                    replica.sent += 1
                    return replica, self.limit.take()
                waits = [r.cooling_until - now for r in up if r.cooling_until > now]
                self._cond.wait(timeout=min(waits) if waits and not usable else None)

    def _release(self, replica: Replica, window: int, outcome: str, latency_s: float | None = None) -> None:
        with self._cond:
            replica.in_flight -= 1
            if outcome == "ok":
                replica.answered += 1
                replica.consecutive_failures = 0
            elif outcome not in {"throttled", "refused"}:
                replica.failed += 1
        self.limit.release(window, outcome, latency_s)

    def _take_out(self, replica: Replica, problem: str) -> None:
        with self._cond:
            replica.last_problem = problem
            if replica.up:
                replica.up = False
                replica.down_since = self._clock()
                replica.taken_out += 1
            if self._health is None or not self._health.is_alive():
                self._health = threading.Thread(target=self._health_loop, name=f"health-{self.name}", daemon=True)
                self._health.start()
            self._cond.notify_all()

    def _health_loop(self) -> None:
        """Check the replicas that are out every ``health_interval_s``; put back those that answer."""
        while True:
            with self._cond:
                down = [r for r in self.replicas if not r.up]
                if self._closed or not down:
                    self._health = None
                    return
            for replica in down:
                if self.check(replica):
                    with self._cond:
                        replica.up, replica.consecutive_failures, replica.cooling_until = True, 0, 0.0
                        replica.put_back += 1
                        self._cond.notify_all()
            self._sleep(self.options.health_interval_s)

    def check(self, replica: Replica) -> bool:
        """One health check: ``GET <replica>/<health_path>`` answers 200."""
        import httpx

        try:
            response = replica.client.get(self.options.health_path, timeout=min(5.0, self.options.timeout_s))
        except httpx.HTTPError as exc:
            replica.last_problem = f"health check: {type(exc).__name__}"
            return False
        return response.status_code == 200

    # -- sending ----------------------------------------------------------------------------------
    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` on a replica; the reply's JSON, or ``InferenceError`` once retries run out."""
        tried = _Attempts()
        while True:
            replica, window = self._acquire()
            began = self._clock()
            try:
                outcome, reply, wait = self._attempt(replica, path, body, tried)
            except BaseException:  # refused (4xx) or interrupted: free the slot, then say why
                self._release(replica, window, "refused")
                raise
            self._release(replica, window, outcome, self._clock() - began if outcome == "ok" else None)
            if reply is not None:
                return reply
            if outcome == "throttled":
                if tried.throttle_wait_s + wait > self.options.throttle_budget_s:
                    raise InferenceError(
                        f"model server kept asking to slow down for {tried.throttle_wait_s:.0f} s "
                        f"(throttle_budget_s {self.options.throttle_budget_s:g}); last: {tried.problem}"
                    )
                tried.throttle_wait_s += wait
                continue
            if outcome == "failover":
                if tried.failovers > 2 * len(self.replicas) + self.options.retries:
                    raise InferenceError(
                        f"model server connection failed {tried.failovers} times; last: {tried.problem}"
                    )
                continue
            if tried.errors > self.options.retries:
                raise InferenceError(f"model server failed after {tried.errors} attempts; last: {tried.problem}")
            self._sleep(self.options.backoff_s * 2 ** (tried.errors - 1))

    def _attempt(
        self, replica: Replica, path: str, body: dict[str, Any], tried: _Attempts
    ) -> tuple[str, dict[str, Any] | None, float]:
        """One attempt: (outcome, reply JSON when it worked, seconds to wait before the next when throttled)."""
        import httpx

        try:
            response = replica.client.post(path, json=body)
        except httpx.TimeoutException as exc:
            tried.errors += 1
            tried.problem = f"{type(exc).__name__}: {exc or 'timed out'} ({replica.url})"
            self._count(timeouts=1)
            self._failure(replica, tried.problem)
            return "timeout", None, 0.0
        except httpx.TransportError as exc:  # refused, reset, closed mid-reply: the replica, not the request
            tried.failovers += 1
            tried.problem = f"{type(exc).__name__}: {exc} ({replica.url})"
            self._count(failovers=1)
            self._failure(replica, tried.problem, connection=True)
            return "failover", None, 0.0
        status = response.status_code
        if status == 200:
            try:
                reply = response.json()
            except ValueError:
                tried.errors += 1
                tried.problem = f"not JSON: {response.text[:200]}"
                return "error", None, 0.0
            self._count_usage(reply)
            return "ok", reply, 0.0
        tried.problem = f"HTTP {status}: {response.text[:200]} ({replica.url})"
        if status in THROTTLE_STATUS:
            return "throttled", None, self._cool(replica, response, tried)
        if status in RETRY_STATUS:
            tried.errors += 1
            if status in GATEWAY_STATUS:
                self._failure(replica, tried.problem)
            return "error", None, 0.0
        raise InferenceError(f"model server refused the request: HTTP {status}: {response.text[:500]}")

    def _cool(self, replica: Replica, response: httpx.Response, tried: _Attempts) -> float:
        """Hold requests to ``replica`` for its ``Retry-After`` (or the backoff); returns the wait."""
        asked = retry_after_seconds(response.headers.get("Retry-After"))
        tried.throttles += 1
        wait = asked if asked is not None else self.options.backoff_s * 2 ** min(6, tried.throttles - 1)
        wait = min(wait, self.options.max_retry_after_s)
        with self._cond:
            replica.cooling_until = max(replica.cooling_until, self._clock() + wait)
            self._counters.throttled += 1
            self._counters.retry_after_waits += asked is not None
            per = self._counters.replicas.setdefault(replica.url, {})
            per["throttled"] = per.get("throttled", 0) + 1
        return wait

    def _failure(self, replica: Replica, problem: str, *, connection: bool = False) -> None:
        """Take ``replica`` out after a failure that is its own: a connection failure at once when another
        replica is up; ``down_after`` in a row otherwise (a lone replica only for connection failures: a lone
        replica that times out stays in, and its items fail as they did)."""
        with self._cond:
            replica.consecutive_failures += 1
            others = any(r.up for r in self.replicas if r is not replica)
            in_a_row = replica.consecutive_failures >= self.options.down_after
            down = (connection and others) or (in_a_row and (others or connection))
        if down:
            self._take_out(replica, problem)

    def _count(self, **amounts: int) -> None:
        with self._cond:
            for key, amount in amounts.items():
                setattr(self._counters, key, getattr(self._counters, key) + amount)

    def _count_usage(self, reply: Any) -> None:
        usage = reply.get("usage") if isinstance(reply, dict) else None
        if isinstance(usage, dict):
            self._count(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )

    def get_each(self, path: str, *, from_root: bool = False) -> list[dict[str, Any]]:
        """``GET path`` on every replica (relative to its base URL, or to the server's root with ``from_root``,
        e.g. vLLM's ``/version``): its URL, status and JSON or error, e.g. to compare what replicas serve."""
        import httpx

        out = []
        for replica in self.replicas:
            url = f"{_root(replica.url)}/{path.lstrip('/')}" if from_root else path
            try:
                response = replica.client.get(url, timeout=min(10.0, self.options.timeout_s))
                is_json = response.headers.get("content-type", "").startswith("application/json")
                out.append(
                    {"url": replica.url, "status": response.status_code, "json": response.json() if is_json else None}
                )
            except (httpx.HTTPError, ValueError) as exc:
                out.append({"url": replica.url, "status": None, "error": f"{type(exc).__name__}: {exc}"})
        return out

    # -- what a run reports --------------------------------------------------------------------------
    def mark(self) -> dict[str, Any]:
        """The counts now, for :meth:`report` ``since`` (one run's share of a long-lived backend)."""
        with self._cond:
            return {
                "limit": self.limit.mark(),
                "counters": {f.name: getattr(self._counters, f.name) for f in fields(Counters) if f.name != "replicas"},
                "replicas": {r.url: r.counts() for r in self.replicas},
            }

    def report(self, since: dict[str, Any] | None = None) -> dict[str, Any]:
        """What happened since ``since`` (a :meth:`mark`; everything without it)."""
        before = since or {"limit": 0, "counters": {}, "replicas": {}}
        now = self.mark()
        counters = {k: v - before["counters"].get(k, 0) for k, v in now["counters"].items()}
        replicas = []
        for url, counts in now["replicas"].items():
            old = before["replicas"].get(url, {})
            replicas.append(
                {k: (v - old.get(k, 0) if isinstance(v, int) and k != "up" else v) for k, v in counts.items()}
            )
        usage = {"prompt_tokens": counters.pop("prompt_tokens"), "completion_tokens": counters.pop("completion_tokens")}
        return {
            "replicas": replicas,
            "concurrency": self.limit.report(before["limit"]),
            **counters,
            "usage": usage,
        }

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for replica in self.replicas:
            replica.client.close()


def _root(url: str) -> str:
    """The server of a base URL.

    >>> _root("http://gpu1:8000/v1")
    'http://gpu1:8000'
    """
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
