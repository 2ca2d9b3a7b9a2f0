"""How a run's items are cut into batches for an in-process model: sizes, order, and preparing ahead.

* **Batch size.** A model's ``batch_size`` is a number, or ``"auto"``: the largest batch that fits, found by a
  doubling search during the run itself (1, 2, 4, ... up to :data:`AUTO_CAP` or ``options.max_batch_size``). A
  batch that runs out of memory is answered again at half the size, and that size becomes the ceiling. What the
  search found is remembered per model and settings in the app's pool (:attr:`ModelPool.batch_sizes
  <backend.inference.registry.ModelPool>`), so the next run starts there. Every answered batch counts: the search
  wastes no work but the batch that did not fit.
* **Order.** With batches of more than one item for a backend that pads them (one with ``prepare_batch``), items of
  similar length go together (:func:`by_length`), so a
  batch pads little. Batched answers equal one-by-one answers (left padding, tested), so the order changes no
  answer.
* **Preparing ahead.** A backend with ``prepare_batch(requests)`` and ``generate_prepared(prepared, params)``
  (the transformers backend: image decoding, resizing and the processor) has batch k+1 prepared on a background
  thread while batch k generates (:class:`Prefetcher`).

Nothing here imports torch: out of memory is recognised by the exception's class name or message
(:func:`is_out_of_memory`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, MutableMapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from backend.inference.request import Request

AUTO = "auto"
#: the largest batch the doubling search tries (a model may lower it with ``options.max_batch_size``)
AUTO_CAP = 256


def is_auto(batch_size: Any) -> bool:
    """Whether a model's ``batch_size`` asks for the search.

    >>> is_auto("auto"), is_auto(" Auto "), is_auto(8)
    (True, True, False)
    """
    return isinstance(batch_size, str) and batch_size.strip().lower() == AUTO


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether an exception says the device ran out of memory (``torch.OutOfMemoryError``, or a runtime error
    whose message says so, as some kernels raise).

    >>> is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    True
    >>> is_out_of_memory(ValueError("bad image"))
    False
    """
    if type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def request_length(request: Request) -> int:
    """A cheap estimate of a request's length in tokens, to group similar ones: its text's characters over four,
    and a fixed share per image or frame (the exact count needs the processor, which is the cost avoided).

    >>> request_length([{"type": "text", "text": "x" * 40}, {"type": "image", "image": "a.png"}])
    266
    """
    size = 0
    for part in request:
        if part["type"] == "text":
            size += len(part["text"]) // 4
        elif part["type"] == "image":
            size += 256
        else:
            size += 256 * len(part.get("frames") or ()) or 256 * int(part.get("num_frames") or 8)
    return size


def by_length(requests: Sequence[Request]) -> list[int]:
    """The indices of ``requests``, shortest first (stable): what batches of similar length are cut from.

    >>> by_length([[{"type": "text", "text": "x" * 400}], [{"type": "text", "text": "hi"}]])
    [1, 0]
    """
    return sorted(range(len(requests)), key=lambda i: request_length(requests[i]))


@dataclass
class BatchSizer:
    """The size of the next batch: fixed, or (``auto``) doubling until a batch runs out of memory or reaches
    ``cap``; ``ceiling`` is the largest size known to fit once one did not.

    >>> sizer = BatchSizer(1, auto=True, cap=8)
    >>> sizer.next(100), sizer.following()
    (1, 2)
    >>> for size in (1, 2, 4):
    ...     sizer.answered(size)
    >>> sizer.next(100), sizer.next(3)
    (8, 3)
    >>> sizer.out_of_memory(8); sizer.next(100), sizer.ceiling, sizer.used
    (4, 4, 4)
    """

    size: int
    auto: bool = False
    cap: int = AUTO_CAP
    ceiling: int | None = None
    used: int = 0  # the largest batch answered

    def next(self, remaining: int) -> int:
        return max(1, min(self.size, remaining))

    def following(self) -> int:
        """The size :meth:`next` gives after a batch of the current size is answered (what to prepare ahead)."""
        limit = min(self.cap, self.ceiling or self.cap)
        return min(self.size * 2, limit) if self.auto and self.size < limit else self.size

    def answered(self, count: int) -> None:
        self.used = max(self.used, count)
        limit = min(self.cap, self.ceiling or self.cap)
        if self.auto and count >= self.size and self.size < limit:
            self.size = min(self.size * 2, limit)

    def out_of_memory(self, count: int) -> None:
        """A batch of ``count`` items did not fit: half of it is the new size and ceiling."""
        self.size = max(1, count // 2)
        self.ceiling = self.size

    def remembered(self) -> tuple[int, int | None]:
        return (max(self.used, 1) if self.ceiling is None else self.ceiling), self.ceiling


def batch_sizer(
    batch_size: int | str, memory: MutableMapping[Hashable, tuple[int, int | None]], key: Hashable, cap: int
) -> BatchSizer:
    """A fixed sizer, or an ``auto`` one that starts where the last run of the same model and settings (``key`` in
    ``memory``) ended.

    >>> memory = {}
    >>> batch_sizer(8, memory, "k", 64).size
    8
    >>> memory["k"] = (16, 16)
    >>> sizer = batch_sizer("auto", memory, "k", 64); sizer.size, sizer.ceiling
    (16, 16)
    """
    if not is_auto(batch_size):
        return BatchSizer(int(batch_size))
    start, ceiling = memory.get(key, (1, None))
    return BatchSizer(max(1, min(start, cap)), auto=True, cap=cap, ceiling=ceiling)


class Prefetcher:
    """Runs ``prepare(requests)`` for the next batch on one background thread while the caller uses the current
    one. ``take`` returns what was prepared for those requests, or raises what preparing raised; a batch asked
    for that was not prepared ahead is prepared on the spot. Use as a context manager (the thread ends with it).
    """

    def __init__(self, prepare: Callable[[Sequence[Request]], Any]) -> None:
        self._prepare = prepare
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compstudio-prepare")
        self._ahead: tuple[tuple[int, ...], Future] | None = None

    def ahead(self, key: tuple[int, ...], requests: Sequence[Request]) -> None:
        """Start preparing the batch ``key`` (its items' indices)."""
        if self._ahead is not None and self._ahead[0] == key:
            return
        self._ahead = (key, self._pool.submit(self._prepare, list(requests)))

    def take(self, key: tuple[int, ...], requests: Sequence[Request]) -> Any:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == key:
            return ahead[1].result()
        return self._prepare(list(requests))

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
