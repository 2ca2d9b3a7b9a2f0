"""``compstudio serve``: an engine's OpenAI-compatible server as managed replicas, registered in the model registry.

:func:`plan` decides the replicas: one per GPU, or per group of ``tp`` GPUs (``gpus``, default every GPU
``nvidia-smi`` lists), or ``replicas`` on a machine without one; each gets its own port and log
(``<data>/serving/<name>/replica-<i>.log``). The flags the model needs come from its config
(:func:`backend.serve.engines.model_needs`). The weights' identity is fixed before start (:func:`weights_identity`:
a digest of a local folder's safetensors index and file sizes, or the Hub commit, which the engine is then told to
load with ``--revision``) and pinned as the entry's ``options.revision``, so answers stored from other weights
under the same name are never served.

:func:`start` starts every replica at once, waits until each answers its health route, writes the state file
(``<data>/serving/<name>.json``: each replica's URL, pid, process group and log) and registers the model
(:func:`register`: an ``openai`` entry whose ``base_url`` lists every replica; an existing entry of the name keeps
its other fields), so ``compstudio eval``, the Models tab and live Ask use it at once. :func:`supervise` waits
until every replica has exited or the command is stopped; :func:`stop` (Ctrl+C, SIGTERM, or ``serve --stop``
from another shell) stops each replica's process group. :func:`replica_states` is what ``serve --status`` and the
Models tab show.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import InferenceError, NotFound, ValidationError
from backend.serve import processes
from backend.serve.engines import Launch, get_engine, model_needs, read_config
from backend.storage import utcnow

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.registry import ModelSpec


@dataclass
class Replica:
    index: int
    url: str  # the /v1 URL registered in the model entry
    port: int
    log: str
    gpus: str | None = None  # CUDA_VISIBLE_DEVICES of this replica
    pid: int | None = None
    pgid: int | None = None
    argv: list[str] = field(default_factory=list)


@dataclass
class Serving:
    """What ``serve`` started for one model: the state file's content."""

    name: str
    engine: str
    weights: str
    revision: str | None  # the entry's options.revision (weights:<digest> or hub:<commit>)
    replicas: list[Replica]
    tied: bool = True  # the replicas die with the serving command
    parent_pid: int = 0
    started_at: str = ""
    needs: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Serving:
        replicas = [Replica(**r) for r in data.pop("replicas")]
        return cls(replicas=replicas, **data)


def state_dir(ctx: AppContext) -> Path:
    return Path(ctx.settings.data_dir) / "serving"


def state_path(ctx: AppContext, name: str) -> Path:
    return state_dir(ctx) / f"{name}.json"


