"""The shipped demo content: ViLPAct's release from assets/, outside the intent pool; planning questions in theirs."""

from __future__ import annotations

from backend.vilpact.demo import ensure_vilpact_demo


def test_vilpact_demo_imports_once_and_keeps_the_intent_pool_to_the_demo_videos(demo_ctx):
    db = demo_ctx.database
    assert ensure_vilpact_demo(demo_ctx) == {"sequences": 2912, "planning_questions": 510}
    assert ensure_vilpact_demo(demo_ctx) == {"sequences": 0, "planning_questions": 0}
    assert db.scalar("SELECT count(*) FROM sequences") == 2917
    assert db.scalar("SELECT count(*) FROM tasks WHERE kind = 'intent'") == 5
    assert db.scalar("SELECT count(*) FROM tasks WHERE kind = 'planning'") == 510
    assert db.scalar("SELECT strips_action FROM action_classes WHERE id = 'c001'") == "Put(P,x,to)"
