"""CoFe selection: the plain Algorithm 1 (scan the whole bank at every step) against the indexed greedy
selection of backend/icl/selection.py, on the same sample of shared test cases over the full 24,155-example
bank, in one process. Checks that both choose the same examples in the same order and prints the ratio.

    .venv/bin/python benchmarks/icl_selection.py [--cases 6] [--preset full_similarity]

Times are CPU seconds of this process (time.process_time), so other load on the machine matters less.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.icl.data import read_examples  # noqa: E402
from backend.icl.index import build_index  # noqa: E402
from backend.icl.selection import PRESETS, cofe_select, reference_select  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "cogs"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=6, help="test cases (half from each shared file)")
    parser.add_argument("--preset", default="high_diversity", choices=list(PRESETS))
    args = parser.parse_args()
    weights = PRESETS[args.preset]

    started = time.process_time()
    bank = read_examples(DATA / "example_bank.jsonl", default_category="")
    parsed = time.process_time()
    index = build_index(bank)
    indexed = time.process_time()
    tests = []
    for name in ("test_longchain_like.jsonl", "test_phrareco_like.jsonl"):
        cases = read_examples(DATA / name)
        step = max(1, len(cases) // max(1, args.cases // 2))
        tests += cases[::step][: max(1, args.cases // 2)]

    begin = time.process_time()
    ours = [[c.example_id for c in cofe_select(index, t, weights, 10)] for t in tests]
    ours_s = time.process_time() - begin
    begin = time.process_time()
    plain = [reference_select(bank, t, weights, 10) for t in tests]
    plain_s = time.process_time() - begin

    same = ours == plain
    result = {
        "preset": args.preset,
        "bank": len(bank),
        "test_cases": len(tests),
        "identical_choices": same,
        "plain_algorithm_1_s": round(plain_s, 3),
        "indexed_s": round(ours_s, 4),
        "plain_per_case_s": round(plain_s / len(tests), 3),
        "indexed_per_case_ms": round(1000 * ours_s / len(tests), 2),
        "ratio": round(plain_s / ours_s, 1),
        "bank_parse_s": round(parsed - started, 2),
        "index_build_s": round(indexed - parsed, 2),
    }
    print(json.dumps(result, indent=2))
    print(
        f"indexed greedy selection is {result['ratio']}x faster than the plain Algorithm 1 "
        f"({'identical' if same else 'DIFFERENT'} choices on {len(tests)} cases)"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
