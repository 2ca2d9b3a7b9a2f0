"""Submit-to-next-task latency and throughput of intent annotation under 1, 10 and 30 concurrent annotators.

Runs ``python app.py`` in its own process on loopback with the 2,912 real ViLPAct sequences, and drives it
with scripted annotators (tests/load_driver.py) over raw HTTP with the login cookie, one kept-alive
connection each (gradio_client would measure itself: ~75 ms a call). All annotators sign in and fetch their
first task, then start together; latency is one "submit, then have the next task" step:

* base: Gradio's default, two queued calls (``/gradio_api/call/intent_submit`` then ``.../intent_next``);
* gradio: one queue-free call through Gradio's own route for the endpoint (``/gradio_api/api/intent_submit``),
  whose reply carries the next task (what ours was before the lean route);
* ours: the same one call on the lean route (``/api/intent_submit``, web/scripts.py).

Usage: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/annotation_load.py [--levels 1 10 30] [--think-ms 0]``
Prints a table and writes benchmarks/out/annotation_load.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from e2e_helpers import free_port, kill_hard, start_app_process, wait_http_ok  # noqa: E402
from load_driver import percentile, run_annotators, throughput  # noqa: E402

from backend.accounts import auth  # noqa: E402
from backend.context import build_context  # noqa: E402
from backend.settings import Settings  # noqa: E402
from backend.vilpact.importer import import_vilpact  # noqa: E402

SUBMISSIONS = {1: 60, 10: 30, 30: 20}
MODES = {"base": "queued", "gradio": "gradio", "ours": "lean"}  # column -> load_driver mode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 10, 30])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="pause of each annotator between a reply and the next submit (default 0: saturation)",
    )
    parser.add_argument("--vilpact", type=Path, default=ROOT.parent / "shared" / "data" / "vilpact" / "data")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="compstudio-bench-")) / "data"
    ctx = build_context(Settings(data_dir=data_dir, demo_content=False))
    import_vilpact(ctx.database, args.vilpact)
    names = {(mode, level): [f"{mode}{level}-{i:02d}" for i in range(level)] for mode in MODES for level in args.levels}
    for group in names.values():
        for name in group:
            auth.add_user(ctx.database, name, "annotator", "password1")
    ctx.database.close()
    port = free_port()
    process = start_app_process(data_dir, port, env={"COMPSTUDIO_DEMO_CONTENT": "false"})
    rows = []
    try:
        startup = wait_http_ok(f"http://127.0.0.1:{port}/", timeout=120)
        url = f"http://127.0.0.1:{port}"
        for level in args.levels:
            row = {"annotators": level, "submissions_each": SUBMISSIONS.get(level, 20)}
            for mode in args.modes:
                results = run_annotators(
                    url,
                    names[(mode, level)],
                    "password1",
                    row["submissions_each"],
                    mode=MODES[mode],
                    think_s=args.think_ms / 1000,
                )
                latencies = [v for r in results for v in r.latencies_ms]
                errors = [e for r in results for e in r.errors]
                if errors:
                    raise SystemExit(f"{mode} at {level} annotators failed: {errors[:3]}")
                row[mode] = {
                    "p50_ms": round(percentile(latencies, 50), 1),
                    "p95_ms": round(percentile(latencies, 95), 1),
                    "per_s": round(throughput(results), 1),
                    "n": len(latencies),
                }
            if "base" in row and "ours" in row:
                row["p95_ratio"] = round(row["base"]["p95_ms"] / row["ours"]["p95_ms"], 2)
            rows.append(row)
    finally:
        kill_hard(process)
    print(f"app start-up to HTTP 200: {startup:.1f} s; think time {args.think_ms:g} ms")
    print(
        "| annotators | base: two queued calls, p50 / p95 ms | /s | gradio: one call, p50 / p95 ms | /s "
        "| ours: one call, lean route, p50 / p95 ms | /s | p95 base/ours |"
    )
    print("|---|---|---|---|---|---|---|---|")
    blank = {"p50_ms": "-", "p95_ms": "-", "per_s": "-"}
    for r in rows:
        cells = [r.get(mode, blank) for mode in MODES]
        body = " | ".join(f"{c['p50_ms']} / {c['p95_ms']} | {c['per_s']}" for c in cells)
        print(f"| {r['annotators']} | {body} | {r.get('p95_ratio', '-')}x |")
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    name = "annotation_load.json" if not args.think_ms else f"annotation_load_think{args.think_ms:g}.json"
    (out / name).write_text(json.dumps({"startup_s": startup, "think_ms": args.think_ms, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
