"""Which weights a model answers with: its revision, bound in the prediction key and named in manifests.

In order:

1. an OpenAI-compatible server (``openai``): what the server says it serves (:func:`served_revision`: its
   ``/v1/models`` entry's ``root`` and ``max_model_len``, its ``/version``, and the ``base_url``), after
   ``options["revision"]`` when one is pinned; a server that says nothing identifying gets
   ``served:unknown@<base_url>`` and the warning :data:`UNKNOWN_WARNING` (run and manifest);
2. ``options["revision"]`` when the registry pins one (any other backend but transformers);
3. a folder inside a Hugging Face cache snapshot (``.../snapshots/<40-hex commit>/``): ``hub:<commit>``;
4. any other local folder: ``local:<digest of its files>`` (:meth:`FileDigests.folder_digest`), so weights
   fine-tuned in place compute anew;
5. a Hub id (transformers): the commit its cached ``refs/main`` (or the pinned ``options["revision"]``
   branch) points to, ``hub:<commit>``; ``hub:<id>@main:unresolved`` while the model is not cached yet
   (:func:`backend.inference.runner.run_eval` then loads, i.e. downloads, the model before keying the run,
   so answers are stored under the commit);
6. otherwise ``""`` (random and in-process baselines: their code is the model).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.inference.digests import FileDigests
from backend.inference.registry import ModelSpec

if TYPE_CHECKING:
    from backend.context import AppContext

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
UNRESOLVED = ":unresolved"  # the end of a Hub model's revision before it is in the local cache
UNKNOWN_WARNING = "revision unknown: pin options.revision"  # a served model whose server names nothing
#: a server someone else started: its /v1/models names a folder, not what the folder holds (weights copied into
#: it keep the same root), so nothing says the weights are the ones stored answers came from. ``compstudio serve``
#: pins a digest of the weights (backend.inference.serving), which silences it.
UNVERIFIABLE_WARNING = "weights not verifiable: pin options.revision"
SERVED_BACKENDS = ("openai",)


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


def served_revision(pinned: str, served: dict[str, Any]) -> str:
    """A served model's revision: the pinned one (if any), then what the server said it serves.

    >>> served_revision("", {"base_url": "http://h/v1", "root": "/w/a", "max_model_len": 4096, "server_version": "0.32"})
    'served:/w/a|len=4096|server=0.32|url=http://h/v1'
    >>> served_revision("", {"base_url": "http://h/v1", "root": None, "max_model_len": None, "server_version": None})
    'served:unknown@http://h/v1'
    >>> served_revision("v2", {"base_url": "http://h/v1", "unreachable": "ConnectError"})
    'v2|served:unreachable@http://h/v1'
    """
    url = served.get("base_url") or ""
    if served.get("unreachable"):
        found = f"served:unreachable@{url}"
    elif not identifies(served):
        found = f"served:unknown@{url}"
    else:
        fields = [str(served["root"] or "?"), f"len={served.get('max_model_len')}"]
        fields += [f"server={served.get('server_version')}", f"url={url}"]
        found = "served:" + "|".join(fields)
    return f"{pinned}|{found}" if pinned else found


def identifies(served: dict[str, Any]) -> bool:
    """Whether a server's answer names its weights (a ``root`` or a ``/version``)."""
    return bool(served.get("root") or served.get("server_version"))


def served_identity(
    ctx: AppContext, spec: ModelSpec, refresh: bool = False, timeout_s: float | None = None
) -> dict[str, Any] | None:
    """What the server of a served model says it serves (read at the backend's first call; again with
    ``refresh``, as every run does; ``timeout_s``: the wait for a reply when it is read now); None for models
    that are not served."""
    if spec.backend not in SERVED_BACKENDS:
        return None
    identity = getattr(ctx.pool.get(spec), "identity", None)
    return identity(refresh=refresh, timeout_s=timeout_s) if identity is not None else None


def revision_warnings(spec: ModelSpec, served: dict[str, Any] | None) -> list[str]:
    """What a run and its manifest must say about the revision, for a served model with no ``options.revision``:
    :data:`UNKNOWN_WARNING` when its server names nothing identifying, else :data:`UNVERIFIABLE_WARNING`; that the
    server was unreachable."""
    if served is None:
        return []
    if served.get("unreachable"):
        return [f"model server unreachable when the run started ({served['unreachable']})"]
    if spec.options.get("revision"):
        return []
    return [UNKNOWN_WARNING] if not identifies(served) else [UNVERIFIABLE_WARNING]


def current_revision(ctx: AppContext, spec: ModelSpec, refresh: bool = False) -> str:
    """:func:`model_revision` with the server's identity for served models (``refresh``: ask the server anew)."""
    return model_revision(spec, ctx.digests, served=served_identity(ctx, spec, refresh))


def model_revision(
    spec: ModelSpec, digests: FileDigests, cache_dir: Path | None = None, served: dict[str, Any] | None = None
) -> str:
    """The revision of ``spec``'s weights (see the module docstring for the order of the rules); ``served``:
    the server's identity (:func:`served_identity`) for a served model."""
    pinned = str(spec.options.get("revision") or "")
    if served is not None:
        return served_revision(pinned, served)
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
    if spec.backend == "transformers" and model_revision(spec, ctx.digests).endswith(UNRESOLVED):
        ctx.pool.get(spec)
