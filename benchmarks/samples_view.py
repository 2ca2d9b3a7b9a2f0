"""The Samples view on a 2,002-case in-context run (issue 28 §7): opening it and paging through it, against reading
the same rows the way a report reads them without the view (load the benchmark's items, build their prompts, look
each up in the prediction store, filter and cut the page in Python), in one process.

    .venv/bin/python benchmarks/samples_view.py [--bank shipped|full] [--page-size 25]

The run: the seeded ``random`` baseline on CoFe's two shared test files (1,002 + 1,000 cases, ../shared/data/cogs)
with 10 examples each from the bank (the 2,000 shipped lines, or the full 24,155 with ``--bank full``). Timed:
every page of the run (the view's page size), the wrong items, a search; each through the library
(:func:`backend.inference.samples.page`), the JSON endpoint ``results_samples`` and the view's own next-page event,
both over HTTP against the real app in this process. Wall-clock milliseconds; the target is 300 ms a page.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

# ../shared beside the checkout (CI, /work/main), or two levels up from a worktree under /work/wt/
SHARED = next(
    (p / "shared" / "data" / "cogs" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data" / "cogs",
)
BANKS = {"shipped": ROOT / "assets" / "icl" / "example_bank.jsonl", "full": SHARED / "example_bank.jsonl"}
TARGET_MS = 300.0


def _ms(fn, *args, **kwargs) -> tuple[float, object]:
    began = time.perf_counter()
    value = fn(*args, **kwargs)
    return (time.perf_counter() - began) * 1000, value


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "pages": len(values),
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 1),
        "max_ms": round(ordered[-1], 1),
    }


def baseline_page(ctx, run_id: int, page: int, page_size: int, wanted: str = "all") -> list[dict]:
    """One page without the view: the run's items rebuilt and looked up in the store, filtered in Python."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.prepared import prepare
    from backend.inference.samples import get_run
    from backend.inference.store import lookup

    run = get_run(ctx.database, run_id)
    bench = get_benchmark(ctx, run.benchmark)
    prepared = prepare(bench, bench.load_items(ctx, **run.load_options), ctx.digests)
    stored = lookup(ctx.database, run.model, run.benchmark, run.settings_hash)
    rows = []
    for p in prepared:
        row = stored.get((p.item.item_id, p.prompt_hash))
        if row is None or (wanted == "wrong" and (row.status == "error" or (row.score or 0) >= 1)):
            continue
        rows.append({"item_id": p.item.item_id, "raw_output": row.raw_output, "score": row.score})
    return rows[(page - 1) * page_size : page * page_size]


def setup(folder: Path, bank: Path):
    from backend.context import build_context
    from backend.icl.store import import_set
    from backend.inference.runner import run_eval
    from backend.settings import Settings

    ctx = build_context(Settings(data_dir=folder / "data", demo_content=False))
    import_set(ctx.database, "bench", bank, "bank", "bank")
    for name in ("test_longchain_like", "test_phrareco_like"):
        import_set(ctx.database, "bench", SHARED / f"{name}.jsonl", name, "tests")
    began = time.perf_counter()
    summary = run_eval(ctx, "icl", "random", load_options={"bank": "bank"})
    return ctx, summary, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bank", default="shipped", choices=list(BANKS))
    parser.add_argument("--page-size", type=int, default=25, help="rows a page (the view shows 25)")
    args = parser.parse_args()
    if not (SHARED / "test_longchain_like.jsonl").is_file():
        print(f"needs CoFe's shared test files under {SHARED}", file=sys.stderr)
        return 2
    from e2e_helpers import ApiClient, app_in_process

    from backend.accounts import auth
    from backend.inference import samples

    with tempfile.TemporaryDirectory(prefix="samples-view-") as tmp:
        ctx, summary, run_s = setup(Path(tmp), BANKS[args.bank])
        size = args.page_size
        pages = -(-summary.items // size)
        library = []
        for number in range(1, pages + 1):  # the first page with the filters' counts, as the view opens it
            query = samples.SampleQuery(page=number, page_size=size)
            library.append(_ms(samples.page, ctx, summary.run_id, query, with_counts=number == 1)[0])
        wrong = [_ms(samples.page, ctx, summary.run_id, samples.SampleQuery("wrong", page=n, page_size=size))[0]
                 for n in (1, 2, 3)]  # fmt: skip
        search = [_ms(samples.page, ctx, summary.run_id, samples.SampleQuery(search="NONE", page_size=size))[0]]
        baseline = [_ms(baseline_page, ctx, summary.run_id, n, size)[0] for n in (1, 2, 3)]

        from backend.settings import Settings

        with app_in_process(Settings(data_dir=Path(tmp) / "data", demo_content=False)) as app:
            auth.add_user(app.ctx.database, "rev", "reviewer", "password1")
            client = ApiClient(app.url, "rev", "password1")
            run_id = str(summary.run_id)
            endpoint = []
            for number in range(1, pages + 1):
                took, page = _ms(client.run, "results_samples", run_id, "", "", "all", "", "", number, size)
                endpoint.append(took)
            assert len(page["rows"]) == summary.items - (pages - 1) * size
            index = {fn.api_name: i for i, fn in app.shell.blocks["/reviewer"].fns.items()}
            opened = {"data": [], "fn_index": index["results_samples_open"], "session_hash": "bench"}
            assert client.http.post("/reviewer/gradio_api/run/predict", json=opened).status_code == 200  # the tab opens
            shown = {
                "data": [run_id, "all", "", ""],
                "fn_index": index["results_samples_show"],
                "session_hash": "bench",
            }
            open_ms, reply = _ms(
                client.http.post, "/reviewer/gradio_api/run/predict", json=shown
            )  # Show: page 1, counts
            assert reply.status_code == 200, reply.text[:300]
            next_index = index["results_samples_next"]
            event = []
            for number in range(1, pages):
                body = {"data": [run_id, "all", "", "", number], "fn_index": next_index, "session_hash": "bench"}
                took, reply = _ms(client.http.post, "/reviewer/gradio_api/run/predict", json=body)
                assert reply.status_code == 200, reply.text[:300]
                event.append(took)
    result = {
        "run": {"items": summary.items, "bank": args.bank, "score": summary.score, "run_s": round(run_s, 1)},
        "page_size": size,
        "library_every_page": _summary(library),
        "library_wrong": _summary(wrong),
        "library_search": _summary(search),
        "endpoint_results_samples_every_page": _summary(endpoint),
        "view_show_event_ms": round(open_ms, 1),
        "view_next_page_event_every_page": _summary(event),
        "baseline_rebuild_and_filter_per_page": _summary(baseline),
        "ratio_baseline_over_endpoint_median": round(statistics.median(baseline) / statistics.median(endpoint), 1),
    }
    print(json.dumps(result, indent=2))
    worst = max([open_ms] + [_summary(values)["p95_ms"] for values in (library, endpoint, event)])
    print(
        f"Samples view of a {summary.items}-case in-context run: opened in {open_ms:.0f} ms, "
        f"a page in {statistics.median(event):.0f} ms "
        f"(median; p95 {worst:.0f} ms at worst, target {TARGET_MS:.0f} ms) through the view's event, "
        f"{statistics.median(endpoint):.0f} ms through the JSON endpoint; rebuilding the rows without the view "
        f"takes {statistics.median(baseline):.0f} ms a page ({result['ratio_baseline_over_endpoint_median']}x)."
    )
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
