"""Demo content for the in-context tab: a 2,000-example COGS bank and 15 test cases of each shared kind.

The files in ``assets/icl/`` are the first lines of the CoFe authors' release, microsoft/ContextualSP
(abstraction_probing/data, MIT licence, see ``assets/icl/LICENSE-COGS`` and ``assets/SOURCES.md``).
"""

from __future__ import annotations

from pathlib import Path

from backend.context import AppContext
from backend.icl import store

ASSETS = Path(__file__).resolve().parent.parent.parent / "assets" / "icl"
DEMO_SETS = (
    ("demo-bank", "bank", "example_bank.jsonl"),
    ("demo-longchain", "tests", "test_longchain_like.jsonl"),
    ("demo-phrareco", "tests", "test_phrareco_like.jsonl"),
)


def ensure_icl_demo(ctx: AppContext) -> int:
    """Import the demo bank and test sets unless they exist; returns how many sets were imported now."""
    present = {row["name"] for row in ctx.database.query("SELECT name FROM icl_sets")}
    imported = 0
    for name, kind, filename in DEMO_SETS:
        if name not in present:
            store.import_set(ctx.database, "demo", ASSETS / filename, name, kind)
            imported += 1
    return imported
