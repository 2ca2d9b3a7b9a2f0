"""The transport settings of an ``openai`` model entry (:class:`TransportOptions`, read from ``spec.options``) and
the option names that are transport, not answer (:data:`TRANSPORT_OPTIONS`). What they do:
:mod:`backend.inference.backends.transport`. Importing this module imports nothing heavy (the registry does).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from backend.errors import ValidationError

if TYPE_CHECKING:
    from backend.inference.registry import ModelSpec

#: Model options that decide how requests travel, never what is answered (not part of the fingerprint).
TRANSPORT_OPTIONS = frozenset(
    {
        "api_key_env",
        "timeout_s",
        "retries",
        "backoff_s",
        "adaptive_concurrency",
        "min_concurrency",
        "max_concurrency",
        "latency_tolerance",
        "health_path",
        "health_interval_s",
        "down_after",
        "max_retry_after_s",
        "throttle_budget_s",
        "unavailable_after_s",
    }
)

MAX_CONCURRENCY = 256


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in {"1", "true", "yes", "on"}


def base_urls(value: Any) -> tuple[str, ...]:
    """The replica URLs of ``options.base_url`` (one string or a list), without trailing slashes.

    >>> base_urls("http://a:8000/v1/")
    ('http://a:8000/v1',)
    >>> base_urls(["http://a:8000/v1", "http://b:8000/v1"])
    ('http://a:8000/v1', 'http://b:8000/v1')
    """
    urls = [value] if isinstance(value, str) else list(value or [])
    cleaned = tuple(str(url).strip().rstrip("/") for url in urls if str(url).strip())
    if not cleaned:
        raise ValidationError("options.base_url is required for the openai backend (a URL or a list of URLs)")
    bad = [url for url in cleaned if not url.startswith(("http://", "https://"))]
    if bad:
        raise ValidationError(f"base_url must start with http:// or https://: {', '.join(bad)}")
    if len(set(cleaned)) != len(cleaned):
        raise ValidationError("base_url lists the same replica twice")
    return cleaned


@dataclass(frozen=True)
class TransportOptions:
    """The transport settings of one model entry (``spec.options``; see the module docstring)."""

    urls: tuple[str, ...]
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 0.5
    concurrency: int = 1
    adaptive: bool = False
    min_concurrency: int = 1
    max_concurrency: int = 4
    latency_tolerance: float = 2.0
    health_path: str = "models"
    health_interval_s: float = 1.0
    down_after: int = 3
    max_retry_after_s: float = 60.0
    throttle_budget_s: float = 600.0
    unavailable_after_s: float = 30.0

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> TransportOptions:
        """The options of ``spec``; ``ValidationError`` listing every bad value."""
        options = spec.options
        concurrency = int(spec.concurrency)
        adaptive = _truthy(options.get("adaptive_concurrency", False))
        values: dict[str, Any] = {"urls": base_urls(options.get("base_url")), "concurrency": concurrency}
        values["adaptive"] = adaptive
        default_max = min(MAX_CONCURRENCY, max(concurrency, 4 * concurrency)) if adaptive else concurrency
        values["max_concurrency"] = default_max
        values["min_concurrency"] = 1 if adaptive else concurrency
        problems = []
        for f in fields(cls):
            if f.name in {"urls", "concurrency", "adaptive"} or f.name not in options:
                continue
            try:
                kind = type(getattr(cls, f.name))  # the default's type: float, int or str
                values[f.name] = kind(options[f.name])
            except (TypeError, ValueError):
                problems.append(f"option {f.name} must be a number, not {options[f.name]!r}")
        built = cls(**values) if not problems else None
        if built is not None:
            problems += built.problems()
        if problems:
            raise ValidationError([f"model {spec.name}: {p}" for p in problems])
        assert built is not None
        return built

    def problems(self) -> list[str]:
        out = []
        if not 1 <= self.min_concurrency <= self.concurrency <= self.max_concurrency <= MAX_CONCURRENCY:
            out.append(
                f"need 1 <= min_concurrency ({self.min_concurrency}) <= concurrency ({self.concurrency}) "
                f"<= max_concurrency ({self.max_concurrency}) <= {MAX_CONCURRENCY}"
            )
        if self.timeout_s <= 0 or self.retries < 0 or self.backoff_s < 0 or self.down_after < 1:
            out.append("timeout_s must be positive, retries and backoff_s at least 0, down_after at least 1")
        if self.latency_tolerance < 1:
            out.append("latency_tolerance is a ratio of latencies and must be at least 1")
        return out

    @property
    def workers(self) -> int:
        """Threads needed to keep the highest limit in flight."""
        return self.max_concurrency
