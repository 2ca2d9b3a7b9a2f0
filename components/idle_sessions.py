"""Gradio sessions: made lean, and given back when nobody uses them any more.

:class:`LeanStateHolder` (installed by ``components.role_pages.CompStudioBlocks``) makes each new session
compute the per-block config Gradio keeps for it only when something asks for a block's (Gradio reads them
all only for deep links, which this app does not offer): Gradio computes all 761 at the session's start: 36 ms on
the event loop at every page load and 1.09 MB per session; lean, 0.07 ms and 0.05 MB
(``benchmarks/session_start.py``; the figure below is from before).

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
import os
import threading
from collections.abc import Iterable
from copy import copy
from typing import Any

from gradio.state_holder import SessionState, StateHolder

log = logging.getLogger(__name__)


class LazyConfigValues(dict):
    """``SessionState.config_values``, each block's config computed on first use (all of them when iterated)."""

    def __init__(self, blocks_config: Any, ids: Iterable[int]):
        super().__init__()
        self._blocks_config = blocks_config
        self._ids = tuple(ids)

    def __missing__(self, key: int) -> dict:
        value = self._blocks_config.config_for_block(key, [], self._blocks_config.blocks[key])
        self[key] = value
        return value

    def _complete(self) -> None:
        for key in self._ids:
            if not dict.__contains__(self, key) and key in self._blocks_config.blocks:
                self[key]  # noqa: B018 - computes it

    def items(self):
        self._complete()
        return super().items()

    def values(self):
        self._complete()
        return super().values()


class LeanSessionState(SessionState):
    """Gradio's ``SessionState`` (6.31) with ``config_values`` lazy; everything else as Gradio's ``__init__``
    sets it (tests/test_role_pages.py checks the attributes against Gradio's own)."""

    def __init__(self, blocks: Any):  # noqa: D107 - no super().__init__: it computes every config at once
        self.blocks_config = copy(blocks.default_config)
        ids = [key for key in self.blocks_config.blocks if key in blocks.blocks]
        self.config_values = LazyConfigValues(self.blocks_config, ids)
        self.state_data: dict[int, Any] = {}
        self._state_ttl = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600


class LeanStateHolder(StateHolder):
    """Gradio's ``StateHolder`` whose new sessions are :class:`LeanSessionState`."""

    def __getitem__(self, session_id: str) -> SessionState:
        if session_id not in self.session_data:
            with self.lock:
                self.session_data.setdefault(session_id, LeanSessionState(self.blocks))
        return super().__getitem__(session_id)


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
