"""How a run's videos reached an OpenAI-compatible server, for its manifest (``frame_sampling.video_input``).

With ``native_video`` (vLLM's ``video_url`` for Qwen2-VL-family models) the sampled frames go as one clip, and
the server's video processor may merge frames in time, so the same clip costs fewer prompt tokens than the
same frames sent as images. The manifest says which way they went and, for a clip, the prompt tokens the
server counted for the run's first video item both ways (two one-token calls, made when the run computes
anything; a run served wholly from the store repeats the figure of the last finished run under its key).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from backend.errors import CompStudioError

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.prepared import Prepared
    from backend.inference.registry import ModelSpec


def native_video(spec: ModelSpec) -> bool:
    return str(spec.options.get("native_video", False)).strip().lower() in {"1", "true", "yes", "on"}


def video_input(
    ctx: AppContext, benchmark: str, spec: ModelSpec, prepared: Sequence[Prepared], shash: str, computed: int
) -> dict[str, Any] | None:
    """The manifest's ``video_input`` entry for an openai run with video items (None otherwise)."""
    if spec.backend != "openai":
        return None
    videos = [p for p in prepared if any(part["type"] == "video" for part in p.request)]
    if not videos:
        return None
    clip = native_video(spec)
    record: dict[str, Any] = {"sent_as": "video" if clip else "frames", "frames_per_video": spec.frames_per_video}
    if not clip:
        return record
    if not computed:
        return _previous(ctx, spec.name, benchmark, shash) or record
    try:
        backend = ctx.pool.get(spec)
        with ctx.pool.slot():  # two one-token calls to the model server
            counts = backend.video_prompt_tokens(videos[0].request)
    except CompStudioError as exc:
        return {**record, "prompt_tokens_error": str(exc)[:300]}
    return {**record, "probe_item": videos[0].item.item_id, "prompt_tokens": counts}


def _previous(ctx: AppContext, model: str, benchmark: str, shash: str) -> dict[str, Any] | None:
    from backend.inference.store import run_manifests

    (entry,) = run_manifests(ctx.database, {(model, benchmark, shash)})
    found = ((entry["manifest"] or {}).get("frame_sampling") or {}).get("video_input")
    return found if isinstance(found, dict) and "prompt_tokens" in found else None
