"""On ZeroGPU hardware model calls run inside ``spaces.GPU``; elsewhere they are plain calls."""

from __future__ import annotations

import importlib
import sys
import types


def test_model_calls_go_through_spaces_gpu_on_zerogpu(monkeypatch):
    calls = []

    def gpu(fn=None, duration=None):
        def wrap(inner):
            def decorated(*args, **kwargs):
                calls.append(duration)
                return inner(*args, **kwargs)

            return decorated

        return wrap(fn) if fn is not None else wrap

    monkeypatch.setitem(sys.modules, "spaces", types.SimpleNamespace(GPU=gpu))
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    import backend.inference.hardware as module

    zero = importlib.reload(module)
    assert zero.run(max, 3, 9) == 9 and calls == [120]
    monkeypatch.delenv("SPACES_ZERO_GPU")
    plain = importlib.reload(module)
    assert plain.run(max, 3, 9) == 9 and calls == [120]
