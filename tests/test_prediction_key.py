"""The prediction key binds everything that decides an answer: change one field, the answer is computed
anew; change nothing, it comes from the store. One test per key field, through real runs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from backend.cli import main as cli_main
from backend.inference import digests as digests_module
from backend.inference.benchmarks import BenchmarkSpec, EvalItem, choice_request
from backend.inference.digests import FileDigests
from backend.inference.registry import ModelSpec, write_models
from backend.inference.request import GenerationParams, image, request_hash, text, video
from backend.inference.revision import cached_hub_commit, model_revision
from backend.inference.runner import run_eval
from backend.inference.store import KEY_VERSION, Prediction, save

COMMIT_A, COMMIT_B = "a" * 40, "b" * 40


@pytest.fixture
def world(ctx, tmp_path):
    """Two items, each with an image file, a video file (window, frame count) and pre-sampled frames."""
    media = tmp_path / "media"
    media.mkdir()
    state = {
        "question": "What happens next?",
        "options": ("the cat jumps", "the dog sleeps"),
        "start": 1.0,
        "end": 3.0,
        "num_frames": 4,
        "sampling": {"frames": 2, "decoder": "decord", "window": [0.0, 2.0]},
    }
    for index in range(2):
        (media / f"img{index}.png").write_bytes(b"png bytes %d" % index)
        (media / f"clip{index}.mp4").write_bytes(b"mp4 bytes %d" % index)

    def load(ctx):
        items = []
        for index in range(2):
            question = state["question"] if index == 0 else "Which one?"
            frame = Image.new("RGB", (4, 4), (index, 0, 0))
            request = [
                image(str(media / f"img{index}.png")),
                video(
                    path=media / f"clip{index}.mp4",
                    start=state["start"] if index == 0 else 0.0,
                    end=state["end"] if index == 0 else 3.0,
                )
                | ({"num_frames": state["num_frames"]} if index == 0 else {}),
                video(frames=[frame, frame], sampling=state["sampling"] if index == 0 else None),
                text(question),
            ]
            options = state["options"] if index == 0 else ("yes", "no")
            items.append(EvalItem(f"q{index}", request, options, frozenset("A")))
        return items

    ctx.benchmarks.register(BenchmarkSpec("key-test", "two items with media", load))
    write_models(ctx.settings, [ModelSpec("echo", "python", "inference_helpers:echo_factory")])
    return {"state": state, "media": media}


def _run(ctx, model: str = "echo", benchmark: str = "key-test") -> tuple[int, int]:
    summary = run_eval(ctx, benchmark, model)
    return summary.newly_computed, summary.from_store


def _touch(path: Path, data: bytes) -> None:
    """Rewrite a file with new bytes of the same length (and a new modification time)."""
    stat = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


ITEM_CHANGES = {
    "question": lambda w: w["state"].update(question="What happens after that?"),
    "options": lambda w: w["state"].update(options=("the cat jumps", "the dog runs")),
    "image bytes": lambda w: _touch(w["media"] / "img0.png", b"png bytes X"),
    "video bytes": lambda w: _touch(w["media"] / "clip0.mp4", b"mp4 bytes X"),
    "window start": lambda w: w["state"].update(start=1.5),
    "window end": lambda w: w["state"].update(end=2.5),
    "frames of a video file": lambda w: w["state"].update(num_frames=8),
    "frames sampled before": lambda w: w["state"].update(sampling={**w["state"]["sampling"], "frames": 3}),
    "decoder": lambda w: w["state"].update(sampling={**w["state"]["sampling"], "decoder": "pyav"}),
    "sampled window": lambda w: w["state"].update(sampling={**w["state"]["sampling"], "window": [0.0, 2.5]}),
}


def test_nothing_changed_everything_served_from_the_store(ctx, world):
    assert _run(ctx) == (2, 0)
    ctx.pool.unload()
    (world["media"] / "img0.png").touch()  # a new modification time, the same bytes
    assert _run(ctx) == (0, 2)


@pytest.mark.parametrize("change", list(ITEM_CHANGES))
def test_an_item_field_changed_recomputes_that_item_only(ctx, world, change):
    assert _run(ctx) == (2, 0)
    ITEM_CHANGES[change](world)
    assert _run(ctx) == (1, 1)
    assert _run(ctx) == (0, 2)


MODEL_CHANGES = {
    "frames per video": {"frames_per_video": 4},
    "image size limit": {"max_image_side": 336},
    "prompt style": {"prompt_style": "plain"},
    "max new tokens": {"max_new_tokens": 64},
    "pinned revision": {"options": {"revision": "v2"}},
}


@pytest.mark.parametrize("change", list(MODEL_CHANGES))
def test_a_model_setting_changed_recomputes_every_item(ctx, world, change):
    assert _run(ctx) == (2, 0)
    spec = ModelSpec("echo", "python", "inference_helpers:echo_factory", **MODEL_CHANGES[change])
    write_models(ctx.settings, [spec])
    assert _run(ctx) == (2, 0)
    assert _run(ctx) == (0, 2)


@pytest.mark.parametrize(
    "params", [GenerationParams(temperature=0.7), GenerationParams(top_p=0.9), GenerationParams(stop=("\n",))]
)
def test_generation_settings_changed_recompute(ctx, world, params):
    assert _run(ctx) == (2, 0)
    load = ctx.benchmarks.get("key-test").load_items
    ctx.benchmarks.register(BenchmarkSpec("key-test", "same items, other decoding", load, params=params))
    assert _run(ctx) == (2, 0)


def test_prompt_template_changed_recomputes(ctx, world):
    assert _run(ctx) == (2, 0)

    def terse(item: EvalItem):
        request = choice_request(item)
        return [*request[:-1], text(request[-1]["text"].replace("directly", "only"))]

    load = ctx.benchmarks.get("key-test").load_items
    ctx.benchmarks.register(BenchmarkSpec("key-test", "another template", load, build_request=terse))
    assert _run(ctx) == (2, 0)


def test_local_weights_changed_recompute(ctx, world, tmp_path):
    """A model in a local folder: its revision is a digest of the folder's files (``random`` ignores them,
    but the key does not)."""
    weights = tmp_path / "my-finetune"
    weights.mkdir()
    (weights / "config.json").write_text('{"model_type": "llava"}')
    (weights / "model.safetensors").write_bytes(b"\0" * 4096)
    write_models(ctx.settings, [ModelSpec("tuned", "random", str(weights))])
    assert _run(ctx, "tuned") == (2, 0)
    assert _run(ctx, "tuned") == (0, 2)
    _touch(weights / "model.safetensors", b"\1" * 4096)
    assert _run(ctx, "tuned") == (2, 0)
    (weights / "tokenizer_config.json").write_text("{}")  # a new file beside the weights counts too
    assert _run(ctx, "tuned") == (2, 0)


def test_hub_revision_from_the_snapshot_path_and_the_cached_ref(ctx, tmp_path):
    cache = tmp_path / "hub"
    repo = cache / "models--org--tiny-vlm"
    for commit in (COMMIT_A, COMMIT_B):
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT_A)
    by_path = ModelSpec("m", "transformers", str(repo / "snapshots" / COMMIT_B))
    assert model_revision(by_path, ctx.digests) == f"hub:{COMMIT_B}"
    by_id = ModelSpec("m", "transformers", "org/tiny-vlm")
    assert model_revision(by_id, ctx.digests, cache) == f"hub:{COMMIT_A}"
    (repo / "refs" / "main").write_text(COMMIT_B)  # the cache was updated to a newer commit
    assert model_revision(by_id, ctx.digests, cache) == f"hub:{COMMIT_B}"
    assert cached_hub_commit("org/absent", cache_dir=cache) is None
    assert model_revision(ModelSpec("m", "transformers", "org/absent"), ctx.digests, cache).endswith(":unresolved")


def test_rows_of_the_old_key_are_not_served(ctx, world):
    """Rows stored under key version 1 (model fingerprint and decoding only) are computed anew."""
    from backend.inference.prepared import prepare

    bench = ctx.benchmarks.get("key-test")
    spec = ModelSpec("echo", "python", "inference_helpers:echo_factory")
    params = dataclasses.replace(bench.params, max_new_tokens=spec.max_new_tokens)
    old_blob = json.dumps({"model": spec.fingerprint(), "params": params.as_dict()}, sort_keys=True, default=str)
    old_hash = hashlib.sha256(old_blob.encode()).hexdigest()[:16]
    stale = [
        Prediction("echo", "key-test", p.item.item_id, p.prompt_hash, old_hash, "ok", "B", None, 0.0, 1.0)
        for p in prepare(bench, bench.load_items(ctx))
    ]
    save(ctx.database, stale)
    assert KEY_VERSION == 2 and _run(ctx) == (2, 0)


def test_digests_are_cached_per_file_version(tmp_path, monkeypatch):
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"frames")
    hashed: list[Path] = []
    real = digests_module.file_digest
    monkeypatch.setattr(digests_module, "file_digest", lambda p: hashed.append(p) or real(p))
    cache = FileDigests()
    request = [video(path=path), text("?")]
    first = request_hash(request, cache)
    assert request_hash(request, cache) == first and len(hashed) == 1
    _touch(path, b"FRAMES")
    assert request_hash(request, cache) != first and len(hashed) == 2


def test_a_large_file_is_hashed_from_sampled_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(digests_module, "FULL_HASH_LIMIT", 1024)
    monkeypatch.setattr(digests_module, "BLOCK", 64)
    path = tmp_path / "weights.bin"
    path.write_bytes(bytes(range(256)) * 16)
    before = digests_module.file_digest(path)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1  # the last block is always sampled
    path.write_bytes(bytes(data))
    assert digests_module.file_digest(path) != before


def test_the_run_manifest_names_what_decided_the_numbers(ctx, world):
    manifest = run_eval(ctx, "key-test", "echo").manifest
    assert manifest is not None
    assert manifest["model"]["name"] == "echo" and manifest["model"]["backend"] == "python"
    assert manifest["generation"]["max_new_tokens"] == 32 and manifest["image_size_limit"] == 768
    assert manifest["frame_sampling"]["sampled_before_request"] == [{"decoder": "decord", "frames": 2}]
    assert manifest["prompt"]["template"] == "choice_request" and len(manifest["prompt"]["template_hash"]) == 16
    assert manifest["dataset"] == {
        "benchmark": "key-test",
        "load_options": {},
        "items": 2,
        "content_hash": manifest["dataset"]["content_hash"],
    }
    assert manifest["key"]["version"] == KEY_VERSION and manifest["compstudio"]["version"]
    world["state"].update(question="Another question?")
    assert run_eval(ctx, "key-test", "echo").manifest["dataset"]["content_hash"] != manifest["dataset"]["content_hash"]


def test_cli_eval_out_folder_and_predictions_export_carry_the_manifest(ctx, capsys, tmp_path):
    write_models(ctx.settings, [ModelSpec("random", "random", options={"seed": 0})])
    data = ["--data-dir", str(ctx.settings.data_dir)]
    out = tmp_path / "run"
    assert cli_main(["eval", *data, "--benchmark", "toy-colors", "--model", "random", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == printed["manifest"] and manifest["model"]["name"] == "random"
    assert json.loads((out / "summary.json").read_text())["items"] == 24
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and {r["settings_hash"] for r in rows} == {manifest["key"]["settings_hash"]}
    export = tmp_path / "all.jsonl"
    assert cli_main(["export", "predictions", *data, "--out", str(export)]) == 0
    capsys.readouterr()
    runs = json.loads((tmp_path / "all.jsonl.manifest.json").read_text())["runs"]
    assert [r["manifest"] for r in runs] == [manifest]


def test_a_hub_model_not_cached_yet_is_downloaded_before_its_run_is_keyed(ctx, world, tmp_path, monkeypatch):
    """The first run of a Hub id loads (downloads) the model first, so its answers are stored under the commit
    and the next run serves them; the "download" here is a backend that writes the cache's refs/main."""
    from inference_helpers import echo_factory

    cache = tmp_path / "hub-cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))

    def downloading_factory(spec):
        refs = cache / "models--org--tiny-vlm" / "refs"
        refs.mkdir(parents=True, exist_ok=True)
        (refs / "main").write_text(COMMIT_A)
        return echo_factory(spec)

    ctx.models.register_backend("transformers", downloading_factory)
    write_models(ctx.settings, [ModelSpec("hub-model", "transformers", "org/tiny-vlm")])
    first = run_eval(ctx, "key-test", "hub-model")
    assert first.newly_computed == 2 and first.manifest["model"]["revision"] == f"hub:{COMMIT_A}"
    ctx.pool.unload()
    assert _run(ctx, "hub-model") == (0, 2)
    (cache / "models--org--tiny-vlm" / "refs" / "main").write_text(COMMIT_B)  # a newer commit downloaded
    assert _run(ctx, "hub-model") == (2, 0)
