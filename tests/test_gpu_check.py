"""benchmarks/gpu_check.py --source random at small dimensions: each family's architecture built from the project's
config with random weights and its processor answers through the project's path with exactly N new tokens, and the
check prints one JSON line."""

from __future__ import annotations

import json
import sys

import pytest
import torch
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_families  # noqa: E402

from backend.inference.registry import ModelSpec, build_backend  # noqa: E402
from backend.inference.request import GenerationParams, image, text  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("family", gpu_families.FAMILIES)
def test_every_family_answers_with_exactly_n_new_tokens(family, tmp_path):
    from PIL import Image

    info = gpu_families.build(family, tmp_path / family, small=True, device="cpu", dtype=torch.float32, new_tokens=5)
    assert info["decode_bytes"] > 0 and info["small"]
    backend = build_backend(ModelSpec(family, "transformers", str(tmp_path / family), device="cpu", max_image_side=448))
    asks = [
        [image(Image.new("RGB", (448, 336), (200, 20, 20))), text("What colour?")],
        [text("What next? A. sit B. run")],
    ]
    batch = backend.prepare_batch(asks)
    assert batch.visual_tokens > 0  # the released image settings give real token counts (e.g. Qwen: 16 x 12 patches)
    inputs = backend._on_device(batch.inputs)
    with torch.inference_mode():
        out = backend.model.generate(**inputs, do_sample=False)  # the saved generation config: min = max = 5
    assert out.shape[1] - inputs["input_ids"].shape[1] == 5
    assert backend.generate(asks, GenerationParams(max_new_tokens=5)) == [
        backend.generate([ask], GenerationParams(max_new_tokens=5))[0] for ask in asks
    ]


def test_the_check_prints_one_json_line_even_when_a_family_fails(capsys):
    import gpu_check

    report = gpu_check.main(
        ["--source", "random", "--cpu", "--items", "2", "--families", "no-such-family", "--new-tokens", "2"]
    )
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(line) == json.loads(json.dumps(report, default=str))
    assert "KeyError" in report["families"]["no-such-family"]["error"]
