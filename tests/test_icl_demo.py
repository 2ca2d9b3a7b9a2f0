from __future__ import annotations

from backend.icl import store
from backend.icl.demo import ensure_icl_demo


def test_demo_sets_import_once(ctx):
    assert ensure_icl_demo(ctx) == 3
    assert ensure_icl_demo(ctx) == 0
    sets = {row["name"]: row for row in store.list_sets(ctx.database)}
    assert sets["demo-bank"]["items"] == 2000 and sets["demo-bank"]["kind"] == "bank"
    assert sets["demo-longchain"]["items"] == 15 and sets["demo-phrareco"]["items"] == 15
    assert {e.category for e in store.load_set(ctx.database, "demo-phrareco")} == {"phrareco"}
