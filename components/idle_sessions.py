"""Give back the memory of Gradio sessions nobody uses any more.

Every new Gradio session (a page load, or an API client's ``session_hash`` on Gradio's routes) holds a copy of
the whole UI's per-block config, ~1 MB here, and Gradio drops one only when ``state_session_capacity`` more
recent sessions exist: closed tabs and finished scripts kept their memory for good (benchmarks/memory_soak.py
with a new session per call: 2,300 MiB at the end of the run, 1,524 MiB with this sweep). :func:`start_idle_session_sweep` evicts, once a minute, the sessions
idle for longer than ``session_idle_minutes`` that either have been closed (the tab's heartbeat ended) or never
held a ``gr.State`` value (API clients): nothing they hold is needed again. An open tab with state is never
evicted for idleness (it still counts toward ``session_capacity``).
"""

from __future__ import annotations

import datetime
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


def sweep_idle_sessions(holder: Any, idle: datetime.timedelta, now: datetime.datetime | None = None) -> int:
    """Evict the idle, closed-or-stateless sessions of Gradio's ``StateHolder``; returns how many went."""
    now = now or datetime.datetime.now()
    evicted = 0
    for session_id, last_used in list(holder.time_last_used.items()):
        if now - last_used <= idle:
            continue
        with holder.lock:  # the lock Gradio's own LRU eviction takes
            session = holder.session_data.get(session_id)
            if session is not None and not (session.is_closed or not session.state_data):
                continue  # an open tab with state: kept
            holder.session_data.pop(session_id, None)
            holder.time_last_used.pop(session_id, None)
        evicted += 1
    return evicted


def start_idle_session_sweep(demo: Any, idle_minutes: float, every_s: float | None = None) -> threading.Thread:
    """Run :func:`sweep_idle_sessions` on a daemon thread, once the app has a state holder: every ``every_s``
    (default: a minute, or half the idle time when that is shorter)."""
    idle = datetime.timedelta(minutes=idle_minutes)
    every_s = every_s or min(60.0, idle_minutes * 30)
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every_s):
            holder = getattr(demo, "state_holder", None)
            if holder is None:
                continue
            try:
                if evicted := sweep_idle_sessions(holder, idle):
                    log.info("gave back %d idle Gradio sessions", evicted)
            except Exception:  # noqa: BLE001 - a sweep must never stop the app; the next one retries
                log.exception("idle session sweep failed")

    thread = threading.Thread(target=run, name="compstudio-idle-sessions", daemon=True)
    thread.start()
    return thread
