"""A scripted model for the Samples tests: the requests it is asked get :data:`OUTPUTS` in turn, so a run holds
every outcome the view keeps apart: JSON answers, refusals, unparsed text, failed calls and a payload that must
reach the page inert."""

from __future__ import annotations

from collections.abc import Sequence

from backend.inference.base import OptionScore
from backend.inference.request import GenerationParams, Request

XSS = '<img src=x data-xss onerror="window.__xss=1">**B**'
OUTPUTS: tuple[str | Exception, ...] = (
    '{"answer": "A"}',
    '```json\n{"answer": "B"}\n```',
    "I cannot tell from the image.",
    "Hmm, hard to say.",
    "The answer is C.",
    RuntimeError("server error (simulated)"),
    XSS,
    "A",
)


class ScriptedBackend:
    def __init__(self, spec) -> None:
        self.spec = spec
        self.asked = 0

    def generate_each(self, requests: Sequence[Request], params: GenerationParams) -> list[str | Exception]:
        out = []
        for _request in requests:
            out.append(OUTPUTS[self.asked % len(OUTPUTS)])
            self.asked += 1
        return out

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        out = self.generate_each(requests, params)
        for answer in out:
            if isinstance(answer, Exception):
                raise answer
        return [str(a) for a in out]

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        return [OptionScore(0.0, 0.0, 1) for _ in options]

    def unload(self) -> None:
        return None


def scripted_factory(spec) -> ScriptedBackend:
    return ScriptedBackend(spec)
