"""Where model calls run on a ZeroGPU Space.

On ZeroGPU hardware CUDA is usable only inside a function decorated with ``spaces.GPU``, and the decorated
functions should exist before the app launches; app.py imports this module at start-up. Elsewhere
:func:`run` just calls the function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backend.spaces import zero_gpu


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


_run = zero_gpu(_call, duration=120)


def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, inside ``spaces.GPU`` on ZeroGPU hardware.

    >>> run(sum, [1, 2, 3])
    6
    """
    return _run(fn, *args, **kwargs)
