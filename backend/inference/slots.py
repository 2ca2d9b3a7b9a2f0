"""The model queue: at most ``limit`` model calls run at once in this process, and the rest wait in arrival order.

:class:`FairSlots` is what :meth:`backend.inference.registry.ModelPool.slot` hands out (setting
``model_concurrency``). It is the one limit every model call takes, whatever page, script route or command it
comes from, because each audience's page is its own ``gr.Blocks`` and Gradio's ``concurrency_id`` does not reach
across Blocks (docs/decisions.md, "One model queue in the ModelPool").

Its rules, each tested in tests/test_model_pool.py:

* **At most ``limit`` holders.** A caller that finds every slot taken, or others already waiting, waits.
* **First come, first served.** A freed slot goes straight to the longest waiter (handed over under the lock),
  so a caller arriving later cannot overtake one that waits, and a batch run that takes a slot per chunk lets
  a live answer in between two chunks.
* **Nothing leaks.** A slot is given back when its ``with`` block ends in any way: a return, an exception, a
  generator closed while inside it (Gradio closes a cancelled generator event). A waiter that stops waiting
  (its ``cancel`` event is set, its ``timeout`` passes, or an exception such as ``KeyboardInterrupt`` reaches
  it) leaves the queue; when a slot was handed to it at that same moment, it passes the slot on.
* **Re-entrant per thread.** A thread that holds a slot and asks again (a batch run loading a judge model)
  goes through without a second slot, so ``limit=1`` never deadlocks on itself. Hold a slot around model work
  only, never across a ``yield`` of a Gradio generator (Gradio may run the next step on another thread).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from backend.errors import ModelBusy

#: How often a waiter with a ``cancel`` event looks at it (seconds). Only how soon a cancel is noticed.
CANCEL_POLL_S = 0.05


class _Ticket:
    __slots__ = ("granted",)

    def __init__(self) -> None:
        self.granted = False


class FairSlots:
    """A FIFO, cancellable, per-thread re-entrant semaphore of ``limit`` slots."""

    def __init__(self, limit: int = 1) -> None:
        if limit < 1:
            raise ValueError("a model queue needs at least one slot (setting model_concurrency >= 1)")
        self.limit = limit
        self._cond = threading.Condition(threading.Lock())
        self._holders = 0
        self._waiting: deque[_Ticket] = deque()
        self._depth: dict[int, int] = {}  # thread id -> how deep that thread is inside slot() (under _cond)

    def in_use(self) -> int:
        """Slots held now."""
        with self._cond:
            return self._holders

    def waiting(self) -> int:
        """Callers waiting for a slot now."""
        with self._cond:
            return len(self._waiting)

    def held_here(self) -> bool:
        """Whether the calling thread holds a slot."""
        with self._cond:
            return threading.get_ident() in self._depth

    @contextmanager
    def slot(self, *, cancel: threading.Event | None = None, timeout: float | None = None) -> Iterator[None]:
        """Hold one slot for the ``with`` block (waiting in arrival order for it).

        ``cancel``: an event whose setting makes a waiter give up; ``timeout``: the most seconds to wait. Either
        way it raises :class:`~backend.errors.ModelBusy` and holds nothing."""
        owner = threading.get_ident()  # the thread that entered; a generator may be closed from another one
        with self._cond:
            nested = owner in self._depth
            if nested:
                self._depth[owner] += 1
        if not nested:
            self._acquire(cancel, timeout)
        try:
            yield
        finally:
            with self._cond:
                self._depth[owner] -= 1
                if not self._depth[owner]:
                    del self._depth[owner]
                    self._hand_on()

    def _acquire(self, cancel: threading.Event | None, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            if self._holders < self.limit and not self._waiting:
                self._holders += 1
                self._depth[threading.get_ident()] = 1
                return
            ticket = _Ticket()
            self._waiting.append(ticket)
            try:
                while not ticket.granted:
                    if cancel is not None and cancel.is_set():
                        raise ModelBusy(self._left_message("the request was cancelled"))
                    wait = None if deadline is None else deadline - time.monotonic()
                    if wait is not None and wait <= 0:
                        raise ModelBusy(self._left_message(f"no model slot freed within {timeout:g} s"))
                    if cancel is not None:
                        wait = CANCEL_POLL_S if wait is None else min(wait, CANCEL_POLL_S)
                    self._cond.wait(wait)
            except BaseException:
                if ticket.granted:  # handed over just now: give it to the next waiter
                    self._hand_on()
                else:
                    self._waiting.remove(ticket)
                raise
            self._depth[threading.get_ident()] = 1

    def _hand_on(self) -> None:
        """Give the caller's slot to the longest waiter, or free it (with ``_cond`` held)."""
        if self._waiting:
            self._waiting.popleft().granted = True  # the holder count stays: the slot changes hands
            self._cond.notify_all()
        else:
            self._holders -= 1

    def _left_message(self, why: str) -> str:
        return (
            f"Gave up waiting for the model queue ({why}; {self._holders} of {self.limit} slots busy, "
            f"{len(self._waiting) - 1} others waiting). Try again when the running model calls are done, "
            "or raise the setting model_concurrency if the hardware can run more at once."
        )
