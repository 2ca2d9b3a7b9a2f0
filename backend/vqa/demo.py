"""Demo VQA items for a fresh start: 17 items over all 13 categories (two-image and four-image composites,
probing items), built on public-domain / CC0 photographs shipped in ``assets/vqa/`` (see
``assets/SOURCES.md``). Idempotent: nothing happens once the demo items exist."""

from __future__ import annotations

from pathlib import Path

from backend.context import AppContext
from backend.vqa.io import import_items

DEMO_FILE = Path(__file__).resolve().parent.parent.parent / "assets" / "vqa" / "items.jsonl"
DEMO_MARKER = "demo-obj-p"


def ensure_vqa_demo(ctx: AppContext) -> int:
    """Import the demo items unless they are there. Returns the number imported now (0 when present)."""
    if ctx.database.scalar("SELECT 1 FROM vqa_items WHERE id = ?", (DEMO_MARKER,)):
        return 0
    return import_items(ctx.database, ctx.settings, DEMO_FILE, "jsonl", actor="demo")["imported"]
