"""Which stored answers a view shows for a model: :func:`read_key`, what every reader uses instead of
:func:`backend.inference.runner.store_key` (runs keep that one, strict).

A served model's answers are keyed by what its server says it serves (:mod:`backend.inference.revision`). When
the server does not answer, its revision becomes ``served:unreachable@<url>``, a key with nothing stored under it,
although nothing is known about the weights having changed. So while the backend's identity says *unreachable*,
a reader is given the key of the model's newest finished run on that benchmark whose settings, recomputed with the
revision that run recorded, equal the model's settings now (spec and generation parameters): "the server is down,
here are the results of its last run (revision X)". :class:`ReadKey` carries the sentence the views show beside
that model (``note``), never silently. A reachable server keys as before: other weights served mean other
results, never the old ones.

The identity is the backend's cached one (read at its first call, again at the start of every run): a view
never probes a server whose identity is known. When nothing has read it yet (the first view after the app
started), the view reads it waiting at most :data:`VIEW_IDENTITY_TIMEOUT_S` per replica, not a run's 10 s, so a
host that accepts connections and never answers costs the first view 2 s, once. A server that came back is seen at
the next run (or ``models test``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from backend.inference.revision import model_revision, served_identity
from backend.inference.store import settings_hash

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.benchmarks import BenchmarkSpec
    from backend.inference.overrides import Overrides
    from backend.inference.registry import ModelSpec
    from backend.inference.request import GenerationParams
    from backend.storage import Database

VIEW_IDENTITY_TIMEOUT_S = 2.0  # a view's wait for the server's identity when nothing has read it yet
UNREACHABLE = "served:unreachable@"  # in the revision of a served model whose server did not answer
FINISHED = ("finished", "finished with errors")  # a failed run (no successful item) is never fallen back to


@dataclass(frozen=True)
class LastRun:
    """The finished run a reader falls back to while the model's server is unreachable."""

    run_id: int
    settings_hash: str
    revision: str
    finished_at: str | None


@dataclass(frozen=True)
class ReadKey:
    """The settings hash a view reads ``model``'s answers to ``benchmark`` under, and why.

    ``unreachable``: the server's error when the backend's identity says it did not answer (else None);
    ``last_run``: the run whose results are shown then (None when no finished run matches the settings now).
    """

    model: str
    benchmark: str
    settings_hash: str
    revision: str
    url: str = ""
    unreachable: str | None = None
    last_run: LastRun | None = None

    @property
    def note(self) -> str | None:
        """The one sentence a view shows beside the model (None when its answers are keyed as runs key them)."""
        if self.unreachable is None:
            return None
        if self.last_run is None:
            return (
                f"{self.model}'s server ({self.url}) is unreachable, and no finished run of it on {self.benchmark} "
                "matches its current settings, so it has no results to show."
            )
        return (
            f"{self.model}'s server ({self.url}) is unreachable, so these are the results of its last run "
            f"on {self.benchmark} (run {self.last_run.run_id}, revision {self.last_run.revision})."
        )


def read_key(ctx: AppContext, bench: BenchmarkSpec, spec: ModelSpec, gen: Overrides | None = None) -> ReadKey:
    """The key a view reads ``spec``'s answers to ``bench`` (under ``gen`` overrides) under: the runs' key
    (:func:`backend.inference.runner.store_key`), or, while a served model's server is unreachable, its newest
    finished run's whose settings match (module docstring)."""
    from backend.inference.prepared import effective_params

    params = effective_params(bench, spec, gen)
    served = served_identity(ctx, spec, timeout_s=VIEW_IDENTITY_TIMEOUT_S)  # cached: no probe per view
    revision = model_revision(spec, ctx.digests, served=served)
    key = ReadKey(spec.name, bench.name, settings_hash(spec, params, revision), revision)
    if served is None or not served.get("unreachable"):
        return key
    url, problem = str(served.get("base_url") or ""), str(served["unreachable"])
    last = last_matching_run(ctx.database, spec, bench.name, params)
    if last is None:
        return ReadKey(key.model, key.benchmark, key.settings_hash, revision, url, problem)
    return ReadKey(key.model, key.benchmark, last.settings_hash, last.revision, url, problem, last)


def last_matching_run(database: Database, spec: ModelSpec, benchmark: str, params: GenerationParams) -> LastRun | None:
    """The newest finished run of ``spec`` on ``benchmark`` whose settings hash, recomputed from ``spec``,
    ``params`` and the revision the run recorded (its manifest's, or a live answer's ``revision``), is the one it
    was stored under; runs while the server was unreachable, and runs that recorded no revision, are passed over."""
    rows = database.query(
        "SELECT id, settings_hash, finished_at, COALESCE(json_extract(summary, '$.manifest.model.revision'), "
        "json_extract(summary, '$.revision')) AS revision FROM eval_runs "
        f"WHERE model = ? AND benchmark = ? AND status IN ({', '.join('?' * len(FINISHED))}) ORDER BY id DESC",
        (spec.name, benchmark, *FINISHED),
    )
    tried: set[tuple[str, str]] = set()
    for row in rows:
        revision = row["revision"]
        if not isinstance(revision, str) or UNREACHABLE in revision or (row["settings_hash"], revision) in tried:
            continue
        tried.add((row["settings_hash"], revision))
        if settings_hash(spec, params, revision) == row["settings_hash"]:
            return LastRun(int(row["id"]), row["settings_hash"], revision, row["finished_at"])
    return None


def combined_note(model: str, keys: Sequence[ReadKey]) -> str | None:
    """One sentence for a model read on several benchmarks (the report's coverage table): the runs shown while
    its server is unreachable, benchmark by benchmark; None when its server is not known to be unreachable."""
    down = [k for k in keys if k.unreachable is not None]
    shown = [(k.benchmark, k.last_run) for k in down if k.last_run is not None]
    if not down:
        return None
    if not shown:
        return (
            f"{model}'s server ({down[0].url}) is unreachable, and no finished run of it matches its current "
            "settings, so it has no results to show."
        )
    if len(shown) == 1:
        return next(k.note for k in down if k.last_run is not None)
    runs = "; ".join(f"{bench}: run {run.run_id}, revision {run.revision}" for bench, run in shown)
    return f"{model}'s server ({down[0].url}) is unreachable, so these are the results of its last runs ({runs})."
