"""A place is held by a worker who works, not by a visit (issue 40 §1), on a real ViLPAct pool in SQLite.

The issue's attack: made-up Prolific ids from one address open the study link and sit in the qualification, and
real workers arriving later find the study full. Here 60 made-up ids from one address, then 20 real workers from
20 addresses, with a fake Prolific API (``httpx.MockTransport``: it knows the 20 real participants) and without
one: every real worker gets a place and finishes, the made-up ids hold nothing, and no item goes over N. And
places are taken atomically: 12 workers passing the qualification at once into 5 places start exactly 5.
"""

from __future__ import annotations

import threading
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from campaign_helpers import add_people, context_from_template, template_database

from backend.campaigns import links, studies, workers
from backend.campaigns.prolific_api import ProlificApi, participant_check
from backend.errors import ParticipantUnknown, StudyFull, TooManyArrivals, ValidationError
from backend.intents import service
from tests.conftest import VILPACT_DATA

N, TASKS, QUIZ, LIMIT = 2, 3, 3, 10
GOOD = ("S/He wants to have a drink", "S/He is thirsty")
TOKEN, PROLIFIC_STUDY = "fake-prolific-token", "6a00bb11cc22dd33ee44ff55"
FARMER = "203.0.113.66"
REAL = [f"{0x5F00AA11BB22CC33DD440000 + i:024x}" for i in range(20)]
MADE_UP = [f"{0xFA4E0000 + i:024x}" for i in range(60)]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return template_database(tmp_path_factory.mktemp("places-template"), VILPACT_DATA, annotators_per_sequence=N)


class FakeProlific:
    """Prolific's ``GET /api/v1/submissions/`` for one study: its participants' submissions, a page at a time; it
    ignores the participant filter (so the check must look at the results itself) and wants the token."""

    def __init__(self, participants: list[str], page_size: int = 7):
        self.participants, self.page_size, self.calls = participants, page_size, 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if request.headers.get("authorization") != f"Token {TOKEN}":
            return httpx.Response(401, json={"error": "bad token"})
        query = {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}
        if request.url.path != "/api/v1/submissions/" or query.get("study") != PROLIFIC_STUDY:
            return httpx.Response(200, json={"results": [], "_links": {"next": {"href": None}}})
        page = int(query.get("page", "1"))
        rows = [{"participant_id": p, "status": "ACTIVE", "study_id": PROLIFIC_STUDY} for p in self.participants]
        chunk = rows[(page - 1) * self.page_size : page * self.page_size]
        more = page * self.page_size < len(rows)
        nxt = f"https://api.prolific.test/api/v1/submissions/?study={PROLIFIC_STUDY}&page={page + 1}" if more else None
        return httpx.Response(200, json={"results": chunk, "_links": {"next": {"href": nxt}}})


def make(template, tmp_path):
    ctx = context_from_template(template, tmp_path / "data", speed_floor_share=0.0, study_arrivals_per_address=LIMIT)
    add_people(ctx.database, ["lab1"])
    return ctx


def new_study(ctx, **overrides):
    fields = {"name": "Pilot", "kind": "intents", "tasks_per_worker": TASKS, "completion_code": "DONE42",
              "screenout_code": "OUT7", "qualification_size": QUIZ, **overrides}  # fmt: skip
    return studies.create_study(ctx.database, "boss", **fields)


def arrive(ctx, study, pid, address, check=None):
    sig = links.study_signature(ctx.database.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id)
    visit = links.verify_visit(ctx.database, study, {"PROLIFIC_PID": pid, "STUDY_ID": PROLIFIC_STUDY, "sig": sig})
    return workers.arrive(ctx.database, ctx.settings, study, visit, address, check)


def qualify(ctx, study, worker):
    keys = {item.id: str(item.answer) for item in workers.quiz_for(study, worker)}
    return workers.take_qualification(ctx.database, worker.username, study.id, keys).worker


def work_to_the_end(ctx, username):
    while (reply := service.next_intent_task(ctx.database, ctx.settings, username))["task"] is not None:
        service.submit_intents(ctx.database, ctx.settings, username, reply["task"]["sequence_id"], *GOOD)
    return reply["study"]


@pytest.mark.parametrize("with_prolific", [False, True], ids=["address-limit-only", "fake-prolific-api"])
def test_made_up_ids_from_one_address_cannot_keep_twenty_real_workers_out(template, tmp_path, with_prolific):
    ctx = make(template, tmp_path)
    fake = FakeProlific(REAL)
    api = ProlificApi("https://api.prolific.test", httpx.Client(transport=httpx.MockTransport(fake)))
    extra = {"prolific_token": TOKEN, "prolific_study_id": PROLIFIC_STUDY} if with_prolific else {}
    study = new_study(ctx, **extra)  # places left at "auto": what the pool needs
    check = participant_check(ctx.database, api)

    outcomes: Counter = Counter()
    squatters = []
    for pid in MADE_UP:  # one address, one after the other, as a script would
        try:
            squatters.append(arrive(ctx, study, pid, FARMER, check).worker)
            outcomes["admitted"] += 1
        except ParticipantUnknown:
            outcomes["unknown to Prolific"] += 1
        except TooManyArrivals:
            outcomes["limited"] += 1
    if with_prolific:
        assert outcomes == {"unknown to Prolific": LIMIT, "limited": len(MADE_UP) - LIMIT}
        assert fake.calls >= LIMIT  # asked for the first ten only: the limit refused the rest before Prolific
    else:
        assert outcomes == {"admitted": LIMIT, "limited": len(MADE_UP) - LIMIT}
        assert {w.status for w in squatters} == {"started"} and all(w.placed_at is None for w in squatters)
    assert ctx.database.scalar("SELECT count(*) FROM study_arrivals WHERE address = ?", (FARMER,)) == len(MADE_UP)

    for number, pid in enumerate(REAL):  # then the real workers, each from their own address
        worker = qualify(ctx, study, arrive(ctx, study, pid, f"198.51.100.{number + 1}", check).worker)
        assert worker.status == "qualified" and worker.placed_at, pid
        end = work_to_the_end(ctx, worker.username)
        assert (end["status"], end["completion_code"]) == ("finished", "DONE42"), pid

    stats = studies.study_stats(ctx.database, "boss", study.id)
    assert (stats["finished"], stats["placed"], stats["full"]) == (20, 20, 0)
    per_item = ctx.database.query(
        """SELECT item_id, count(*) AS n FROM assignments WHERE kind = 'intent' AND status = 'submitted'
           GROUP BY item_id, round"""
    )
    assert per_item and max(row["n"] for row in per_item) <= N  # no item over N