def read_state(ctx: AppContext, name: str) -> Serving | None:
    try:
        return Serving.from_dict(json.loads(state_path(ctx, name).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_state(ctx: AppContext, serving: Serving) -> None:
    path = state_path(ctx, serving.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(serving.as_dict(), indent=2), encoding="utf-8")
    tmp.replace(path)


def weights_identity(weights: str) -> tuple[str | None, str | None]:
    """The entry's ``options.revision`` and the ``--revision`` to pass to the engine, for ``weights``.

    A local folder: ``weights:<digest>`` of its safetensors index (when there is one) and every weight file's name
    and size, read before start (new weights copied into the folder give a new digest; the engine is not told).
    A Hub id: its commit (``hub:<commit>``), from the local cache or the Hub, which the engine then loads exactly.
    Neither found: ``(None, None)`` and the run says the weights are not verifiable.
    """
    folder = Path(weights)
    if folder.is_dir():
        digest = hashlib.sha256()
        index = folder / "model.safetensors.index.json"
        if index.exists():
            digest.update(index.read_bytes())
        files = sorted([*folder.glob("*.safetensors"), *folder.glob("*.bin")])
        if not files:
            return None, None
        for file in files:
            digest.update(f"{file.name}:{file.stat().st_size}\n".encode())
        return f"weights:{digest.hexdigest()[:16]}", None
    from backend.inference.revision import cached_hub_commit

    commit = cached_hub_commit(weights)
    if commit is None:
        try:
            from huggingface_hub import HfApi

            commit = HfApi().model_info(weights).sha
        except Exception:  # offline, gated, no such repo: the engine will say which when it starts
            commit = None
    return (f"hub:{commit}", commit) if commit else (None, None)


def list_gpus() -> list[str]:
    """The GPUs ``nvidia-smi`` lists (their indices), or none."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def replica_gpus(gpus: list[str], tp: int, replicas: int | None) -> list[str | None]:
    """Each replica's GPUs: groups of ``tp`` (as many as fit, or ``replicas``); ``replicas`` (default 1) with none.

    >>> replica_gpus(["0", "1", "2", "3", "4", "5", "6", "7"], 2, None)
    ['0,1', '2,3', '4,5', '6,7']
    >>> replica_gpus([], 1, 2)
    [None, None]
    """
    if not gpus:
        return [None] * (replicas or 1)
    groups = [",".join(gpus[i : i + tp]) for i in range(0, len(gpus) - tp + 1, tp)]
    if not groups:
        raise ValidationError(f"--tp {tp} needs {tp} GPUs; this machine has {len(gpus)}")
    if replicas is not None:
        if replicas > len(groups):
            raise ValidationError(f"{replicas} replicas of --tp {tp} need {replicas * tp} GPUs; there are {len(gpus)}")
        groups = groups[:replicas]
    return list(groups)


@dataclass(frozen=True)
class Request:
    """What the person asked ``serve`` for."""

    model: str  # a registered model's name, a local folder or a Hub id
    engine: str = "vllm"
    name: str | None = None
    tp: int = 1
    replicas: int | None = None
    gpus: str | None = None  # "0,1,2,3"; default: every GPU
    port: int | None = None  # the first replica's; the others follow
    host: str = "127.0.0.1"
    max_model_len: int | None = None
    extra: tuple[str, ...] = ()
    python: str | None = None
    command: str = ""


def plan(ctx: AppContext, ask: Request) -> tuple[Serving, list[Launch], ModelSpec | None]:
    """The replicas to start for ``ask``, their launches, and the registered model served (if it is one)."""
    from backend.inference.registry import list_models

    engine = get_engine(ask.engine)
    known = list_models(ctx).get(ask.model)
    if known is not None and known.backend != "transformers":
        raise ValidationError(f"model {ask.model!r} is not a local model (backend {known.backend}); give its weights")
    weights = known.path if known is not None else ask.model
    name = ask.name or (f"{known.name}-{engine.name}" if known is not None else Path(weights.rstrip("/")).name.lower())
    if known is None and not Path(weights).is_dir() and "/" not in weights:
        raise NotFound(f"{weights!r} is neither a registered model, a folder nor a Hub id (owner/name)")
    revision, hub_commit = weights_identity(weights)
    needs = model_needs(read_config(weights), ask.max_model_len)
    gpus = [g.strip() for g in ask.gpus.split(",") if g.strip()] if ask.gpus else list_gpus()
    groups = replica_gpus(gpus, max(1, ask.tp), ask.replicas)
    folder = state_dir(ctx) / name
    replicas, launches = [], []
    for index, group in enumerate(groups):
        port = ask.port + index if ask.port else processes.free_port(ask.host)
        launch = Launch(
            weights, name, port, ask.host, ask.tp, needs, hub_commit, ask.extra, ask.python or _python(), ask.command
        )
        url = f"http://{ask.host}:{port}/v1"
        replicas.append(
            Replica(index, url, port, str(folder / f"replica-{index}.log"), group, argv=engine.argv(launch))
        )
        launches.append(launch)
    serving = Serving(name, engine.name, weights, revision, replicas, needs=asdict(needs))
    return serving, launches, known


def _python() -> str:
    import sys

    return sys.executable


def start(ctx: AppContext, serving: Serving, known: ModelSpec | None, tied: bool, timeout_s: float) -> ModelSpec:
    """Start every replica, wait until each is healthy, write the state file and register the model (see the module
    docstring). A replica that fails to start stops the others and raises, with its log's tail."""
    current = read_state(ctx, serving.name)
    if current is not None and any(processes.alive(r.pid) for r in current.replicas if r.pid):
        raise ValidationError(
            f"{serving.name} is already served; stop it first: compstudio serve --stop {serving.name}"
        )
    engine = get_engine(serving.engine)
    serving = replace(serving, tied=tied, parent_pid=os.getpid(), started_at=utcnow())
    started: list[tuple[Replica, subprocess.Popen]] = []
    try:
        for replica in serving.replicas:
            env = {**engine.env, **({"CUDA_VISIBLE_DEVICES": replica.gpus} if replica.gpus is not None else {})}
            process = processes.spawn(replica.argv, Path(replica.log), env, tied=tied)
            replica.pid = replica.pgid = process.pid
            started.append((replica, process))
        write_state(ctx, serving)  # before the wait: `serve --stop` from another shell finds them while they load
        for replica, process in started:
            root = replica.url.removesuffix("/v1")
            processes.wait_healthy(process, root + engine.health_path, Path(replica.log), timeout_s)
    except BaseException:
        for replica, _ in started:
            processes.stop_group(replica.pgid or 0, grace_s=5)
        state_path(ctx, serving.name).unlink(missing_ok=True)
        raise
    return register(ctx, serving, known)


def register(ctx: AppContext, serving: Serving, known: ModelSpec | None = None) -> ModelSpec:
    """Register (or update) the served model: an ``openai`` entry with every replica's URL and the weights' revision;
    an existing ``openai`` entry of the name keeps its other fields; a served registered model keeps its prompt and
    media settings."""
    from backend.inference.registry import ModelSpec, list_models
    from backend.inference.service import store_model

    urls = [r.url for r in serving.replicas]
    base_url: str | list[str] = urls[0] if len(urls) == 1 else urls
    existing = list_models(ctx).get(serving.name)
    options: dict[str, Any] = dict(existing.options) if existing is not None and existing.backend == "openai" else {}
    options["base_url"] = base_url
    if serving.revision:
        options["revision"] = serving.revision
    else:
        options.pop("revision", None)
    if serving.needs.get("video"):
        options["native_video"] = True
    description = f"served by compstudio serve ({serving.engine}, {len(urls)} replica{'s' * (len(urls) != 1)})"
    if existing is not None and existing.backend == "openai":
        spec = replace(existing, path=serving.name, options=options)
    else:
        base = known or ModelSpec(serving.name, "openai")
        spec = ModelSpec(
            serving.name,
            "openai",
            serving.name,
            max_new_tokens=base.max_new_tokens,
            frames_per_video=base.frames_per_video,
            max_image_side=base.max_image_side,
            prompt_style=base.prompt_style,
            scoring=base.scoring,
            concurrency=8 * len(urls),
            description=description,
            options=options,
        )
    return store_model(ctx, "cli", spec, replace=True)


def replica_states(ctx: AppContext, name: str | None = None) -> list[dict[str, Any]]:
    """Each managed replica (of ``name``, or of every served model) and its state: ``ready`` (its health route
    answers), ``not answering`` (running, no answer: loading, or stuck), ``exited`` (its process is gone)."""
    names = [name] if name else sorted(p.stem for p in state_dir(ctx).glob("*.json"))
    rows = []
    for model in names:
        serving = read_state(ctx, model)
        if serving is None:
            if name:
                raise NotFound(f"{name} is not served by compstudio serve (no {state_path(ctx, name)})")
            continue
        health = get_engine(serving.engine).health_path
        for r in serving.replicas:
            running = bool(r.pid) and processes.alive(r.pid or 0)
            ready = running and processes.healthy(r.url.removesuffix("/v1") + health, timeout_s=1.0)
            state = "ready" if ready else ("not answering" if running else "exited")
            rows.append(
                {
                    "model": model,
                    "engine": serving.engine,
                    "replica": r.index,
                    "url": r.url,
                    "state": state,
                    "gpus": r.gpus,
                    "pid": r.pid,
                    "log": r.log,
                }
            )
    return rows


def stop(ctx: AppContext, name: str, grace_s: float = 15.0) -> dict[str, Any]:
    """Stop every replica of ``name`` (their whole process groups) and remove the state file; the registry entry
    stays (its runs stay readable; ``serve`` again updates it)."""
    serving = read_state(ctx, name)
    if serving is None:
        raise NotFound(f"{name} is not served by compstudio serve (no {state_path(ctx, name)})")
    ended = {r.url: processes.stop_group(r.pgid, grace_s) if r.pgid else "never started" for r in serving.replicas}
    state_path(ctx, name).unlink(missing_ok=True)
    return {"stopped": name, "replicas": ended}


def supervise(ctx: AppContext, name: str, ready: Callable[[], None] | None = None, poll_s: float = 1.0) -> dict:
    """Say ``ready`` (once Ctrl+C and SIGTERM are caught), then wait while the replicas of ``name`` run; on Ctrl+C
    or SIGTERM stop them. Returns how it ended."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if ready is not None:
            ready()
        while True:
            serving = read_state(ctx, name)
            if serving is None:
                return {"stopped": name, "by": "serve --stop"}
            if not any(processes.alive(r.pid) for r in serving.replicas if r.pid):
                state_path(ctx, name).unlink(missing_ok=True)
                logs = ", ".join(r.log for r in serving.replicas)
                raise InferenceError(f"every replica of {name} exited; logs: {logs}")
            time.sleep(poll_s)
    except KeyboardInterrupt:
        return {**stop(ctx, name), "by": "interrupt"}
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


REPLICA_COLUMNS = ("model", "engine", "replica", "url", "state", "gpus")


def replicas_view(ctx: AppContext, username: str | None) -> list[dict[str, Any]]:
    """The Models tab's read-only list of served models' replicas and their states (reviewers and admins): what
    ``serve --status`` says, without process ids and log paths."""
    from backend.accounts.auth import require_role

    require_role(ctx.database, username, "reviewer")
    return [{k: row[k] for k in REPLICA_COLUMNS} for row in replica_states(ctx)]
