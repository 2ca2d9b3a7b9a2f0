"""A backend whose answers depend on its image size limit, for the hand-worked grid example
(tests/test_reporting_grids.py); registered through the ``python`` backend type."""

from __future__ import annotations

from collections.abc import Sequence

from backend.inference.benchmarks import EvalItem
from backend.inference.request import GenerationParams


def right_items(max_image_side: int, index: int) -> bool:
    """Which items the model gets right at each image size limit: 32 px the even ones, 64 px the first 12,
    128 px all of them."""
    if max_image_side >= 128:
        return True
    if max_image_side >= 64:
        return index < 12
    return index % 2 == 0


class SightedBackend:
    """Answers an item with its key when :func:`right_items` says so, else with a wrong answer."""

    def __init__(self, spec) -> None:
        self.spec = spec

    def answer_items(self, items: Sequence[EvalItem], params: GenerationParams) -> list[str]:
        answers = []
        for item in items:
            right = right_items(self.spec.max_image_side, int(item.item_id.split("-")[-1]))
            if not isinstance(item.answer, frozenset):
                answers.append(str(item.answer) if right else "no idea")
            elif right:
                answers.append(", ".join(sorted(item.answer)))
            else:
                answers.append(next(letter for letter in item.letters if letter not in item.answer))
        return answers

    def generate(self, requests, params):  # pragma: no cover - answer_items is always used
        raise ValueError("answers items only")

    def unload(self) -> None:
        return None


def sighted_factory(spec) -> SightedBackend:
    return SightedBackend(spec)
