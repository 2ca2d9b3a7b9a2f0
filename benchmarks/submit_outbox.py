"""What issue 26 adds to a submit's transaction: the gold check (one read by primary key) and the webhook outbox.

Times ``submit_intents`` (the answer, the finish, the next lease: one ``write()``) in this process on the shipped
ViLPAct pool (N = 3), round-robin over a few annotators, with no webhook endpoint (what every install without
webhooks pays) and with three endpoints subscribed to every event (each submit then also writes the outbox rows
of annotation.created, and of item.completed when it completes an item). Nothing is sent: the sender is not
started, so the numbers are the transaction's own. Prints p50 / p95 and the ratio.

Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/submit_outbox.py [--submits 600]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from backend.accounts import auth  # noqa: E402
from backend.context import build_context  # noqa: E402
from backend.intents import service  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.importer import import_vilpact  # noqa: E402

try:  # run from a checkout without webhooks (the main before issue 26) for the "before" figure
    from backend.webhooks import registry
except ImportError:
    registry = None

GOOD = ("S/He wants to have a drink", "S/He is thirsty")
ANNOTATORS = [f"b{i}" for i in range(6)]


def run(submits: int, endpoints: int) -> list[float]:
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="outbox-", dir=os.environ.get("OUTBOX_DIR"))) / "data", demo_content=False,
                        require_full_view=False, speed_floor_share=0.0, **({"webhooks_allow_private": True} if registry else {}))  # fmt: skip
    ctx = build_context(settings)
    ctx.database.start_checkpointer()  # as app.py does: commits never checkpoint the WAL themselves
    import_vilpact(ctx.database, ROOT / "assets" / "vilpact", annotators_per_sequence=3)
    with ctx.database.write() as db:
        for name in [*ANNOTATORS, "boss"]:
            auth.insert_user(db.conn, name, "admin" if name == "boss" else "annotator")
    for n in range(endpoints):
        assert registry is not None
        registry.add_webhook(ctx.database, settings, "boss", name=f"hook{n}", url=f"http://127.0.0.1:9/{n}")
    tasks = {name: service.next_intent_task(ctx.database, settings, name)["task"] for name in ANNOTATORS}
    times = []
    for i in range(submits):
        name = ANNOTATORS[i % len(ANNOTATORS)]
        start = time.perf_counter()
        reply = service.submit_intents(ctx.database, settings, name, tasks[name]["sequence_id"], *GOOD)
        times.append((time.perf_counter() - start) * 1000)
        tasks[name] = reply["task"]
    queued = ctx.database.scalar("SELECT count(*) FROM webhook_deliveries") if registry else 0
    ctx.database.stop_checkpointer()
    print(f"  {endpoints} endpoint(s): {submits} submits, {queued} deliveries queued")
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submits", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, interleaved (the machine's noise)")
    args = parser.parse_args()
    without: list[float] = []
    with_hooks: list[float] = []
    for _ in range(args.rounds):  # interleaved, so that a busy minute hits both
        without += run(args.submits, 0)
        if registry is not None:
            with_hooks += run(args.submits, 3)
    if registry is None:
        print(f"before webhooks: p50 / p95 {statistics.median(without):.2f} / {p95(without):.2f} ms")
        return
    print("submit (answer + finish + next lease, one transaction)   p50 / p95 ms")
    for label, times in (("no webhook endpoint", without), ("3 endpoints, every event", with_hooks)):
        print(f"  {label:<32} {statistics.median(times):6.2f} / {p95(times):6.2f}")
    print(f"  ratio p50 {statistics.median(with_hooks) / statistics.median(without):.2f}x, "
          f"p95 {p95(with_hooks) / p95(without):.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
