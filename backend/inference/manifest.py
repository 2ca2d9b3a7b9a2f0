"""The run manifest: one JSON object naming everything that decided a run's numbers.

It names the model and its revision, the backend, the generation settings, the prompt template (by name
and hash), how answers were scored
(``model.scoring_method``), what a served model's server said it serves (``model.served``), warnings about the
revision (``warnings``), the frame sampling and image size limit, the data set (benchmark, load options, item count and
a content hash), the prediction key (version and settings hash), the CompStudio version, the git commit when
the code runs from a checkout, and the time. Every export of results carries it: ``eval --out DIR``
writes ``manifest.json``; ``export predictions`` writes ``<file>.manifest.json``; each batch run stores
it in its summary (``eval_runs.summary["manifest"]``).

:func:`run_manifest` is the one entry point (also for reports of other packages).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.inference.benchmarks import BenchmarkSpec, get_benchmark
from backend.inference.registry import ModelSpec, get_spec
from backend.inference.request import VIDEO_DECODER
from backend.inference.revision import model_revision, revision_warnings, served_identity
from backend.inference.store import KEY_VERSION, settings_hash
from backend.storage import utcnow

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.prepared import Prepared

MANIFEST_VERSION = 1


def compstudio_version() -> str:
    try:
        return metadata.version("compstudio")
    except metadata.PackageNotFoundError:
        return "unknown"


def git_commit(folder: Path | None = None) -> str | None:
    """The commit of the checkout the code runs from (``+dirty`` with uncommitted changes), or None."""
    where = folder or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def template_hash(bench: BenchmarkSpec) -> str:
    """A hash of the benchmark's prompt template (the code of its ``build_request``)."""
    try:
        source = inspect.getsource(bench.build_request)
    except (OSError, TypeError):
        source = repr(bench.build_request)
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def content_hash(prepared: Sequence[Prepared]) -> str:
    """A hash of the items as the model sees them (ids and prompt hashes: question, options, media bytes)."""
    lines = sorted(f"{p.item.item_id}:{p.prompt_hash}" for p in prepared)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _frame_sampling(spec: ModelSpec, prepared: Sequence[Prepared]) -> dict[str, Any]:
    """How video became frames: the backend's own sampling of video files, and any sampling done before the
    request was built (e.g. planning's frames of the observed window), windows left per item."""
    before = {
        json.dumps({k: v for k, v in part["sampling"].items() if k != "window"}, sort_keys=True, default=str)
        for p in prepared
        for part in p.request
        if part["type"] == "video" and part.get("sampling")
    }
    return {
        "frames_per_video": spec.frames_per_video,
        "decoder": VIDEO_DECODER,
        "window": "per item: each video part's start and end, bound in its prompt hash",
        "sampled_before_request": [json.loads(s) for s in sorted(before)],
    }


def scoring_method(spec: ModelSpec) -> str:
    """How the model's answers were obtained: generated and parsed, or (``scoring: likelihood``) how each
    backend scores option texts."""
    if spec.scoring != "likelihood":
        return "generated text, parsed (choice letters or free text)"
    if spec.backend == "openai":
        from backend.inference.backends.openai_compat import scoring_method as served

        return served(spec)
    if spec.backend == "transformers":
        return "option text log-probability from a forward pass over the prompt and the option's tokens"
    return f"option scores from the {spec.backend} backend's score_options"


def run_manifest(
    ctx: AppContext,
    benchmark: str,
    model: str,
    *,
    load_options: dict[str, Any] | None = None,
    prepared: Sequence[Prepared] | None = None,
    warnings: Sequence[str] | None = None,
    gen: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest of ``model`` on ``benchmark`` (items loaded with ``load_options``; pass ``prepared``
    when the items are at hand, else they are loaded and prepared here), under ``gen`` overrides."""
    from backend.inference.prepared import effective_params, prepare

    bench, spec = get_benchmark(ctx, benchmark), get_spec(ctx, model)
    if prepared is None:
        prepared = prepare(bench, bench.load_items(ctx, **(load_options or {})), ctx.digests)
    params = effective_params(bench, spec, gen)
    served = served_identity(ctx, spec)
    revision = model_revision(spec, ctx.digests, served=served)
    model_warnings = list(warnings) if warnings is not None else revision_warnings(spec, served)
    overrides = {"generation_overrides": dict(gen)} if gen else {}
    return {
        "manifest_version": MANIFEST_VERSION,
        "created_at": utcnow(),
        "compstudio": {"version": compstudio_version(), "git_commit": git_commit()},
        "model": {
            "name": spec.name,
            "backend": spec.backend,
            "source": spec.path,  # Hub id or local folder (not "path": gradio_client reads a dict with "path" as a file)
            "revision": revision,
            "dtype": spec.dtype,
            "scoring": spec.scoring,
            "scoring_method": scoring_method(spec),
            "fingerprint": spec.fingerprint(),
            **({"served": served} if served is not None else {}),
        },
        "warnings": model_warnings,
        "generation": params.as_dict(),
        **overrides,
        "prompt": {
            "style": spec.prompt_style,
            "template": getattr(bench.build_request, "__qualname__", repr(bench.build_request)),
            "template_hash": template_hash(bench),
        },
        "frame_sampling": _frame_sampling(spec, prepared),
        "image_size_limit": spec.max_image_side,
        "dataset": {
            "benchmark": bench.name,
            "load_options": load_options or {},
            "items": len(prepared),
            "content_hash": content_hash(prepared),
        },
        "key": {"version": KEY_VERSION, "settings_hash": settings_hash(spec, params, revision)},
    }
