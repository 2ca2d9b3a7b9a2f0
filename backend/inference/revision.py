"""Which weights a model answers with: its revision, bound in the prediction key and named in manifests.

In order:

1. ``options["revision"]`` when the registry pins one (any backend; for an OpenAI-compatible server this is
   the only way to say which weights it serves);
2. a folder inside a Hugging Face cache snapshot (``.../snapshots/<40-hex commit>/``): ``hub:<commit>``;
3. any other local folder: ``local:<digest of its files>`` (:meth:`FileDigests.folder_digest`), so weights
   fine-tuned in place compute anew;
4. a Hub id (transformers): the commit its cached ``refs/main`` (or the pinned ``options["revision"]``
   branch) points to, ``hub:<commit>``; ``hub:<id>@main:unresolved`` while the model is not cached yet
   (:func:`backend.inference.runner.run_eval` then loads, i.e. downloads, the model before keying the run,
   so answers are stored under the commit);
5. otherwise ``""`` (random and in-process baselines: their code is the model).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from backend.inference.digests import FileDigests
from backend.inference.registry import ModelSpec

if TYPE_CHECKING:
    from backend.context import AppContext

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
UNRESOLVED = ":unresolved"  # the end of a Hub model's revision before it is in the local cache


def hub_cache_dir() -> Path:
    """The Hugging Face Hub cache folder (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return Path(home) / "hub"


def snapshot_commit(folder: Path) -> str | None:
    """The commit of a folder inside a Hub cache snapshot, e.g. ``.../snapshots/<commit>/``.

    >>> snapshot_commit(Path("/c/models--org--m/snapshots/" + "a" * 40))
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    >>> snapshot_commit(Path("/models/my-finetune")) is None
    True
    """
    parts = folder.parts
    for index, part in enumerate(parts[:-1]):
        if part == "snapshots" and _COMMIT.match(parts[index + 1]):
            return parts[index + 1]
    return None


def cached_hub_commit(repo_id: str, ref: str = "main", cache_dir: Path | None = None) -> str | None:
    """The commit ``ref`` of a Hub model points to in the local cache (no network), or None."""
    if _COMMIT.match(ref):
        return ref
    folder = (cache_dir or hub_cache_dir()) / f"models--{repo_id.replace('/', '--')}"
    try:
        commit = (folder / "refs" / ref).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return commit if _COMMIT.match(commit) else None


def model_revision(spec: ModelSpec, digests: FileDigests, cache_dir: Path | None = None) -> str:
    """The revision of ``spec``'s weights (see the module docstring for the order of the rules)."""
    pinned = str(spec.options.get("revision") or "")
    if pinned and spec.backend != "transformers":
        return pinned
    if spec.path and Path(spec.path).is_dir():
        folder = Path(spec.path)
        commit = snapshot_commit(folder) or snapshot_commit(folder.resolve())
        return f"hub:{commit}" if commit else f"local:{digests.folder_digest(folder)}"
    if spec.backend == "transformers" and spec.path:
        commit = cached_hub_commit(spec.path, pinned or "main", cache_dir)
        return f"hub:{commit}" if commit else f"hub:{spec.path}@{pinned or 'main'}{UNRESOLVED}"
    return pinned


def download_if_unresolved(ctx: AppContext, spec: ModelSpec) -> None:
    """Load (download) a Hub model that is not cached yet before a run or an answer is keyed, so that its
    answers are stored under its commit rather than under the unresolved revision."""
    if model_revision(spec, ctx.digests).endswith(UNRESOLVED):
        ctx.pool.get(spec)
