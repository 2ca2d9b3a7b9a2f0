"""Gold items and quality checks (issue 16 §3) on worked examples, over a real ViLPAct pool in SQLite."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from campaign_helpers import add_people, context_from_template, last_sequences, release_as_reference, template_database

from backend.campaigns import gold, quality
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.intents import service
from tests.conftest import VILPACT_DATA

GOOD = ("S/He wants to have a drink", "S/He is thirsty")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("campaign-template"), VILPACT_DATA, annotators_per_sequence=2)


def make(template, tmp_path, **settings):
    ctx = context_from_template(template, tmp_path / "data", **settings)
    add_people(ctx.database, [f"w{i}" for i in range(8)])
    return ctx


def with_gold(ctx, count: int) -> list[str]:
    ids = last_sequences(ctx.database, count)
    release_as_reference(ctx.database, ids)
    gold.add_gold(ctx.database, "rev", "intent", ids)
    return ids


def submit(ctx, who: str, answer=GOOD, seconds: float = 0.0) -> str:
    """Ask for the task, spend ``seconds`` on it (the lease is moved back), submit; returns the sequence."""
    task = service.next_intent_task(ctx.database, ctx.settings, who)["task"]
    assert task is not None, f"{who} got no task"
    if seconds:
        earlier = (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat(timespec="microseconds")
        with ctx.database.write() as db:
            db.conn.execute(
                "UPDATE assignments SET leased_at = ? WHERE annotator = ? AND kind = 'intent' AND status = 'leased'",
                (earlier, who),
            )
    service.submit_intents(ctx.database, ctx.settings, who, task["sequence_id"], *answer)
    return task["sequence_id"]


def live_submissions(ctx) -> Counter:
    """Submissions per intent task that count toward N (gold answers excluded)."""
    rows = ctx.database.query(
        """SELECT a.item_id FROM assignments a WHERE a.kind = 'intent' AND a.status = 'submitted'
           AND NOT EXISTS (SELECT 1 FROM gold_answers g WHERE g.assignment_id = a.id)"""
    )
    return Counter(r["item_id"] for r in rows)


def test_gold_is_mixed_in_at_the_rate_and_never_counts_toward_n(template, tmp_path):
    ctx = make(template, tmp_path, gold_rate=0.25, speed_floor_share=0.0)
    gold_ids = set(with_gold(ctx, 6))
    assert {
        r["status"] for r in ctx.database.query("SELECT status FROM tasks WHERE item_id IN (?, ?)", tuple(gold_ids)[:2])
    } == {"gold"}
    done = [submit(ctx, "w0") for _ in range(8)]
    assert sum(1 for s in done if s in gold_ids) == 2  # one in every 4 tasks, exactly
    positions = [i + 1 for i, s in enumerate(done) if s in gold_ids]
    phase = gold.phase_of("w0")
    assert positions == [p for p in range(1, 9) if gold.gold_due(p, 0.25, phase)]
    # gold items are never handed out as pool tasks and never hold a slot of N
    assert ctx.database.scalar("SELECT count(*) FROM tasks WHERE status = 'gold'") == 6
    assert not set(live_submissions(ctx)) & gold_ids
    assert ctx.database.scalar("SELECT count(*) FROM gold_answers WHERE annotator = 'w0'") == 2


def test_gold_answers_are_scored_by_agreement_or_by_a_reviewer(template, tmp_path):
    ctx = make(template, tmp_path, gold_rate=0.5, speed_floor_share=0.0, quality_pause_after=0)
    with_gold(ctx, 4)
    with ctx.database.write() as db:  # references in the accepted form (the released text is free-form)
        db.conn.execute(
            "UPDATE final_intents SET concrete_intent = 'S/He wants to tidy up room ' || sequence_id, "
            "high_level_intent = 'S/He is getting ready'"
        )
    reference = {}
    for row in ctx.database.query("SELECT sequence_id, concrete_intent, high_level_intent FROM final_intents"):
        reference.setdefault(row["sequence_id"], (row["concrete_intent"], row["high_level_intent"]))
    outcomes = []
    for _ in range(4):  # copy the reference on gold tasks: agreement 1.0, correct without a reviewer
        task = service.next_intent_task(ctx.database, ctx.settings, "w1")["task"]
        answer = reference.get(task["sequence_id"], GOOD)
        service.submit_intents(ctx.database, ctx.settings, "w1", task["sequence_id"], *answer)
    with ctx.database.write() as db:
        quality.check_worker(db, ctx.settings, "w1")
    outcomes = ctx.database.query("SELECT outcome, agreement FROM gold_answers WHERE annotator = 'w1'")
    assert outcomes and all(o["outcome"] == "correct" and o["agreement"] == 1.0 for o in outcomes)
    # another worker writes something unlike the reference: a reviewer must judge it
    for _ in range(2):
        submit(ctx, "w2")
    with ctx.database.write() as db:
        quality.check_worker(db, ctx.settings, "w2")
    pending = gold.pending_judgments(ctx.database, "rev")
    assert [p["annotator"] for p in pending] == ["w2"] and pending[0]["agreement"] < 0.5 and pending[0]["reference"]
    with pytest.raises(PermissionDenied):
        gold.pending_judgments(ctx.database, "w1")
    verdict = gold.judge(ctx.database, ctx.settings, "rev", pending[0]["assignment_id"], correct=False)
    assert verdict["outcome"] == "wrong"
    with pytest.raises(Exception, match="not waiting"):
        gold.judge(ctx.database, ctx.settings, "rev", pending[0]["assignment_id"], correct=True)


def test_gold_item_refused_while_it_is_being_worked_on(template, tmp_path):
    ctx = make(template, tmp_path)
    started = service.next_intent_task(ctx.database, ctx.settings, "w0")["task"]["sequence_id"]
    release_as_reference(ctx.database, [started])
    with pytest.raises(ValidationError, match="being worked on"):
        gold.add_gold(ctx.database, "rev", "intent", [started])
    with pytest.raises(ValidationError, match="no validated answer"):
        gold.add_gold(ctx.database, "rev", "intent", [last_sequences(ctx.database, 1)[0]])
    with pytest.raises(PermissionDenied):
        gold.add_gold(ctx.database, "w0", "intent", [started])


def with_videos(ctx) -> None:
    """Every sequence gets a video file to watch (the floor applies only where there is one)."""
    video = ctx.settings.media_dir / "watch.mp4"
    video.write_bytes(b"\0" * 64)
    with ctx.database.write() as db:
        db.conn.execute("UPDATE sequences SET video_path = ?", (str(video),))


def test_too_fast_answers_are_flagged_with_reasons_and_pause_the_worker(template, tmp_path):
    ctx = make(template, tmp_path, speed_floor_share=1.0, quality_pause_after=3)
    with_videos(ctx)
    db, settings = ctx.database, ctx.settings
    slow = submit(ctx, "w3", seconds=120)  # longer than any sequence's video (at most ~40 s)
    fast = [submit(ctx, "w3") for _ in range(3)]
    # the third fast submit's hand-out (same transaction) flagged and paused them: no next task
    assert db.scalar("SELECT state FROM worker_quality WHERE username = 'w3'") == "paused"
    flags = quality.flags(db, "rev")
    assert sorted(f["item_id"] for f in flags) == sorted(fast) and slow not in {f["item_id"] for f in flags}
    assert all(f["reason"] == "too_fast" and "the floor is" in f["detail"] and f["state"] == "paused" for f in flags)
    # paused: told why, holds no lease
    refused = service.next_intent_task(db, settings, "w3")
    assert refused["task"] is None and "paused for a quality check (3 open quality flags" in refused["paused"]
    assert (
        db.scalar(
            "SELECT count(*) FROM assignments WHERE annotator = 'w3' AND status = 'leased' AND expires_at > ?",
            (datetime.now(UTC).isoformat(),),
        )
        == 0
    )
    with pytest.raises(PermissionDenied):
        quality.resume(db, "w0", "w3")
    # no worker named, or nobody of that name: said so, and no quality state is written for it
    with pytest.raises(ValidationError, match="name the worker"):
        quality.resume(db, "rev", "  ")
    with pytest.raises(NotFound, match="no user named 'nobody'"):
        quality.resume(db, "rev", "nobody")
    assert db.scalar("SELECT count(*) FROM worker_quality WHERE username IN ('', 'nobody')") == 0
    assert quality.resume(db, "rev", "w3")["flags_resolved"] == 3
    assert service.next_intent_task(db, settings, "w3")["task"] is not None
    assert quality.flags(db, "rev") == []


def test_low_gold_accuracy_flags_the_worker(template, tmp_path):
    ctx = make(template, tmp_path, gold_rate=0.5, speed_floor_share=0.0, gold_min_judged=2, quality_pause_after=0)
    with_gold(ctx, 4)
    for _ in range(4):
        submit(ctx, "w4")
    for pending in gold.pending_judgments(ctx.database, "rev"):
        gold.judge(ctx.database, ctx.settings, "rev", pending["assignment_id"], correct=False)
    flags = [f for f in quality.flags(ctx.database, "rev") if f["annotator"] == "w4"]
    assert [f["reason"] for f in flags] == ["gold_accuracy"]
    assert flags[0]["detail"] == "gold accuracy 0/2 = 0%, below 70%"


def test_block_frees_leases_at_once_and_return_to_pool_restores_exact_n(template, tmp_path):
    ctx = make(template, tmp_path, speed_floor_share=0.0)
    db, settings = ctx.database, ctx.settings
    first = submit(ctx, "w0")
    assert submit(ctx, "w1") == first  # N = 2: the sequence is complete
    held = service.next_intent_task(db, settings, "w0")["task"]["sequence_id"]
    with pytest.raises(PermissionDenied):
        quality.block(db, "rev", "w0", "copies")
    with pytest.raises(ValidationError, match="block"):
        quality.return_to_pool(db, "boss", "w0")
    blocked = quality.block(db, "boss", "w0", "copies the actions")
    assert blocked["leases_released"] == 1 and db.scalar("SELECT disabled FROM users WHERE username = 'w0'") == 1
    assert service.next_intent_task(db, settings, "w2")["task"]["sequence_id"] == held  # the slot is free now
    returned = quality.return_to_pool(db, "boss", "w0")
    assert returned["returned"] == [f"intent:{first}"]
    assert db.scalar("SELECT status FROM tasks WHERE kind = 'intent' AND item_id = ?", (first,)) == "open"
    assert db.scalar("SELECT count(*) FROM annotations WHERE annotator = 'w0' AND source = 'live'") == 0
    assert db.scalar("SELECT count(*) FROM returned_submissions WHERE annotator = 'w0'") == 1
    assert submit(ctx, "w2") == held
    assert submit(ctx, "w2") == first  # the returned slot is handed out again (closest to completion first)
    assert live_submissions(ctx)[first] == 2
    assert db.scalar("SELECT status FROM tasks WHERE kind = 'intent' AND item_id = ?", (first,)) == "complete"


def test_no_sequence_ever_holds_more_than_n_and_none_is_stranded(template, tmp_path):
    """Random workers, blocks and returns over a small pool: after every step no task counts more than N
    submissions; in the end every task is complete with exactly N (the returned ones were handed out again)."""
    ctx = make(template, tmp_path, speed_floor_share=0.0, gold_rate=0.2)
    db, settings = ctx.database, ctx.settings
    with db.write() as w:  # a small pool: 12 sequences, N = 2
        keep = [r[0] for r in w.conn.execute("SELECT item_id FROM tasks WHERE kind = 'intent' ORDER BY rowid LIMIT 12")]
        gold_ids = [
            r[0] for r in w.conn.execute("SELECT item_id FROM tasks WHERE kind = 'intent' ORDER BY rowid DESC LIMIT 3")
        ]
        w.conn.execute(
            f"DELETE FROM tasks WHERE kind = 'intent' AND item_id NOT IN ({','.join('?' * 15)})", (*keep, *gold_ids)
        )
    release_as_reference(db, gold_ids)
    gold.add_gold(db, "rev", "intent", gold_ids)
    rng = random.Random(7)
    workers = [f"w{i}" for i in range(8)]
    blocked: set[str] = set()
    for step in range(200):
        active = [w for w in workers if w not in blocked]
        who = rng.choice(active)
        task = service.next_intent_task(db, settings, who)["task"]
        if task is not None:
            service.submit_intents(db, settings, who, task["sequence_id"], *GOOD)
        if step in (15, 40) and len(active) > 3:
            victim = rng.choice(active)
            quality.block(db, "boss", victim, "test")
            quality.return_to_pool(db, "boss", victim)
            blocked.add(victim)
        assert max(live_submissions(ctx).values(), default=0) <= 2
    while True:  # the remaining workers drain the pool
        progressed = False
        for who in (w for w in workers if w not in blocked):
            task = service.next_intent_task(db, settings, who)["task"]
            if task is not None:
                service.submit_intents(db, settings, who, task["sequence_id"], *GOOD)
                progressed = True
        if not progressed:
            break
    counts = live_submissions(ctx)
    assert all(counts[s] == 2 for s in keep), {s: counts[s] for s in keep}
    assert db.scalar("SELECT count(*) FROM tasks WHERE kind = 'intent' AND status = 'open'") == 0
    assert db.scalar("SELECT count(*) FROM returned_submissions") > 0
    pairs = db.query("SELECT sequence_id, annotator FROM annotations WHERE source = 'live'")
    assert len({(p["sequence_id"], p["annotator"]) for p in pairs}) == len(pairs)


def test_planning_gold_is_scored_against_the_validated_key(tmp_path):
    from backend.planning.validation import next_question, submit_check
    from tests.planning_helpers import planning_context

    ctx = planning_context(tmp_path, VILPACT_DATA, gold_rate=0.5, speed_floor_seconds=0.0, quality_pause_after=0)
    add_people(ctx.database, ["p1"])
    ids = gold.candidates(ctx.database, "rev", "planning", limit=3)
    assert len(ids) == 3
    gold.add_gold(ctx.database, "rev", "planning", ids)
    seen = []
    for _ in range(4):
        task = next_question(ctx.database, "p1", 20, ctx.settings)
        question = task.question
        seen.append(question.id)
        wrong = (question.answer_index + 1) % len(question.choices)
        submit_check(ctx.database, "p1", question.id, question.answer_index if len(seen) % 2 else wrong)
    next_question(ctx.database, "p1", 20, ctx.settings)  # the hand-out scores what came in
    outcomes = {
        r["item_id"]: r["outcome"] for r in ctx.database.query("SELECT * FROM gold_answers WHERE outcome IS NOT NULL")
    }
    assert len(outcomes) == 2 and set(outcomes) <= set(ids)
    for position, qid in enumerate(seen, start=1):
        if qid in outcomes:
            assert outcomes[qid] == ("correct" if position % 2 else "wrong")
    # gold planning questions left the pool: nobody checks them as real questions
    assert {
        r["status"]
        for r in ctx.database.query(
            "SELECT status FROM tasks WHERE kind = 'planning' AND item_id IN (?, ?, ?)", tuple(ids)
        )
    } <= {"gold", "complete"}


def test_no_video_no_too_fast_flag(template, tmp_path):
    """Sequences imported without a video are read from their actions: a quick answer there is no flag (issue 40)."""
    ctx = make(template, tmp_path, speed_floor_share=1.0, quality_pause_after=3)
    assert ctx.database.scalar("SELECT count(*) FROM sequences WHERE video_path IS NOT NULL") == 0
    for _ in range(4):
        submit(ctx, "w3")
    with ctx.database.write() as db:
        quality.check_worker(db, ctx.settings, "w3")
    assert quality.flags(ctx.database, "rev") == []
    assert ctx.database.scalar("SELECT state FROM worker_quality WHERE username = 'w3'") in (None, "active")
