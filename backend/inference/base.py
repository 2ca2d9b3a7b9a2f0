"""The contract every model backend fulfils.

``generate(requests, params) -> list[str]``: one answer text per request, in order; greedy unless
``params`` says otherwise. ``score_options(request, options) -> list[OptionScore]``: the log-likelihood of
each option text as the continuation of the request (sum over its tokens, and the per-token mean).

A backend may also answer benchmark items directly (a baseline that reads the item's metadata, like the
random baseline or the planning tab's ``nsplan-lite``): it then defines
``answer_items(items, params) -> list[str]``, and the runner calls that instead of ``generate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from backend.inference.request import GenerationParams, Request

if TYPE_CHECKING:
    from backend.inference.benchmarks import EvalItem


@dataclass(frozen=True)
class OptionScore:
    """Log-likelihood of one option: ``sum_logprob`` over its ``num_tokens`` tokens and ``mean_logprob``."""

    sum_logprob: float
    mean_logprob: float
    num_tokens: int = 0


@runtime_checkable
class Backend(Protocol):
    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]: ...

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]: ...

    def unload(self) -> None: ...


@runtime_checkable
class ItemAnswerer(Protocol):
    """A backend that answers benchmark items itself (baselines). Returns raw answer texts."""

    def answer_items(self, items: Sequence[EvalItem], params: GenerationParams) -> list[str]: ...


def best_option(scores: Sequence[OptionScore], by: str = "mean") -> int:
    """Index of the most likely option (ties go to the first).

    >>> best_option([OptionScore(-3.0, -1.5, 2), OptionScore(-2.0, -2.0, 1)])
    0
    >>> best_option([OptionScore(-3.0, -1.5, 2), OptionScore(-2.0, -2.0, 1)], by="sum")
    1
    """
    key = (lambda s: s.mean_logprob) if by == "mean" else (lambda s: s.sum_logprob)
    values = [key(s) for s in scores]
    return values.index(max(values))
