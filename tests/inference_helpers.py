"""Small in-process backends for inference tests (registered through the ``python`` backend type)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from backend.inference.base import OptionScore
from backend.inference.request import GenerationParams, Request, request_text

CALLS: list[int] = []


class EchoBackend:
    """Answers "The answer is (X)." where X is the first option letter whose text appears in the prompt's
    first line; raises for prompts containing BOOM; sleeps ``options.sleep_s`` per request."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self.sleep_s = float(spec.options.get("sleep_s", 0))
        self.calls = 0

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        self.calls += 1
        CALLS.append(len(requests))
        answers = []
        for request in requests:
            prompt = request_text(request)
            if "BOOM" in prompt:
                raise RuntimeError("CUDA out of memory (simulated)")
            if self.sleep_s:
                time.sleep(self.sleep_s)
            answers.append(os.environ.get("ECHO_ANSWER", "The answer is (A)."))
        return answers

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        return [OptionScore(-float(i), -float(i), 1) for i, _ in enumerate(options)]

    def unload(self) -> None:
        return None


def echo_factory(spec) -> EchoBackend:
    return EchoBackend(spec)
