"""The intent-annotation service on demo content: the rules the UI and the API share."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from review_helpers import handed_ago

from backend.accounts import auth
from backend.errors import PermissionDenied, ValidationError
from backend.intents import service
from backend.intents.export import export_intents
from backend.intents.watching import merge_ranges
from backend.vilpact.demo import ensure_demo_content
from backend.vilpact.video import video_facts

GOOD = ("S/He wants to have a drink", "S/He is thirsty")


@pytest.fixture
def demo(demo_ctx):
    ctx = demo_ctx
    for name in ("ann1", "ann2"):
        auth.add_user(ctx.database, name, "annotator", "password1")
    auth.add_user(ctx.database, "off", "annotator", "password1")
    auth.set_disabled(ctx.database, "off")
    return ctx


def test_demo_content_is_labelled_playable_and_idempotent(demo):
    assert ensure_demo_content(demo) == 0
    task = service.next_intent_task(demo.database, demo.settings, "ann1")["task"]
    assert task["source"] == "demo" and task["video"].endswith(".mp4") and not task["video_missing"]
    import av

    with av.open(task["video"]) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and stream.codec_context.pix_fmt == "yuv420p"
        assert stream.width % 2 == 0 and stream.height % 2 == 0


def test_submit_needs_the_video_watched_and_valid_intents(demo):
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    assert task["must_view"]
    with pytest.raises(ValidationError, match="Watched 0% of the video: play at least 95%"):
        service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD)
    handed_ago(db, task["sequence_id"], 60)
    service.mark_viewed(db, settings, "ann1", task["sequence_id"], 1.0)
    with pytest.raises(ValidationError) as caught:
        service.submit_intents(db, settings, "ann1", task["sequence_id"], "drink water", "drink water")
    assert len(caught.value.problems) == 3  # two bad forms + not different
    result = service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD)
    assert result["stored"]["concrete_intent"] == GOOD[0] and result["duplicate"] is False
    assert result["task"]["sequence_id"] != task["sequence_id"]
    assert result["progress"]["mine_total"] == 1 and result["progress"]["mine_today"] == 1
    again = service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD)
    assert again["duplicate"] is True
    assert db.scalar("SELECT count(*) FROM annotations WHERE source='live'") == 1
    audit = db.query_one("SELECT actor, action, target, detail FROM audit_log WHERE action='intent.submit'")
    assert audit["actor"] == "ann1" and json.loads(audit["detail"])["high_level_intent"] == GOOD[1]


def test_intent_problems_says_what_submit_would_refuse_and_stores_nothing(demo):
    """The page's check before the queued submit (issue 17): the same problems, no write, roles checked."""
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    problems = service.intent_problems(db, settings, "ann1", task["sequence_id"], "drink water", "drink water")
    handed_ago(db, task["sequence_id"], 60)
    service.mark_viewed(db, settings, "ann1", task["sequence_id"], 1.0)
    with pytest.raises(ValidationError) as caught:
        service.submit_intents(db, settings, "ann1", task["sequence_id"], "drink water", "drink water")
    assert problems == caught.value.problems and len(problems) == 3
    assert service.intent_problems(db, settings, "ann1", task["sequence_id"], *GOOD) == []
    assert db.scalar("SELECT count(*) FROM annotations WHERE source='live'") == 0
    with pytest.raises(PermissionDenied):
        service.intent_problems(db, settings, None, task["sequence_id"], *GOOD)


def test_the_watched_share_sent_with_the_submit_is_checked_by_the_server(demo):
    """Issue 27 §4: the player's played ranges (a share of the video) come with the submit; too little is refused
    with how much was watched, and reporting too little through intent_viewed records nothing."""
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    with pytest.raises(ValidationError, match="Watched 62% of the video: play at least 95%"):
        service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD, watched_share=0.62)
    with pytest.raises(ValidationError, match="Watched 40%"):
        service.mark_viewed(db, settings, "ann1", task["sequence_id"], 0.4)
    with pytest.raises(ValidationError, match="from 0 to 1"):
        service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD, watched_share=7)
    assert db.scalar("SELECT viewed_at FROM assignments WHERE item_id = ?", (task["sequence_id"],)) is None
    handed_ago(db, task["sequence_id"], 60)
    stored = service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD, watched_share=0.96)
    assert stored["duplicate"] is False
    lower = settings.replace(full_view_share=0.5)
    second = stored["task"]
    handed_ago(db, second["sequence_id"], 60)
    assert service.submit_intents(db, lower, "ann1", second["sequence_id"], *GOOD, watched_share=0.5)["stored"]


