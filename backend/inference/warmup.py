"""Warm the in-process baselines in the background, so the first live answer does not wait for them.

``nsplan-lite`` builds its knowledge base and embeds every knowledge-base intent on first use (the sentence
model loads then too): 10-15 s on a 2-core machine. :func:`start_warm_up` does that work in a daemon thread
once the server answers, so start-up is not delayed and the first "Ask" finds the model ready. A failure
logs one line; the first call then builds the model as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from backend.inference.registry import get_model

if TYPE_CHECKING:
    from backend.context import AppContext

log = logging.getLogger(__name__)

#: In-process models warmed at start: the planning baselines (see ``backend.planning.evaluation``).
WARM_MODELS: tuple[str, ...] = ("nsplan-lite", "bigram-prior")


def warm_models(ctx: AppContext, names: Sequence[str] = WARM_MODELS) -> list[str]:
    """Load each model into ``ctx.pool`` and let it prepare for this app's database (a backend with a
    ``warm(database)`` method builds what it would build on its first call). Returns the names warmed;
    a model that fails is logged in one line and skipped."""
    warmed = []
    for name in names:
        try:
            backend = get_model(ctx, name)
            warm = getattr(backend, "warm", None)
            if warm is not None:
                warm(ctx.database)
        except Exception as exc:  # noqa: BLE001 - a warm-up must never stop the app; the first call retries
            log.warning("warm-up of %s failed (%s: %s); it is built on first use", name, type(exc).__name__, exc)
            continue
        warmed.append(name)
    return warmed


def start_warm_up(
    ctx: AppContext,
    ready: Callable[[], bool] = lambda: True,
    names: Sequence[str] = WARM_MODELS,
    wait_s: float = 120.0,
    done: threading.Event | None = None,
) -> threading.Thread:
    """:func:`warm_models` in a daemon thread that first waits (up to ``wait_s``) until ``ready()`` is true,
    e.g. until the web server is serving; ``done`` is set when it has finished (warmed or not)."""

    def run() -> None:
        try:
            deadline = time.monotonic() + wait_s
            while not ready() and time.monotonic() < deadline:
                time.sleep(0.1)
            started = time.monotonic()
            warmed = warm_models(ctx, names)
            print(
                f"CompStudio: warmed {', '.join(warmed) or 'no models'} in {time.monotonic() - started:.1f} s",
                flush=True,
            )
        finally:
            if done is not None:
                done.set()

    thread = threading.Thread(target=run, name="compstudio-warm-up", daemon=True)
    thread.start()
    return thread
