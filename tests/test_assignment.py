"""The shared exact-N lease pool, on a real SQLite file under threads."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from backend import assignment
from backend.errors import LeaseLost, NotFound, ValidationError


@pytest.fixture
def pool(database):
    with database.write() as db:
        assignment.add_tasks(db, "demo", [f"item{i}" for i in range(10)], needed=3)
    return database


def lease(database, who, minutes=20.0):
    with database.write() as db:
        return assignment.next_task(db, "demo", who, minutes)


def submit(database, item, who):
    with database.write() as db:
        row, already = assignment.claim_for_submit(db, "demo", item, who)
        if not already:
            assignment.finish(db, row["id"], "submitted")
        return already


def test_same_task_until_submitted_then_never_again(pool):
    first = lease(pool, "ann")
    assert lease(pool, "ann").item_id == first.item_id  # a reload gets the same task
    assert submit(pool, first.item_id, "ann") is False
    assert submit(pool, first.item_id, "ann") is True  # a retry is recognised, not stored twice
    seen = {first.item_id}
    while (task := lease(pool, "ann")) is not None:
        assert task.item_id not in seen
        seen.add(task.item_id)
        submit(pool, task.item_id, "ann")
    assert len(seen) == 10


def test_never_beyond_n_counting_live_leases(pool):
    holders = Counter()
    for who in ["a", "b", "c", "d"]:
        holders[lease(pool, who).item_id] += 1
    # The first three fill item0 (closest to completion first); the fourth gets another item.
    assert holders == Counter({"item0": 3, "item1": 1})


def test_expired_lease_returns_to_the_pool(pool):
    for who in ["a", "b", "c"]:
        assert lease(pool, who, minutes=0.002).item_id == "item0"
    assert lease(pool, "d").item_id == "item1"  # item0 is full counting live leases
    time.sleep(0.2)  # the three leases on item0 run out
    assert [lease(pool, who).item_id for who in ["e", "f", "g"]] == ["item1", "item1", "item0"]
    assert submit(pool, "item0", "a") is False  # late, but a slot is still free: accepted
    assert lease(pool, "h").item_id == "item0"  # a (submitted) + g + h = 3
    with pytest.raises(LeaseLost, match="went to another annotator"):
        submit(pool, "item0", "b")
    assert pool.scalar("SELECT count(*) FROM assignments WHERE item_id='item0' AND status='submitted'") == 1


def test_late_submit_accepted_while_a_slot_is_free(pool):
    task = lease(pool, "a", minutes=0.001)
    time.sleep(0.1)
    assert submit(pool, task.item_id, "a") is False


def test_skip_needs_a_reason_and_frees_the_slot(pool):
    task = lease(pool, "a")
    with pytest.raises(ValidationError, match="say why"):
        with pool.write() as db:
            assignment.skip(db, "demo", task.item_id, "a", "  ")
    with pool.write() as db:
        assignment.skip(db, "demo", task.item_id, "a", "video does not play")
    assert lease(pool, "a").item_id != task.item_id
    with pytest.raises(NotFound):
        submit(pool, "item9", "nobody")


def test_task_completes_with_n_submissions(pool):
    for who in ["a", "b", "c"]:
        submit(pool, lease(pool, who).item_id, who)
    assert pool.scalar("SELECT status FROM tasks WHERE item_id='item0'") == "complete"
    assert lease(pool, "d").item_id == "item1"


def test_concurrent_annotators_get_exactly_n_distinct(pool):
    """12 threads race for 10 items x 3 slots: every item ends with exactly 3 distinct annotators."""
    done: list[tuple[str, str]] = []
    lock = threading.Lock()

    def annotator(name: str) -> None:
        while (task := lease(pool, name)) is not None:
            submit(pool, task.item_id, name)
            with lock:
                done.append((task.item_id, name))

    threads = [threading.Thread(target=annotator, args=(f"w{i}",)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    per_item = Counter(item for item, _ in done)
    assert per_item == Counter({f"item{i}": 3 for i in range(10)})
    assert len(set(done)) == len(done)  # nobody got an item twice
    rows = pool.query(
        "SELECT item_id, count(DISTINCT annotator) AS n FROM assignments WHERE status='submitted' GROUP BY item_id"
    )
    assert {r["n"] for r in rows} == {3}


def test_left_for_counts_what_this_annotator_can_still_be_handed(database):
    with database.write() as db:
        assignment.add_tasks(db, "demo", ["a", "b", "c"], needed=2)
    left = lambda who: assignment.left_for(database.db, "demo", who)  # noqa: E731
    assert left("ann") == 3
    for _ in range(3):  # ann does all three: the pool still needs a second person for each, ann has none left
        submit(database, lease(database, "ann").item_id, "ann")
    assert left("ann") == 0
    assert assignment.pool_progress(database.db, "demo", "ann")["left_in_pool"] == 3
    assert left("bob") == 3
    held = lease(database, "bob")  # bob's live lease fills the last slot of his task: still his
    assert left("bob") == 3 and left("cat") == 2  # ...and not cat's
    with database.write() as db:
        assignment.skip(db, "demo", held.item_id, "bob", "cannot see the video")
    assert left("bob") == 2 and left("cat") == 3


def test_left_for_counts_what_this_annotator_may_still_do(pool):
    """The pool keeps 10 open tasks (each needs 3 people) while one annotator works through them: the count
    they are shown falls with each of their submits and skips, their current lease included."""

    def counts(who):
        db = pool.db
        return assignment.pool_progress(db, "demo", who)["left_in_pool"], assignment.left_for(db, "demo", who)

    assert counts("ann") == (10, 10)
    for done in range(3):
        submit(pool, lease(pool, "ann").item_id, "ann")
        assert counts("ann") == (10, 9 - done)
    current = lease(pool, "ann")
    assert counts("ann") == (10, 7)  # a lease is still left to do
    with pool.write() as db:
        assignment.skip(db, "demo", current.item_id, "ann", "the video does not play")
    assert counts("ann") == (10, 6) and counts("bob") == (10, 10)
