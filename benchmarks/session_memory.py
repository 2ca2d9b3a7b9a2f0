"""Server memory per new client session: Gradio's route for an endpoint vs the lean route (web/scripts.py).

Every new ``session_hash`` that reaches Gradio's own route makes it build a session state (a copy of the
per-block config of the whole UI), kept until ``session_capacity`` evicts it. The lean route builds none.
Runs ``python app.py`` on the ViLPAct sequences and reads the app's RSS after N new sessions on each route.

Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/session_memory.py [--sessions 200]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from e2e_helpers import ApiClient, free_port, kill_hard, start_app_process, wait_http_ok  # noqa: E402

from backend.accounts import auth  # noqa: E402
from backend.context import build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.importer import import_vilpact  # noqa: E402


def rss_mb(pid: int) -> float:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--vilpact", type=Path, default=ROOT.parent / "shared" / "data" / "vilpact" / "data")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="compstudio-mem-")) / "data"
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    import_vilpact(ctx.database, args.vilpact)
    auth.add_user(ctx.database, "memory-probe", "annotator", "password1")
    ctx.database.close()
    port = free_port()
    process = start_app_process(data_dir, port, env={"COMPSTUDIO_DEMO_CONTENT": "false"})
    try:
        wait_http_ok(f"http://127.0.0.1:{port}/", timeout=120)
        client = ApiClient(f"http://127.0.0.1:{port}", "memory-probe", "password1")
        client.run("intent_next")  # warm both paths once
        client.run("intent_next", route="/scripts/gradio_api/api")
        rows = []
        for label, route in (
            ("ours (lean route)", "/api"),
            ("baseline (Gradio's route)", "/scripts/gradio_api/api"),
        ):
            before = rss_mb(process.pid)
            for _ in range(args.sessions):
                client.session_hash = uuid.uuid4().hex
                client.run("intent_next", route=route)
            grown = rss_mb(process.pid) - before
            rows.append((label, grown, grown / args.sessions))
    finally:
        kill_hard(process)
    print(f"| route | RSS growth after {args.sessions} new sessions, MB | MB per session |")
    print("|---|---|---|")
    for label, grown, per in rows:
        print(f"| {label} | {grown:.1f} | {per:.2f} |")


if __name__ == "__main__":
    main()
