"""Items made ready for a model: each item's prompt and the key its answer is stored under (:func:`prepare`), and
the generation settings a run uses (:func:`effective_params`). Below the runner, so that the manifest, the run's
items and the readers use them without importing the runner back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.digests import FileDigests
from backend.inference.overrides import Overrides, apply_overrides
from backend.inference.registry import ModelSpec
from backend.inference.request import GenerationParams, Request, request_hash


@dataclass(frozen=True)
class Prepared:
    """One item ready for the model: its prompt and the key it is stored under."""

    item: EvalItem
    request: Request
    prompt_hash: str


def prepare(bench: BenchmarkSpec, items: Sequence[EvalItem], digests: FileDigests | None = None) -> list[Prepared]:
    """Each item's prompt and prompt hash (media files hashed through ``digests``, ``AppContext.digests``)."""
    digests = digests if digests is not None else FileDigests()
    prepared = []
    for item in items:
        request = bench.build_request(item)
        prepared.append(Prepared(item, request, request_hash(request, digests)))
    return prepared


def effective_params(bench: BenchmarkSpec, spec: ModelSpec, gen: Overrides | None = None) -> GenerationParams:
    """The benchmark's generation settings, the model's ``max_new_tokens`` where it names none, then the run's
    ``gen`` overrides (:mod:`backend.inference.overrides`)."""
    params = bench.params
    if params.max_new_tokens is None:
        params = replace(params, max_new_tokens=spec.max_new_tokens)
    return apply_overrides(params, gen)
