"""The model registry: which models exist, how to build them, and the loaded ones.

* A model is a :class:`ModelSpec` row. The registry file is ``<data_dir>/models.json``
  (``{"models": [spec, ...]}``); when it does not exist, :data:`DEFAULT_MODELS` are used. Admins edit it
  from the Models tab (:func:`backend.inference.service.save_model`) or by hand.
* A backend is a name mapped to a lazily imported class or factory (``"module:attr"``) in
  :data:`BACKENDS`; ``factory(spec) -> Backend``. :func:`register_backend` adds one at run time.
* In-process models (baselines that need no file entry, e.g. ``nsplan-lite``) are added with
  :func:`register_model`; they are listed beside the file's models and cannot be edited. Modules that
  register such models on import are named in :data:`PROVIDER_MODULES` (append one line).
* :func:`get_model` returns a loaded backend, cached in a :class:`ModelPool` (weights load once, on
  first use, and :meth:`ModelPool.unload` frees them). Unknown names fail with the list of valid names.

Importing this module imports no heavy library.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from backend.errors import NotFound, ValidationError
from backend.settings import Settings

BackendFactory = Callable[["ModelSpec"], Any]

#: backend name -> "module:attr" (imported on first use) or a factory ``factory(spec) -> Backend``.
BACKENDS: dict[str, str | BackendFactory] = {
    "transformers": "backend.inference.backends.hf:TransformersBackend",
    "openai": "backend.inference.backends.openai_compat:OpenAIBackend",
    "random": "backend.inference.backends.random_baseline:RandomBackend",
    # "python": ``spec.path`` is "module:factory", a callable ``factory(spec) -> Backend``.
    "python": "backend.inference.registry:_python_factory",
}

#: Modules that call :func:`register_model` / :func:`register_backend` when imported (in-process models).
PROVIDER_MODULES: list[str] = ["backend.planning.evaluation"]

PROMPT_STYLES = ("chat", "plain")
SCORING = ("generate", "likelihood")


@dataclass(frozen=True)
class ModelSpec:
    """One registered model.

    ``path``: a local folder or Hub id (transformers), the served model name (openai), or
    ``module:factory`` (python). ``options`` holds backend-specific settings: for ``openai``
    ``base_url``, ``api_key_env``, ``timeout_s``, ``retries``; for ``transformers`` ``model_class``
    (``"image-text-to-text"`` or ``"causal-lm"``) and ``native_video`` (bool); for ``random`` ``seed``.
    ``prompt_style``: ``chat`` (the model's chat template) or ``plain`` (text as is, for base models).
    ``scoring``: multiple-choice items answered by ``generate`` + parsing, or by ``likelihood`` of options.
    ``concurrency``: requests in flight at once (openai); batch runs use ``batch_size`` per call.
    """

    name: str
    backend: str
    path: str = ""
    dtype: str = "auto"
    device: str = "auto"
    batch_size: int = 1
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
        keep["options"] = {k: v for k, v in self.options.items() if k not in {"api_key_env", "timeout_s", "retries"}}
        return hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode()).hexdigest()[:16]

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

_EXTRA_MODELS: dict[str, ModelSpec] = {}


def register_backend(name: str, target: str | BackendFactory) -> None:
    """Add (or replace) a backend: ``target`` is ``"module:attr"`` or ``factory(spec) -> Backend``."""
    BACKENDS[name] = target


def register_model(spec: ModelSpec) -> None:
    """Add an in-process model (listed with the file's models; not editable, not saved to the file)."""
    check_spec(spec)
    _EXTRA_MODELS[spec.name] = spec


def _load_providers() -> None:
    for module in PROVIDER_MODULES:
        importlib.import_module(module)


def registry_path(settings: Settings) -> Path:
    return Path(settings.data_dir) / "models.json"


def check_spec(spec: ModelSpec) -> None:
    """Raise ``ValidationError`` listing every problem with a spec."""
    problems = []
    if not spec.name or not spec.name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        problems.append(f"model name {spec.name!r}: use letters, digits, '-', '_' or '.'")
    if spec.backend not in BACKENDS:
        problems.append(f"unknown backend {spec.backend!r}; valid backends: {', '.join(sorted(BACKENDS))}")
    if spec.backend in {"transformers", "openai", "python"} and not spec.path:
        problems.append(f"backend {spec.backend} needs a path (model folder, Hub id, served name or module:factory)")
    if spec.prompt_style not in PROMPT_STYLES:
        problems.append(f"prompt_style must be one of {', '.join(PROMPT_STYLES)}")
    if spec.scoring not in SCORING:
        problems.append(f"scoring must be one of {', '.join(SCORING)}")
    for name in ("batch_size", "max_new_tokens", "frames_per_video", "max_image_side", "concurrency"):
        if int(getattr(spec, name)) < 1:
            problems.append(f"{name} must be at least 1")
    if problems:
        raise ValidationError(problems)


def spec_from_dict(data: dict[str, Any]) -> ModelSpec:
    """A spec from a JSON object; unknown keys are an error (they are usually typos)."""
    known = {f.name for f in fields(ModelSpec)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValidationError(f"unknown model field(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    try:
        spec = ModelSpec(**data)
    except TypeError as exc:
        raise ValidationError(f"model entry is missing a field: {exc}") from exc
    check_spec(spec)
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
    from backend.spaces import hardware

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


def file_models(settings: Settings) -> dict[str, ModelSpec]:
    """The models of the registry file (the defaults for this hardware when it does not exist)."""
    path = registry_path(settings)
    if not path.exists():
        return {spec.name: spec for spec in default_models()}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{path}: not valid JSON ({exc}); fix or delete it to get the defaults") from exc
    specs = [spec_from_dict(row) for row in data.get("models", [])]
    return {spec.name: spec for spec in specs}


def write_models(settings: Settings, specs: list[ModelSpec]) -> Path:
    """Replace the registry file atomically."""
    path = registry_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"models": [s.as_dict() for s in specs]}, indent=2), encoding="utf-8")
    tmp.replace(path)
    return path


def list_models(settings: Settings) -> dict[str, ModelSpec]:
    """Every model, by name: the registry file's, then in-process ones (which win on a name clash)."""
    _load_providers()
    models = file_models(settings)
    models.update(_EXTRA_MODELS)
    return models


def model_names(settings: Settings) -> list[str]:
    """Every model's name, sorted: the one list the model pickers (planning, VQA) offer. A registry file that does
    not parse (the Models tab reports it) leaves what a missing file gives, the defaults for this hardware and the
    built-in models, so the tabs stay usable."""
    try:
        return sorted(list_models(settings))
    except ValidationError:
        _load_providers()
        return sorted({*(spec.name for spec in default_models()), *_EXTRA_MODELS})


def is_builtin(name: str) -> bool:
    _load_providers()
    return name in _EXTRA_MODELS


def get_spec(settings: Settings, name: str) -> ModelSpec:
    models = list_models(settings)
    if name not in models:
        raise NotFound(f"unknown model {name!r}; valid models: {', '.join(sorted(models))}")
    return models[name]


def _resolve(target: str | BackendFactory) -> BackendFactory:
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _python_factory(spec: ModelSpec):
    try:
        factory = _resolve(spec.path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValidationError(f"model {spec.name}: cannot import {spec.path!r} ({exc})") from exc
    return factory(spec)


def build_backend(spec: ModelSpec):
    """Construct (load) the backend of ``spec``."""
    if spec.backend not in BACKENDS:
        raise NotFound(f"unknown backend {spec.backend!r}; valid backends: {', '.join(sorted(BACKENDS))}")
    return _resolve(BACKENDS[spec.backend])(spec)


class ModelPool:
    """Loaded backends by model name. A model loads on first use and stays until :meth:`unload`.

    A spec edited in the registry (different fingerprint) is reloaded on next use.
    """

    def __init__(self) -> None:
        self._loaded: dict[str, tuple[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, spec: ModelSpec):
        with self._lock:
            current = self._loaded.get(spec.name)
            if current is not None and current[0] == spec.fingerprint() + str(spec.batch_size):
                return current[1]
            if current is not None:
                current[1].unload()
            backend = build_backend(spec)
            self._loaded[spec.name] = (spec.fingerprint() + str(spec.batch_size), backend)
            return backend

    def unload(self, name: str | None = None) -> list[str]:
        """Free one model (or all with ``None``); returns the names unloaded."""
        with self._lock:
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


#: The process's loaded models when the caller's context carries no pool of its own.
PROCESS_POOL = ModelPool()


def _settings_of(ctx_or_settings: Any) -> Settings:
    return ctx_or_settings if isinstance(ctx_or_settings, Settings) else ctx_or_settings.settings


def pool_of(ctx_or_settings: Any) -> ModelPool:
    """``ctx.models`` when the AppContext carries a pool, else the process-wide one."""
    pool = getattr(ctx_or_settings, "models", None)
    return pool if isinstance(pool, ModelPool) else PROCESS_POOL


def get_model(ctx_or_settings: Any, name: str):
    """The loaded backend for model ``name`` (loading it on first use).

    Raises ``NotFound`` naming every valid model when ``name`` is unknown.
    """
    spec = get_spec(_settings_of(ctx_or_settings), name)
    return pool_of(ctx_or_settings).get(spec)
