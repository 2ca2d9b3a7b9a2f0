"""Review queue, judgments, final selection, round transitions and the dashboard."""

from __future__ import annotations

import pytest

from backend import assignment
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.intents import service as intents
from backend.review import dashboard
from backend.review import service as review
from tests.review_helpers import add_people, add_sequences, annotate_all, judge_all

ROUND_1 = ["a1", "a2", "a3"]
ROUND_2 = ["b1", "b2", "b3"]
ROUND_3 = ["c1", "c2", "c3"]


def _first_reasonable(item: dict, verdicts: list[bool]) -> review.FinalChoice:
    chosen = item["annotations"][verdicts.index(True)]["annotation_id"]
    return review.FinalChoice(chosen, chosen)


def _review_queue(database, settings, reviewer: str, verdicts: dict[str, list[bool]]) -> list[str]:
    """The reviewer works through the queue; returns the sequence ids in the order reviewed."""
    seen = []
    item = review.next_review(database, settings, reviewer)["item"]
    while item is not None:
        wanted = verdicts[item["sequence_id"]]
        final = _first_reasonable(item, wanted) if any(wanted) else None
        review.submit_review(
            database,
            settings,
            reviewer,
            item["sequence_id"],
            item["round"],
            judge_all(item, wanted, comment="say why, not what"),
            final,
            note="be specific",
        )
        seen.append(item["sequence_id"])
        item = review.next_review(database, settings, reviewer)["item"]
    return seen


@pytest.fixture
def people(database):
    add_people(database, annotators=ROUND_1 + ROUND_2 + ROUND_3, reviewers=["rev"], admins=["boss"])


def test_queue_holds_only_complete_sequences_and_hides_names(database, settings, people):
    add_sequences(database, ["S1", "S2"])
    annotate_all(database, settings, ROUND_1[:2])  # two of three: nothing complete yet
    assert review.next_review(database, settings, "rev")["item"] is None
    annotate_all(database, settings, ROUND_1[2:])
    item = review.next_review(database, settings, "rev")["item"]
    assert item["round"] == 1 and item["timeline"][0].startswith("Opening a door")
    assert [a["label"] for a in item["annotations"]] == ["Annotator A", "Annotator B", "Annotator C"]
    named = review.item_view(database, settings, item["sequence_id"], 1, show_names=True)
    assert sorted(a["label"] for a in named["annotations"]) == ROUND_1
    # the same item on reload, and a second reviewer (admin) gets the other one
    assert review.next_review(database, settings, "rev")["item"]["sequence_id"] == item["sequence_id"]
    other = review.next_review(database, settings, "boss")["item"]
    assert other["sequence_id"] != item["sequence_id"]


