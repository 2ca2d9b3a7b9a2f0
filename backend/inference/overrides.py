"""Generation settings given on the command line (``--gen key=value``, lmms-eval's ``--gen_kwargs``).

An override replaces one field of the benchmark's :class:`~backend.inference.request.GenerationParams` for
one run. The effective settings are part of the prediction key (so answers under other settings are never
reused) and of the run manifest's ``generation``; the overrides themselves are named in the run's options and
in the manifest (``generation_overrides``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields, replace
from typing import Any

from backend.errors import ValidationError
from backend.inference.request import GenerationParams

Overrides = Mapping[str, Any]

_TYPES: dict[str, type] = {"max_new_tokens": int, "temperature": float, "top_p": float, "seed": int, "stop": tuple}


def parse_pairs(pairs: Iterable[str] | None, flag: str = "--option") -> dict[str, str]:
    """``key=value`` strings as a mapping (values stripped, not converted).

    >>> parse_pairs(["a=1", " b = x=y "])
    {'a': '1', 'b': 'x=y'}
    """
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"{flag} takes key=value, not {pair!r}")
        out[key.strip()] = value.strip()
    return out


def generation_overrides(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """Checked, typed overrides from ``--gen`` pairs or a config file's ``gen`` mapping. ``stop`` takes
    several strings separated by ``|`` (or a list).

    >>> generation_overrides({"temperature": "0.7", "max_new_tokens": "64", "stop": "###|END"})
    {'temperature': 0.7, 'max_new_tokens': 64, 'stop': ('###', 'END')}
    >>> generation_overrides({"top_k": "5"})
    Traceback (most recent call last):
    ...
    backend.errors.ValidationError: unknown generation setting 'top_k'; valid: max_new_tokens, temperature, top_p, stop, seed
    """
    known = [f.name for f in fields(GenerationParams)]
    out: dict[str, Any] = {}
    problems = []
    for key, value in (values or {}).items():
        if key not in _TYPES:
            problems.append(f"unknown generation setting {key!r}; valid: {', '.join(known)}")
            continue
        try:
            if key == "stop":
                out[key] = (
                    tuple(value) if isinstance(value, (list, tuple)) else tuple(s for s in str(value).split("|") if s)
                )
            else:
                out[key] = _TYPES[key](value)
        except (TypeError, ValueError):
            problems.append(f"generation setting {key} must be {_TYPES[key].__name__}, not {value!r}")
    if "max_new_tokens" in out and out["max_new_tokens"] < 1:
        problems.append("max_new_tokens must be at least 1")
    if out.get("temperature", 0.0) < 0 or not 0 < out.get("top_p", 1.0) <= 1:
        problems.append("temperature must be at least 0 and top_p in (0, 1]")
    if problems:
        raise ValidationError(problems)
    return out


def apply_overrides(params: GenerationParams, overrides: Overrides | None) -> GenerationParams:
    """``params`` with ``overrides`` in place.

    >>> apply_overrides(GenerationParams(max_new_tokens=8), {"temperature": 0.5}).temperature
    0.5
    """
    return replace(params, **dict(overrides)) if overrides else params


def run_label(overrides: Overrides | None) -> str:
    """A short, stable label of overrides, for run names (``temperature=0.7,top_p=0.9``).

    >>> run_label({"top_p": 0.9, "temperature": 0.7})
    'temperature=0.7,top_p=0.9'
    """
    return ",".join(f"{k}={'|'.join(v) if isinstance(v, tuple) else v}" for k, v in sorted((overrides or {}).items()))
