"""Scripted annotators for the load and crash tests and benchmarks/annotation_load.py.

Each annotator signs in over HTTP, asks for a task, and submits two valid intents for it, N times,
through the named endpoints (``intent_next``, ``intent_submit``). A submission counts as acknowledged
only when the server's reply arrived. After a connection error the annotator waits for the server,
signs in again and retries the same submission (idempotent on the server).

Latency is submit-to-next-task: all annotators first sign in and fetch their first task, then start
submitting together (a barrier), so that sign-ins (scrypt) and Gradio's per-session set-up are not
counted as the latency of somebody else's submission.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from e2e_helpers import ApiClient, ApiError

INTENTS = ("S/He wants to get the day going", "S/He is busy at home")


# How one "submit, then get the next task" step is made:
#   lean:   one call, POST /api/intent_submit (web/scripts.py); its reply carries the next task;
#   gradio: the same one call through Gradio's own route on the scripts mount (/scripts/gradio_api/api/...);
#   queued: Gradio's default, two calls through the queue (/scripts/gradio_api/call/intent_submit, then intent_next).
MODES = ("lean", "gradio", "queued")


@dataclass
class AnnotatorResult:
    name: str
    acknowledged: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    started: float = 0.0  # perf_counter when all annotators were ready and began submitting
    finished: float = 0.0  # perf_counter when this one stopped


def _caller(client: ApiClient, mode: str):
    if mode == "queued":
        return client.call
    route = "/scripts/gradio_api/api" if mode == "gradio" else "/api"
    return lambda name, *args: client.run(name, *args, route=route)


# How an annotator gets a signed-in client: by default the login form with (name, password); a crowd worker
# arrives by their study link instead (tests/test_campaign_load.py).
Connect = Callable[[], ApiClient]


def _client(connect: Connect, deadline: float) -> ApiClient:
    while True:
        try:
            return connect()
        except (OSError, http.client.HTTPException, PermissionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def run_annotator(
    url: str,
    name: str,
    password: str,
    submissions: int,
    result: AnnotatorResult,
    deadline: float,
    stop: threading.Event | None = None,
    mode: str = "lean",
    think_s: float = 0.0,
    ready: threading.Barrier | None = None,
    connect: Connect | None = None,
) -> None:
    """Submit ``submissions`` annotations (or stop when ``stop`` is set / nothing is left / past ``deadline``)."""
    connect = connect or (lambda: ApiClient(url, name, password))
    try:
        _run_annotator(connect, submissions, result, deadline, stop, mode, think_s, ready)
    finally:
        result.finished = time.perf_counter()
        if ready is not None and not result.started:
            ready.abort()  # failed before the start line: do not keep the others waiting for it


def _run_annotator(
    connect: Connect,
    submissions: int,
    result: AnnotatorResult,
    deadline: float,
    stop: threading.Event | None,
    mode: str,
    think_s: float,
    ready: threading.Barrier | None,
) -> None:
    client = _client(connect, deadline)
    call = _caller(client, mode)
    queued = mode == "queued"
    task = None
    if ready is not None:
        try:
            task = call("intent_next")["task"]
        except (OSError, http.client.HTTPException, ValueError, ApiError):
            task = None  # the loop below retries
        try:
            ready.wait(timeout=max(1.0, deadline - time.monotonic()))
        except threading.BrokenBarrierError:
            pass
    result.started = time.perf_counter()
    while len(result.acknowledged) < submissions and time.monotonic() < deadline:
        if stop is not None and stop.is_set():
            return
        try:
            if task is None:
                task = call("intent_next")["task"]
                if task is None:
                    return
            start = time.perf_counter()
            if queued:  # the baseline: submit, then ask for the next task in a second queued call
                call("intent_submit", task["sequence_id"], *INTENTS)
                reply = call("intent_next")
            else:
                reply = call("intent_submit", task["sequence_id"], *INTENTS)
            result.latencies_ms.append((time.perf_counter() - start) * 1000)
            result.acknowledged.append(task["sequence_id"])
            task = reply["task"]
            if task is None:
                return
            if think_s:
                time.sleep(think_s)  # the annotator reads the next task and writes (not counted as latency)
        except (OSError, http.client.HTTPException, ValueError):
            result.retries += 1
            if stop is not None and stop.is_set():
                return
            time.sleep(0.2)
            client.close()
            client = _client(connect, deadline)
            call = _caller(client, mode)
        except ApiError as exc:
            result.errors.append(str(exc))
            return
    client.close()


def run_annotators(
    url: str,
    names: list[str],
    password: str,
    submissions: int,
    timeout: float = 300.0,
    stop: threading.Event | None = None,
    mode: str = "lean",
    think_s: float = 0.0,
    connect: Callable[[str], ApiClient] | None = None,
) -> list[AnnotatorResult]:
    """``connect(name)``, when given, signs an annotator in (else the login form with ``password``)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    results = [AnnotatorResult(name) for name in names]
    deadline = time.monotonic() + timeout
    ready = threading.Barrier(len(names))
    threads = [
        threading.Thread(
            target=run_annotator,
            args=(url, r.name, password, submissions, r, deadline, stop, mode, think_s, ready),
            kwargs={"connect": (lambda name=r.name: connect(name)) if connect else None},
        )
        for r in results
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def throughput(results: list[AnnotatorResult]) -> float:
    """Acknowledged submissions per second, from the moment all annotators were ready to the last one's end."""
    started = min((r.started for r in results if r.started), default=0.0)
    finished = max((r.finished for r in results), default=0.0)
    done = sum(len(r.latencies_ms) for r in results)
    return done / (finished - started) if finished > started else float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