def test_exactly_places_workers_start_when_they_pass_at_once(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=5)
    waiting = [arrive(ctx, study, pid, f"198.51.100.{n + 1}").worker for n, pid in enumerate(REAL[:12])]
    results, start = {}, threading.Barrier(len(waiting))

    def pass_quiz(worker):
        start.wait()
        results[worker.username] = qualify(ctx, study, worker)

    threads = [threading.Thread(target=pass_quiz, args=(w,)) for w in waiting]
    [t.start() for t in threads]
    [t.join() for t in threads]
    placed = [w for w in results.values() if w.placed_at]
    turned_away = [w for w in results.values() if w.turned_away_at]
    assert (len(placed), len(turned_away)) == (5, 7)
    assert {w.status for w in turned_away} == {"screened_out"}
    view = workers.study_view(ctx.database, turned_away[0].username)
    assert (view["full"], view["screenout_code"]) == (True, "OUT7")
    stats = studies.study_stats(ctx.database, "boss", study.id)
    assert (stats["placed"], stats["full"], stats["working"]) == (5, 7, 5)
    with pytest.raises(StudyFull, match="every place in this study"):  # a newcomer: the full page at the door
        arrive(ctx, study, REAL[15], "198.51.100.99")


def test_without_a_qualification_the_place_is_taken_with_the_first_task(template, tmp_path):
    ctx = make(template, tmp_path)
    study = new_study(ctx, places=1, qualification_size=0, screenout_code="")
    first, second = (arrive(ctx, study, pid, f"198.51.100.{n}").worker for n, pid in enumerate(REAL[:2]))
    assert first.placed_at is None and second.placed_at is None  # opening the link takes nothing
    assert service.next_intent_task(ctx.database, ctx.settings, first.username)["task"] is not None
    late = service.next_intent_task(ctx.database, ctx.settings, second.username)
    assert late["task"] is None and late["study"]["full"]


def test_a_prolific_token_needs_the_prolific_study_and_platform(template, tmp_path):
    ctx = make(template, tmp_path)
    with pytest.raises(ValidationError, match="study's id on Prolific"):
        new_study(ctx, prolific_token=TOKEN)
    with pytest.raises(ValidationError, match="platform prolific"):
        new_study(ctx, platform="generic", prolific_token=TOKEN, prolific_study_id=PROLIFIC_STUDY)
    study = new_study(ctx, prolific_token=TOKEN, prolific_study_id=PROLIFIC_STUDY.upper())
    assert study.prolific_study_id == PROLIFIC_STUDY and "prolific_token" not in study.public()


def test_when_prolific_cannot_be_asked_the_worker_is_let_in_and_it_is_audited(template, tmp_path):
    ctx = make(template, tmp_path)
    down = ProlificApi(
        "https://api.prolific.test", httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    )
    study = new_study(ctx, prolific_token=TOKEN, prolific_study_id=PROLIFIC_STUDY)
    assert arrive(ctx, study, REAL[0], "198.51.100.1", participant_check(ctx.database, down)).first_visit
    assert ctx.database.scalar("SELECT count(*) FROM audit_log WHERE action = 'prolific.unchecked'") == 1


@pytest.fixture
def fake_prolific_server():
    """Prolific's submissions list on a loopback port (the served app asks it by ``prolific_api_url``)."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    known = FakeProlific(REAL[:1])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            reply = known(httpx.Request("GET", f"https://api.prolific.test{self.path}", headers=dict(self.headers)))
            body = json.dumps(reply.json()).encode()
            self.send_response(reply.status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_the_served_app_asks_prolific_and_an_unknown_id_gets_a_clear_page(served_app, fake_prolific_server):
    with served_app.started({"boss": "admin"}, prolific_api_url=fake_prolific_server) as app:
        study = new_study(app.ctx, prolific_token=TOKEN, prolific_study_id=PROLIFIC_STUDY, places=5)  # an empty pool
        sig = links.study_signature(
            app.ctx.database.scalar("SELECT secret FROM studies WHERE id = ?", (study.id,)), study.id
        )

        def open_link(pid: str) -> httpx.Response:
            query = {"PROLIFIC_PID": pid, "STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": "S1", "sig": sig}
            return httpx.get(f"{app.url}/study/{study.id}", params=query)

        unknown = open_link(MADE_UP[0])
        assert unknown.status_code == 403 and 'data-state="unknown"' in unknown.text
        assert "Prolific does not list you as a participant of this study" in unknown.text
        assert "set-cookie" not in unknown.headers  # nothing else: no session, no account
        assert app.ctx.database.scalar("SELECT count(*) FROM study_workers") == 0
        assert open_link(REAL[0]).status_code == 303  # Prolific knows this one