def test_a_share_claimed_sooner_than_the_video_can_play_at_2x_is_refused(demo):
    """The share comes from the browser; the time since the lease comes from the server. Playing 95% of a video
    of d seconds takes 0.95 × d / 2 seconds even at 2×: a claim of 100% sooner than that is refused, for the
    submit and for intent_viewed, and accepted once that long has passed."""
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    sequence_id = task["sequence_id"]
    from backend.vilpact.video import video_facts

    duration = video_facts(task["video"]).duration
    need = 0.95 * duration / 2
    assert need > 1  # the demo videos are long enough for the floor to bite
    with pytest.raises(ValidationError, match=rf"Submitted 0.0 s after this task was handed out: playing 95% of this "
                                              rf"{duration:.1f} s video takes at least {need:.1f} s, even at 2×"):  # fmt: skip
        service.submit_intents(db, settings, "ann1", sequence_id, *GOOD, watched_share=1.0)
    with pytest.raises(ValidationError, match="even at 2×"):
        service.mark_viewed(db, settings, "ann1", sequence_id, 1.0)
    assert db.scalar("SELECT count(*) FROM annotations WHERE source='live'") == 0
    handed_ago(db, sequence_id, need - service.WATCH_CLOCK_SLACK_S + 0.05)
    service.mark_viewed(db, settings, "ann1", sequence_id, 1.0)
    assert service.submit_intents(db, settings, "ann1", sequence_id, *GOOD)["duplicate"] is False  # viewed: enough
    off = settings.replace(require_full_view=False)
    nxt = service.next_intent_task(db, off, "ann1")["task"]
    assert service.submit_intents(db, off, "ann1", nxt["sequence_id"], *GOOD)["stored"]  # the check is off: no floor


def test_require_full_view_can_be_turned_off(demo):
    settings = demo.settings.replace(require_full_view=False)
    task = service.next_intent_task(demo.database, settings, "ann1")["task"]
    assert not task["must_view"]
    service.submit_intents(demo.database, settings, "ann1", task["sequence_id"], *GOOD)


def test_drafts_survive_a_reload(demo):
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    service.save_draft(db, "ann1", task["sequence_id"], "S/He wants to", "half a tho")
    reloaded = service.next_intent_task(db, settings, "ann1")["task"]
    assert reloaded["sequence_id"] == task["sequence_id"]
    assert reloaded["draft"] == {"concrete_intent": "S/He wants to", "high_level_intent": "half a tho"}
    with pytest.raises(ValidationError, match="not handed to you"):
        service.save_draft(db, "ann2", "DEMO-SHOES", "x", "y")
    # saves stamped with the browser's clock: one that arrives late with older text never wins
    assert service.save_draft(db, "ann1", task["sequence_id"], "", "S/He is tired", client_ms=2_000)
    assert service.save_draft(db, "ann1", task["sequence_id"], "", "S/He", client_ms=1_000) is None
    assert service.save_draft(db, "ann1", task["sequence_id"], "", "S/He is tired now", client_ms=3_000)
    assert service.next_intent_task(db, settings, "ann1")["task"]["draft"]["high_level_intent"] == "S/He is tired now"
    # a late save (the page closing while the submit is on its way) keeps nothing for a submitted sequence
    settings = settings.replace(require_full_view=False)
    service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD)
    assert service.save_draft(db, "ann1", task["sequence_id"], "S/He wants to", "late") is None
    assert db.scalar("SELECT count(*) FROM drafts WHERE item_id = ?", (task["sequence_id"],)) == 0