def test_three_rounds_returns_discards_and_dashboard_matches_hand_counts(database, settings, people):
    add_sequences(database, ["S1", "S2", "S3", "S4"])
    annotate_all(database, settings, ROUND_1)
    reviewed = _review_queue(
        database,
        settings,
        "rev",
        {"S1": [True, False, True], "S2": [False] * 3, "S3": [False] * 3, "S4": [False, True, False]},
    )
    assert sorted(reviewed) == ["S1", "S2", "S3", "S4"]

    # S2 and S3 are back in the pool as round 2, only for people who have not seen them
    for name in ROUND_1:
        assert intents.next_intent_task(database, settings, name)["task"] is None
    task = intents.next_intent_task(database, settings, "b1")["task"]
    assert task["round"] == 2 and "say why, not what" in task["guidance"] and "be specific" in task["guidance"]
    annotate_all(database, settings, ROUND_2)
    _review_queue(database, settings, "rev", {"S2": [True, True, False], "S3": [False] * 3})
    annotate_all(database, settings, ROUND_3)
    task_s3 = database.query_one("SELECT * FROM tasks WHERE kind = 'intent' AND item_id = 'S3'")
    assert task_s3["round"] == 3 and task_s3["guidance"].count("review: no intent was judged reasonable") == 2
    _review_queue(database, settings, "rev", {"S3": [False] * 3})

    status = {r["item_id"]: r["status"] for r in database.query("SELECT * FROM tasks WHERE kind = 'intent'")}
    assert status == {"S1": "accepted", "S2": "accepted", "S3": "discarded", "S4": "accepted"}
    assert database.scalar("SELECT count(*) FROM sequences WHERE id = 'S3'") == 1  # discarded, not deleted
    assert database.scalar("SELECT count(*) FROM annotations WHERE sequence_id = 'S3'") == 9

    figures = dashboard.dashboard(database, "rev")
    by_round = {r["round"]: r for r in figures["rounds"]}
    # by hand: round 1 -> 4 sequences, 2 with a reasonable annotation; 12 annotations, 3 reasonable
    assert (by_round[1]["sequences_reviewed"], by_round[1]["sequences_accepted"]) == (4, 2)
    assert (by_round[1]["annotations_judged"], by_round[1]["annotations_reasonable"]) == (12, 3)
    assert (by_round[1]["sequences_accepted_share"], by_round[1]["annotations_reasonable_share"]) == (0.5, 0.25)
    assert (by_round[2]["sequences_accepted_share"], by_round[2]["annotations_reasonable_share"]) == (0.5, 0.3333)
    assert (by_round[3]["sequences_discarded"], by_round[3]["sequences_accepted_share"]) == (1, 0.0)
    annotators = {r["annotator"]: r for r in figures["annotators"]}
    # a1 judged in S1..S4 round 1: reasonable in S1 only (position 0) -> 1 of 4
    assert annotators["a1"]["submissions"] == 4 and annotators["a1"]["acceptance_rate"] == 0.25
    assert annotators["c1"]["acceptance_rate"] == 0.0 and annotators["a1"]["median_seconds_per_task"] is not None
    assert figures["totals"]["discarded"] == 1 and figures["totals"]["final_sequences"] == 3


def test_final_selection_records_edits_and_keeps_originals(database, settings, people):
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    item = review.next_review(database, settings, "rev")["item"]
    first, second, third = (a["annotation_id"] for a in item["annotations"])
    choice = review.FinalChoice(first, third, concrete_intent="S/He wants to drink a cold glass of water")
    review.submit_review(database, settings, "rev", "S1", 1, judge_all(item, [True, True, True]), choice)
    rows = review.final_intents(database, "rev", "S1")
    assert [r["position"] for r in rows] == [1, 2]
    top = rows[0]
    assert top["edited"] == 1 and top["concrete_intent"] == "S/He wants to drink a cold glass of water"
    assert top["original_concrete_intent"] == item["annotations"][0]["concrete_intent"]
    assert top["high_level_intent"] == top["original_high_level_intent"] == item["annotations"][2]["high_level_intent"]
    assert rows[1]["edited"] == 0 and rows[1]["concrete_from"] == rows[1]["high_level_from"] == second
    audit = database.query_one("SELECT * FROM audit_log WHERE action = 'review.decision'")
    assert audit["actor"] == "rev" and "cold glass" in audit["detail"]


def test_invalid_reviews_are_refused_with_reasons(database, settings, people):
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    item = review.next_review(database, settings, "rev")["item"]
    ids = [a["annotation_id"] for a in item["annotations"]]
    with pytest.raises(ValidationError, match="judge every annotation"):
        review.submit_review(database, settings, "rev", "S1", 1, judge_all(item, [True, False, True])[:2])
    with pytest.raises(ValidationError, match="select the final"):
        review.submit_review(database, settings, "rev", "S1", 1, judge_all(item, [True, False, True]))
    with pytest.raises(ValidationError, match="judged reasonable"):
        review.submit_review(
            database, settings, "rev", "S1", 1, judge_all(item, [True, False, True]), review.FinalChoice(ids[1], ids[1])
        )
    with pytest.raises(ValidationError, match="must start with"):
        review.submit_review(
            database,
            settings,
            "rev",
            "S1",
            1,
            judge_all(item, [True, False, True]),
            review.FinalChoice(ids[0], ids[0], concrete_intent="drink water"),
        )
    with pytest.raises(NotFound):  # not leased to this admin
        review.submit_review(database, settings, "boss", "S1", 1, judge_all(item, [False] * 3))
    assert database.scalar("SELECT count(*) FROM reviews") == 0


