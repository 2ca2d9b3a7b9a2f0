"""The model registry: which models exist, how to build them, and the loaded ones.

* A model is a :class:`ModelSpec` row. The registry file is ``<data_dir>/models.json``
  (``{"models": [spec, ...]}``); when it does not exist, :data:`DEFAULT_MODELS` are used. Admins edit it
  from the Models tab (:func:`backend.inference.service.save_model`) or by hand.
* A backend is a name mapped to a lazily imported class or factory (``"module:attr"``);
  ``factory(spec) -> Backend``. :data:`BACKENDS` are the built-in ones; an app's :class:`ModelRegistry`
  (``AppContext.models``) adds more with :meth:`ModelRegistry.register_backend`.
* In-process models (baselines that need no file entry, e.g. ``nsplan-lite``) are added with
  :meth:`ModelRegistry.register_model`; they are listed beside the file's models and cannot be edited.
  Modules that provide such models define ``provide_models(registry, settings)`` and are named in
  :data:`PROVIDER_MODULES` (append one line); the registry calls them on first use.
* :func:`get_model` returns a loaded backend, cached in the app's :class:`ModelPool` (``AppContext.pool``:
  weights load once, on first use, and :meth:`ModelPool.unload` frees them). Unknown names fail with the
  list of valid names.
* :meth:`ModelPool.slot` is the one model queue of the process: every model call holds a slot while it runs
  (setting ``model_concurrency``); see :mod:`backend.inference.slots`.

Importing this module imports no heavy library.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from backend.errors import NotFound, ValidationError
from backend.inference.backends.transport_options import TRANSPORT_OPTIONS
from backend.inference.embeddings import EmbeddingModels
from backend.inference.slots import FairSlots
from backend.settings import Settings

if TYPE_CHECKING:
    from backend.context import AppContext

BackendFactory = Callable[["ModelSpec"], Any]

#: Built-in backends: name -> "module:attr" (imported on first use) or a factory ``factory(spec) -> Backend``.
BACKENDS: Mapping[str, str | BackendFactory] = MappingProxyType(
    {
        "transformers": "backend.inference.backends.hf:TransformersBackend",
        "openai": "backend.inference.backends.openai_compat:OpenAIBackend",
        "random": "backend.inference.backends.random_baseline:RandomBackend",
        # "python": ``spec.path`` is "module:factory", a callable ``factory(spec) -> Backend``.
        "python": "backend.inference.registry:_python_factory",
    }
)

#: Modules with a ``provide_models(registry, settings)`` function (in-process models and their backends).
PROVIDER_MODULES: tuple[str, ...] = ("backend.planning.evaluation",)

#: transformers options that change speed, never a greedy answer (the fingerprint leaves them out; tests prove
#: static-cache answers equal eager ones in float32): see backend/inference/backends/hf.py
SPEED_OPTIONS = frozenset({"static_cache", "compile", "max_batch_size", "device_map"})

PROMPT_STYLES = ("chat", "plain")
SCORING = ("generate", "likelihood")


def _digest(fields: dict[str, Any]) -> str:
    """16 hex digits of SHA-256 over ``fields`` as sorted JSON (ModelSpec's fingerprint and load key)."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ModelSpec:
    """One registered model.

    ``path``: a local folder or Hub id (transformers), the served model name (openai), or
    ``module:factory`` (python). ``options`` holds backend-specific settings: for ``openai``
    ``base_url`` (one URL or a list of replicas), ``api_key_env``, ``native_video`` and the transport's
    (:data:`~backend.inference.backends.transport.TRANSPORT_OPTIONS`: retries, timeouts, adaptive concurrency;
    they never change an answer, so the fingerprint leaves them out); for ``transformers`` ``model_class``
    (``"image-text-to-text"`` or ``"causal-lm"``) and ``native_video`` (bool); for ``random`` ``seed``.
    ``prompt_style``: ``chat`` (the model's chat template) or ``plain`` (text as is, for base models).
    ``scoring``: multiple-choice items answered by ``generate`` + parsing, or by ``likelihood`` of options.
    ``concurrency``: requests in flight at once (openai); batch runs use ``batch_size`` per call, a number or
    ``"auto"`` (the largest that fits, :mod:`backend.inference.batching`). Speed options (:data:`SPEED_OPTIONS`)
    and the batch size never change an answer: the fingerprint leaves them out.
    """

    name: str
    backend: str
    path: str = ""
    dtype: str = "auto"
    device: str = "auto"
    batch_size: int | str = 1  # or "auto"
    max_new_tokens: int = 32
    frames_per_video: int = 8
    max_image_side: int = 768
    prompt_style: str = "chat"
    scoring: str = "generate"
    concurrency: int = 1
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A hash of everything that can change an answer (not the name, batch size or concurrency:
        batched answers equal one-by-one answers)."""
        keep = {k: v for k, v in asdict(self).items() if k not in {"name", "batch_size", "concurrency", "description"}}
        keep["options"] = {
            k: v for k, v in self.options.items() if k not in TRANSPORT_OPTIONS and k not in SPEED_OPTIONS
        }
        if isinstance(keep["options"].get("base_url"), list | tuple):  # replicas: their order answers nothing
            urls = {str(url).strip().rstrip("/") for url in keep["options"]["base_url"]}
            keep["options"]["base_url"] = ",".join(sorted(url for url in urls if url))
        return _digest(keep)

    def load_key(self) -> str:
        """What :class:`ModelPool` keys a loaded backend by: every field but the name and the description. Unlike
        :meth:`fingerprint` it includes the batch size, the concurrency and the transport options, from which a
        backend is built, so an edit of any of them (the Models tab, the registry file) takes effect on the next
        call instead of after a restart.

        >>> spec = ModelSpec("m", "openai", "x", options={"base_url": "http://h/v1", "timeout_s": 60})
        >>> edited = ModelSpec("m", "openai", "x", options={"base_url": "http://h/v1", "timeout_s": 5})
        >>> spec.fingerprint() == edited.fingerprint(), spec.load_key() == edited.load_key()
        (True, False)
        """
        return _digest({k: v for k, v in asdict(self).items() if k not in {"name", "description"}})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "random", "random", description="Seeded random baseline: a uniformly random option.", options={"seed": 0}
    ),
    ModelSpec(
        "qwen2-vl-2b",
        "transformers",
        "Qwen/Qwen2-VL-2B-Instruct",
        dtype="bfloat16",
        batch_size=8,
        description="Qwen2-VL 2B instruct (native video input).",
        options={"native_video": True},
    ),
    ModelSpec(
        "llava-1.5-7b",
        "transformers",
        "llava-hf/llava-1.5-7b-hf",
        dtype="bfloat16",
        batch_size=8,
        frames_per_video=4,
        description="LLaVA 1.5 7B (video as frames).",
    ),
    ModelSpec(
        "smollm2-360m",
        "transformers",
        "HuggingFaceTB/SmolLM2-360M",
        prompt_style="plain",
        max_new_tokens=64,
        description="Text-only base LM for the in-context tab.",
        options={"model_class": "causal-lm"},
    ),
    ModelSpec(
        "vllm-local",
        "openai",
        "Qwen/Qwen2-VL-7B-Instruct",
        concurrency=8,
        description="Any OpenAI-compatible server (vLLM, TGI, SGLang).",
        options={
            "base_url": "http://127.0.0.1:8000/v1",
            "api_key_env": "OPENAI_API_KEY",
            "timeout_s": 60,
            "retries": 3,
        },
    ),
)


def registry_path(settings: Settings) -> Path:
    return Path(settings.data_dir) / "models.json"


def _count_problems(name: str, value: Any) -> list[str]:
    """What is wrong with a count setting (a whole number >= 1; ``batch_size`` may also be ``auto``)."""
    if name == "batch_size" and isinstance(value, str) and value.strip().lower() == "auto":
        return []
    try:
        return [f"{name} must be at least 1"] if int(value) < 1 else []
    except (TypeError, ValueError):
        return [f"{name} must be a whole number" + (" or auto" if name == "batch_size" else "")]


def check_spec(spec: ModelSpec, backends: Collection[str] = BACKENDS) -> None:
    """Raise ``ValidationError`` listing every problem with a spec (``backends``: the valid backend names)."""
    problems = []
    if not spec.name or not spec.name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        problems.append(f"model name {spec.name!r}: use letters, digits, '-', '_' or '.'")
    if spec.backend not in backends:
        problems.append(f"unknown backend {spec.backend!r}; valid backends: {', '.join(sorted(backends))}")
    if spec.backend in {"transformers", "openai", "python"} and not spec.path:
        problems.append(f"backend {spec.backend} needs a path (model folder, Hub id, served name or module:factory)")
    if spec.prompt_style not in PROMPT_STYLES:
        problems.append(f"prompt_style must be one of {', '.join(PROMPT_STYLES)}")
    if spec.scoring not in SCORING:
        problems.append(f"scoring must be one of {', '.join(SCORING)}")
    for name in ("batch_size", "max_new_tokens", "frames_per_video", "max_image_side", "concurrency"):
        problems += _count_problems(name, getattr(spec, name))
    if problems:
        raise ValidationError(problems)


def spec_from_dict(data: dict[str, Any], backends: Collection[str] = BACKENDS) -> ModelSpec:
    """A spec from a JSON object; unknown keys are an error (they are usually typos)."""
    known = {f.name for f in fields(ModelSpec)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValidationError(f"unknown model field(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    try:
        spec = ModelSpec(**data)
    except TypeError as exc:
        raise ValidationError(f"model entry is missing a field: {exc}") from exc
    check_spec(spec, backends)
    return spec


CPU_FRIENDLY = frozenset({"smollm2-360m"})


def default_models(env: Mapping[str, str] | None = None) -> tuple[ModelSpec, ...]:
    """The defaults for the hardware found. On a CPU-only Hugging Face Space only what runs there:
    the baselines, small models (``CPU_FRIENDLY``) and OpenAI-compatible endpoints whose API key is
    configured (a Space secret). Elsewhere, all of ``DEFAULT_MODELS``.

    >>> [m.name for m in default_models({"SPACE_ID": "me/cs"})]
    ['random', 'smollm2-360m']
    >>> [m.name for m in default_models({"SPACE_ID": "me/cs", "OPENAI_API_KEY": "sk-..."})][-1]
    'vllm-local'
    >>> len(default_models({})) == len(DEFAULT_MODELS)
    True
    """
    from backend.inference.hardware import hardware

    env = os.environ if env is None else env
    if not env.get("SPACE_ID") or hardware(env, cuda_available=Path("/dev/nvidia0").exists()) != "cpu":
        return DEFAULT_MODELS
    keep = []
    for spec in DEFAULT_MODELS:
        if spec.backend == "transformers" and spec.name not in CPU_FRIENDLY:
            continue
        if spec.backend == "openai" and not env.get(str(spec.options.get("api_key_env", ""))):
            continue
        keep.append(spec)
    return tuple(keep)


def file_models(settings: Settings, backends: Collection[str] = BACKENDS) -> dict[str, ModelSpec]:
    """The models of the registry file (the defaults for this hardware when it does not exist)."""
    path = registry_path(settings)
    if not path.exists():
        return {spec.name: spec for spec in default_models()}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path}: not valid JSON ({exc}); fix or delete it to get the defaults") from exc
    specs = [spec_from_dict(row, backends) for row in data.get("models", [])]
    return {spec.name: spec for spec in specs}


def write_models(settings: Settings, specs: list[ModelSpec]) -> Path:
    """Replace the registry file atomically."""
    path = registry_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"models": [s.as_dict() for s in specs]}, indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def _resolve(target: str | BackendFactory) -> BackendFactory:
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _python_factory(spec: ModelSpec) -> Any:
    try:
        factory = _resolve(spec.path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValidationError(f"model {spec.name}: cannot import {spec.path!r} ({exc})") from exc
    return factory(spec)


def build_backend(spec: ModelSpec, backends: Mapping[str, str | BackendFactory] = BACKENDS) -> Any:
    """Construct (load) the backend of ``spec``."""
    if spec.backend not in backends:
        raise NotFound(f"unknown backend {spec.backend!r}; valid backends: {', '.join(sorted(backends))}")
    return _resolve(backends[spec.backend])(spec)


class ModelRegistry:
    """The backends and in-process models of one app (``AppContext.models``), beside the registry file.

    Provider modules (:data:`PROVIDER_MODULES`) are imported and asked for their models on first use, with
    the app's settings.
    """

    def __init__(
        self,
        settings: Settings,
        providers: Sequence[str] = PROVIDER_MODULES,
        embeddings: EmbeddingModels | None = None,
    ):
        self.settings = settings
        # the app's sentence encoders, for in-process models that embed text (nsplan-lite)
        self.embeddings = embeddings or EmbeddingModels(settings.embedding_model)
        self.backends: dict[str, str | BackendFactory] = dict(BACKENDS)
        self.builtin: dict[str, ModelSpec] = {}
        self._providers = list(providers)
        self._lock = threading.RLock()

    def _load_providers(self) -> None:
        with self._lock:
            while self._providers:
                importlib.import_module(self._providers.pop(0)).provide_models(self, self.settings)

    def register_backend(self, name: str, target: str | BackendFactory) -> None:
        """Add (or replace) a backend: ``target`` is ``"module:attr"`` or ``factory(spec) -> Backend``."""
        self.backends[name] = target

    def register_model(self, spec: ModelSpec) -> None:
        """Add an in-process model (listed with the file's models; not editable, not saved to the file)."""
        check_spec(spec, self.backends)
        self.builtin[spec.name] = spec

    def file_models(self, settings: Settings) -> dict[str, ModelSpec]:
        self._load_providers()
        return file_models(settings, self.backends)

    def list_models(self, settings: Settings) -> dict[str, ModelSpec]:
        """Every model, by name: the registry file's, then in-process ones (which win on a name clash)."""
        models = self.file_models(settings)
        models.update(self.builtin)
        return models

    def is_builtin(self, name: str) -> bool:
        self._load_providers()
        return name in self.builtin

    def get_spec(self, settings: Settings, name: str) -> ModelSpec:
        models = self.list_models(settings)
        if name not in models:
            raise NotFound(f"unknown model {name!r}; valid models: {', '.join(sorted(models))}")
        return models[name]

    def check(self, spec: ModelSpec) -> None:
        self._load_providers()
        check_spec(spec, self.backends)

    def build_backend(self, spec: ModelSpec) -> Any:
        self._load_providers()
        return build_backend(spec, self.backends)


class ModelPool:
    """Loaded backends by model name, and the one model queue of the process.

    A model loads on first use and stays until :meth:`unload`; a spec edited in the registry (a different
    :meth:`ModelSpec.load_key`: any field but the name and description, transport options included) is reloaded on
    next use.

    :meth:`slot` is the model queue (:mod:`backend.inference.slots`): every model call takes a slot, whatever page,
    script route or command it comes from, so at most ``limit`` (setting ``model_concurrency``, default 1) run at
    once and the rest wait in arrival order. Loading and unloading a model take one too (weights on the GPU).
    Lock order: a slot, then the pool's lock; a thread that holds the lock never waits for a slot.
    """

    def __init__(self, registry: ModelRegistry, limit: int | None = None) -> None:
        self.registry = registry
        self._loaded: dict[str, tuple[str, Any]] = {}
        self._lock = threading.Lock()
        # batch_size "auto": what the search found, per model and settings (backend.inference.batching)
        self.batch_sizes: dict[Any, tuple[int, int | None]] = {}
        self.slots = FairSlots(registry.settings.model_concurrency if limit is None else limit)

    def slot(
        self, *, cancel: threading.Event | None = None, timeout: float | None = None
    ) -> AbstractContextManager[None]:
        """``with pool.slot(): backend.generate(...)``: hold one place of the model queue for the block
        (:meth:`FairSlots.slot <backend.inference.slots.FairSlots.slot>`; re-entrant within a thread)."""
        return self.slots.slot(cancel=cancel, timeout=timeout)

    def get(self, spec: ModelSpec) -> Any:
        key = spec.load_key()
        with self._lock:
            current = self._loaded.get(spec.name)
            if current is not None and current[0] == key:
                return current[1]
        with self.slot(), self._lock:  # loading takes a slot: weights go where the running calls' are
            current = self._loaded.get(spec.name)
            if current is not None and current[0] == key:
                return current[1]  # another caller loaded it while this one waited
            if current is not None:
                current[1].unload()
            backend = self.registry.build_backend(spec)
            self._loaded[spec.name] = (key, backend)
            return backend

    def unload(self, name: str | None = None) -> list[str]:
        """Free one model (or all with ``None``), once the running model calls are done; returns the names
        unloaded."""
        with self.slot(), self._lock:
            names = [name] if name is not None else list(self._loaded)
            done = []
            for key in names:
                entry = self._loaded.pop(key, None)
                if entry is not None:
                    entry[1].unload()
                    done.append(key)
            return done

    def loaded(self) -> list[str]:
        with self._lock:
            return sorted(self._loaded)


def list_models(ctx: AppContext) -> dict[str, ModelSpec]:
    """Every model of the app, by name: the registry file's, then in-process ones."""
    return ctx.models.list_models(ctx.settings)


def model_names(ctx: AppContext) -> list[str]:
    """Every model's name, sorted: the one list the model pickers (planning, VQA) offer. A registry file that does
    not parse (the Models tab reports it) leaves what a missing file gives, the defaults for this hardware and the
    built-in models, so the tabs stay usable."""
    try:
        return sorted(list_models(ctx))
    except ValidationError:
        ctx.models.is_builtin("")  # loads the provider modules' built-in models
        return sorted({*(spec.name for spec in default_models()), *ctx.models.builtin})


def get_spec(ctx: AppContext, name: str) -> ModelSpec:
    """The spec of model ``name``; ``NotFound`` naming every valid model when it is unknown."""
    return ctx.models.get_spec(ctx.settings, name)


def get_model(ctx: AppContext, name: str) -> Any:
    """The loaded backend for model ``name`` (loading it on first use into ``ctx.pool``).

    Raises ``NotFound`` naming every valid model when ``name`` is unknown.
    """
    return ctx.pool.get(get_spec(ctx, name))
