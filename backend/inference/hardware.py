"""Which hardware model calls run on, and where they run on a ZeroGPU Space.

:func:`hardware` says ``cpu``, ``gpu`` or ``zerogpu`` for the model registry. On ZeroGPU hardware CUDA is
usable only inside a function decorated with ``spaces.GPU``, and the decorated functions should exist before
the app launches; app.py imports this module at start-up. Elsewhere :func:`run` just calls the function.
``torch`` and ``spaces`` are imported inside functions only.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from typing import Any


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


@functools.cache
def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def hardware(env: Mapping[str, str] | None = None, *, cuda_available: bool | None = None) -> str:
    """``"zerogpu"`` on ZeroGPU Spaces (``SPACES_ZERO_GPU=true``, as Gradio checks it), ``"gpu"`` when
    torch sees CUDA, else ``"cpu"``. The model registry offers only CPU-friendly models on ``"cpu"``.

    >>> hardware({"SPACES_ZERO_GPU": "true"})
    'zerogpu'
    >>> hardware({}, cuda_available=False)
    'cpu'
    """
    if _env(env).get("SPACES_ZERO_GPU", "").lower() == "true":
        return "zerogpu"
    if cuda_available is None:
        cuda_available = _cuda_available()
    return "gpu" if cuda_available else "cpu"


def zero_gpu(
    fn: Callable[..., Any], *, duration: int | None = None, env: Mapping[str, str] | None = None
) -> Callable[..., Any]:
    """``fn`` wrapped in ``spaces.GPU`` on ZeroGPU hardware (CUDA is only usable inside it there), else ``fn``.

    Wrap model calls when the registry is built, before ``launch``: ZeroGPU looks for decorated functions
    at start-up. The ``spaces`` package is preinstalled on ZeroGPU Spaces.
    """
    if hardware(env, cuda_available=False) != "zerogpu":
        return fn
    import spaces

    return spaces.GPU(duration=duration)(fn) if duration else spaces.GPU(fn)


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


_run = zero_gpu(_call, duration=120)


def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, inside ``spaces.GPU`` on ZeroGPU hardware.

    >>> run(sum, [1, 2, 3])
    6
    """
    return _run(fn, *args, **kwargs)