def test_repeated_submit_is_idempotent(database, settings, people):
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    item = review.next_review(database, settings, "rev")["item"]
    args = (database, settings, "rev", "S1", 1, judge_all(item, [False] * 3))
    first = review.submit_review(*args)
    again = review.submit_review(*args)
    assert again["duplicate"] and again["review"]["id"] == first["review"]["id"]
    assert database.scalar("SELECT round FROM tasks WHERE kind = 'intent' AND item_id = 'S1'") == 2


def test_unsubmitted_leases_are_closed_when_a_round_returns(database, settings, people):
    add_sequences(database, ["S1"], needed=2)
    assert intents.next_intent_task(database, settings, "c1")["task"]["sequence_id"] == "S1"  # holds a lease
    with database.write() as db:  # let c1's lease run out so a1 and a2 can finish the round
        db.conn.execute("UPDATE assignments SET expires_at = '2000-01-01' WHERE annotator = 'c1'")
    annotate_all(database, settings, ROUND_1[:2])
    item = review.next_review(database, settings, "rev")["item"]
    review.submit_review(database, settings, "rev", "S1", 1, judge_all(item, [False, False]))
    assert intents.next_intent_task(database, settings, "c1")["task"] is None  # c1 has seen S1
    assert intents.next_intent_task(database, settings, "b1")["task"]["round"] == 2


def test_check_reviews_feed_agreement_but_do_not_change_the_outcome(database, settings, people):
    from backend.review import agreement

    add_people(database, reviewers=["rev2"])
    settings = settings.replace(review_check_share=1.0)
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    item = review.next_review(database, settings, "rev")["item"]
    review.submit_review(
        database,
        settings,
        "rev",
        "S1",
        1,
        judge_all(item, [True, True, False]),
        _first_reasonable(item, [True, True, False]),
    )
    item2 = review.next_review(database, settings, "rev2")["item"]
    assert item2["sequence_id"] == "S1" and review.next_review(database, settings, "rev")["item"] is None
    result = review.submit_review(database, settings, "rev2", "S1", 1, judge_all(item2, [True, False, False]))
    assert result["review"]["role"] == "check" and result["review"]["outcome"] is None
    assert database.scalar("SELECT count(*) FROM final_intents WHERE sequence_id = 'S1'") == 2
    # by hand: rev = 1 1 0, rev2 = 1 0 0 -> p_o = 2/3, p_e = 2/3*1/3 + 1/3*2/3 = 4/9, kappa = (2/9)/(5/9) = 0.4
    figures = agreement.reviewer_agreement(database, "rev")
    assert figures["items"] == 3 and figures["pairs"][0]["cohen_kappa"] == pytest.approx(0.4)
    # alpha by hand: coincidences (ordered pairs within items) o11 = 2, o10 = o01 = 1, o00 = 2; n = 6,
    # n0 = n1 = 3: D_o = 2/6, D_e = 2*3*3/(6*5) = 0.6, alpha = 1 - (1/3)/0.6 = 4/9
    assert figures["krippendorff_alpha"] == pytest.approx(4 / 9, abs=1e-4)


def test_skip_gives_the_item_back(database, settings, people):
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    assert review.next_review(database, settings, "rev")["item"]["sequence_id"] == "S1"
    with pytest.raises(ValidationError):
        review.skip_review(database, settings, "rev", "S1", 1, "")
    assert review.skip_review(database, settings, "rev", "S1", 1, "I wrote one of these")["item"] is None
    assert review.next_review(database, settings, "boss")["item"]["sequence_id"] == "S1"