def test_played_ranges_are_kept_with_the_lease_and_come_back_on_reload(demo):
    """Issue 44 §3: what the player sent is joined with what was kept, clipped to the video, handed back with the
    task, and does not make a draft; the text draft and the ranges do not overwrite each other."""
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    sid = task["sequence_id"]
    assert task["played"] == [] and task["draft"] is None
    assert service.save_played(db, settings, "ann1", sid, [[0, 1.5], [3, 4]]) == [[0.0, 1.5], [3.0, 4.0]]
    reloaded = service.next_intent_task(db, settings, "ann1")["task"]
    assert reloaded["draft"] is None  # ranges alone are no draft
    assert service.save_played(db, settings, "ann1", sid, [[1, 3.5], [-2, 0.5], [2, "x"]]) == [[0.0, 4.0]]
    service.save_draft(db, "ann1", sid, "S/He wants to", "")
    duration = video_facts(task["video"]).duration
    assert service.save_played(db, settings, "ann1", sid, [[duration - 0.5, 99999]])[-1][1] == duration  # clipped
    reloaded = service.next_intent_task(db, settings, "ann1")["task"]
    assert reloaded["played"] == merge_ranges([[0, 4], [duration - 0.5, duration]])
    assert reloaded["draft"]["concrete_intent"] == "S/He wants to"
    with pytest.raises(ValidationError, match="not handed to you"):
        service.save_played(db, settings, "ann2", sid, [[0, 1]])
    with pytest.raises(ValidationError, match="at most"):
        service.save_played(db, settings, "ann1", sid, [[i, i + 0.5] for i in range(500)])
    service.skip_intent_task(db, settings, "ann1", sid, "the test skips it")
    assert service.save_played(db, settings, "ann1", sid, [[0, 1]]) is None  # no longer theirs: nothing kept


def test_skip_with_reason(demo):
    db, settings = demo.database, demo.settings
    task = service.next_intent_task(db, settings, "ann1")["task"]
    with pytest.raises(ValidationError, match="say why"):
        service.skip_intent_task(db, settings, "ann1", task["sequence_id"], "")
    result = service.skip_intent_task(db, settings, "ann1", task["sequence_id"], "The video is black")
    assert result["task"]["sequence_id"] != task["sequence_id"]
    assert (
        db.scalar("SELECT skip_reason FROM assignments WHERE annotator='ann1' AND status='skipped'")
        == "The video is black"
    )


def test_roles_are_checked_on_every_call(demo):
    db, settings = demo.database, demo.settings
    for who in (None, "ghost", "off"):
        with pytest.raises(PermissionDenied):
            service.next_intent_task(db, settings, who)
        with pytest.raises(PermissionDenied):
            service.submit_intents(db, settings, who, "DEMO-WATER", *GOOD)
    assert db.scalar("SELECT count(*) FROM assignments") == 0


def test_a_missing_video_is_flagged(demo):
    db, settings = demo.database, demo.settings
    with db.write() as conn:
        conn.conn.execute("UPDATE sequences SET video_path = '/nowhere/x.mp4'")
    task = service.next_intent_task(db, settings, "ann1")["task"]
    assert task["video"] is None and task["video_missing"] and not task["must_view"]
    service.submit_intents(db, settings, "ann1", task["sequence_id"], *GOOD)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_has_one_row_per_submitted_annotation(demo, tmp_path, fmt):
    db, settings = demo.database, demo.settings.replace(require_full_view=False)
    for who in ("ann1", "ann2"):
        task = service.next_intent_task(db, settings, who)["task"]
        service.submit_intents(db, settings, who, task["sequence_id"], *GOOD)
    out = tmp_path / f"intents.{fmt}"
    assert export_intents(db, fmt, out)["rows"] == 2
    frame = {"jsonl": lambda p: pd.read_json(p, lines=True), "csv": pd.read_csv, "parquet": pd.read_parquet}[fmt](out)
    for column in (
        "sequence_id",
        "annotator",
        "concrete_intent",
        "high_level_intent",
        "round",
        "submitted_at",
        "source",
    ):
        assert column in frame.columns
    assert sorted(frame["annotator"]) == ["ann1", "ann2"] and set(frame["source"]) == {"live"}
    with pytest.raises(ValidationError, match="unknown format"):
        export_intents(db, "xlsx", tmp_path / "x.xlsx")
