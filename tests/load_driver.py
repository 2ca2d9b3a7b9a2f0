"""Scripted annotators for the load and crash tests and benchmarks/annotation_load.py.

Each annotator signs in over HTTP, asks for a task, and submits two valid intents for it, N times,
through the named endpoints (``intent_next``, ``intent_submit``). A submission counts as acknowledged
only when the server's reply arrived. After a connection error the annotator waits for the server,
signs in again and retries the same submission (idempotent on the server).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx
from e2e_helpers import ApiClient, ApiError

INTENTS = ("S/He wants to get the day going", "S/He is busy at home")


@dataclass
class AnnotatorResult:
    name: str
    acknowledged: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)


def _client(url: str, name: str, password: str, deadline: float) -> ApiClient:
    while True:
        try:
            return ApiClient(url, name, password)
        except (httpx.HTTPError, PermissionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def run_annotator(url: str, name: str, password: str, submissions: int, result: AnnotatorResult,
                  deadline: float, stop: threading.Event | None = None, queued: bool = False,
                  think_s: float = 0.0) -> None:
    """Submit ``submissions`` annotations (or stop when ``stop`` is set / nothing is left / past ``deadline``)."""
    client = _client(url, name, password, deadline)
    call = client.call if queued else client.run
    task = None
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
        except (httpx.HTTPError, ValueError):
            result.retries += 1
            if stop is not None and stop.is_set():
                return
            time.sleep(0.2)
            client.close()
            client = _client(url, name, password, deadline)
            call = client.call if queued else client.run
        except ApiError as exc:
            result.errors.append(str(exc))
            return
    client.close()


def run_annotators(url: str, names: list[str], password: str, submissions: int, timeout: float = 300.0,
                   stop: threading.Event | None = None, queued: bool = False,
                   think_s: float = 0.0) -> list[AnnotatorResult]:
    results = [AnnotatorResult(name) for name in names]
    deadline = time.monotonic() + timeout
    threads = [
        threading.Thread(target=run_annotator,
                         args=(url, r.name, password, submissions, r, deadline, stop, queued, think_s))
        for r in results
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