def test_annotators_are_refused_everywhere(database, settings, people, tmp_path):
    from backend.review import agreement, inspection, publish

    add_sequences(database, ["S1"])
    calls = [
        lambda u: review.next_review(database, settings, u),
        lambda u: review.submit_review(database, settings, u, "S1", 1, []),
        lambda u: review.skip_review(database, settings, u, "S1", 1, "x"),
        lambda u: review.final_intents(database, u, "S1"),
        lambda u: dashboard.dashboard(database, u),
        lambda u: agreement.semantic_agreement(database, settings, u, embed=lambda t: None),
        lambda u: agreement.reviewer_agreement(database, u),
        lambda u: agreement.compare_reviewer_groups(database, u, ["a"], ["b"]),
        lambda u: agreement.compare_rounds(database, u, 1, 2),
        lambda u: agreement.compare_columns(database, u, "a,b\n1,2\n"),
        lambda u: inspection.start_inspection(database, settings, u),
        lambda u: inspection.list_inspections(database, u),
        lambda u: inspection.next_item(database, u, 1),
        lambda u: inspection.judge(database, u, 1, "S1", inspection.InspectionJudgment(True, True, True)),
        lambda u: inspection.report(database, u, 1),
        lambda u: publish.export_for_download(database, settings, u, "jsonl"),
        lambda u: publish.publish_dataset(database, settings, u, "team/data", api=object()),
    ]
    for call in calls:
        for user in ("a1", None, "nobody"):
            with pytest.raises(PermissionDenied):
                call(user)
    with pytest.raises(PermissionDenied):  # publishing is for admins only
        publish.publish_dataset(database, settings, "rev", "team/data", api=object())
    assert assignment.pool_progress(database.db, "review", "a1")["mine_total"] == 0


def test_nobody_reviews_a_round_they_annotated(database, settings, people):
    add_sequences(database, ["S1"], needed=2)
    annotate_all(database, settings, ["a1", "boss"])  # an admin may annotate too
    assert review.next_review(database, settings, "boss")["item"] is None
    assert review.next_review(database, settings, "rev")["item"]["sequence_id"] == "S1"


def test_counts_are_right_before_anybody_asked_and_leave_nothing_leased(database, settings, people):
    """Issue 13 §3: the queue count is right when the tab opens (no Next item yet), and the rounds a
    reviewer may not take (another reviewer holds them, or they annotated them) are told apart."""
    add_people(database, reviewers=["rev2"])
    add_sequences(database, ["S1", "S2"])
    annotate_all(database, settings, ROUND_1)
    assert review.review_counts(database, settings, "rev") == {"waiting": 2, "for_you": 2}
    assert database.scalar("SELECT count(*) FROM assignments WHERE kind = 'review'") == 0  # looking leases nothing
    held = review.next_review(database, settings, "rev2")
    assert (held["queue"], held["for_you"]) == (2, 2)  # the one rev2 holds is theirs
    assert review.review_counts(database, settings, "rev") == {"waiting": 2, "for_you": 1}
    mine = review.next_review(database, settings, "rev")
    assert mine["item"]["sequence_id"] != held["item"]["sequence_id"] and mine["for_you"] == 1
    # an annotator of the round who is also a reviewer may take neither round
    with database.write() as db:
        db.conn.execute("UPDATE users SET role = 'reviewer' WHERE username = 'a1'")
    assert review.review_counts(database, settings, "a1") == {"waiting": 2, "for_you": 0}
    with pytest.raises(PermissionDenied):
        review.review_counts(database, settings, "b1")


def test_opening_the_review_tab_is_a_read_once_the_rounds_have_their_tasks(database, settings, people):
    """review_counts writes only to add a complete round's review task; after that it counts while another
    connection holds the write lock (a read-only look must never queue behind writers)."""
    import sqlite3

    from backend.storage import Database

    add_sequences(database, ["S1"])
    annotate_all(database, settings, ROUND_1)
    assert review.review_counts(database, settings, "rev") == {"waiting": 1, "for_you": 1}  # adds the task
    writer = sqlite3.connect(settings.db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # somebody else is writing
    try:
        impatient = Database(settings.db_path, busy_timeout_ms=50)
        assert review.review_counts(impatient, settings, "rev") == {"waiting": 1, "for_you": 1}
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_esc_escapes_once():
    from components.common import esc

    assert esc("the first group's <b> & sentence-transformers/x") == (
        "the first group&#39;s &lt;b&gt; &amp; sentence&#45;transformers/x"
    )
