"""The real app over HTTP: start-up, named API endpoints, role checks, files served."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from e2e_helpers import ROOT, ApiClient, ApiError
from review_helpers import handed_ago

from backend.accounts import auth
from backend.campaigns.qualification import draw_quiz


@pytest.fixture(scope="module")
def running(served_app):
    return served_app({"ann1": "annotator", "ann2": "annotator", "boss": "admin"}, password="password1", demo=True)


def test_front_page_and_login(running):
    front = httpx.get(running.url, follow_redirects=True)  # anonymous visitors are sent to the login page
    assert front.status_code == 200 and str(front.url).endswith("/login") and "CompStudio" in front.text
    with pytest.raises(PermissionError):
        ApiClient(running.url, "ann1", "wrong-password")
    anonymous = httpx.post(f"{running.url}/api/intent_next", json={"data": []})
    assert anonymous.status_code in (401, 403)


def test_api_annotation_round_trip(running):
    client = ApiClient(running.url, "ann1", "password1")
    first = client.run("intent_next")
    sequence = first["task"]["sequence_id"]
    assert first["task"]["must_view"] is True
    assert client.run("intent_next")["task"]["sequence_id"] == sequence
    with pytest.raises(ApiError, match="Watched 0% of the video"):
        client.run("intent_submit", sequence, "S/He wants to have a drink", "S/He is thirsty")
    with pytest.raises(ApiError, match="must start with"):
        client.run("intent_submit", sequence, "have a drink", "S/He is thirsty")
    with pytest.raises(ApiError, match="Watched 50% of the video"):
        client.run("intent_viewed", sequence, 0.5)
    with pytest.raises(ApiError, match="after this task was handed out: playing 95% .* even at 2×"):
        client.run("intent_viewed", sequence, 1.0)  # the share is claimed sooner than 2× could play it
    handed_ago(running.ctx.database, sequence, 60)
    client.run("intent_viewed", sequence, 1.0)
    stored = client.run("intent_submit", sequence, "S/He wants to have a drink", "S/He is thirsty")
    assert stored["stored"]["annotator"] == "ann1" and stored["duplicate"] is False
    assert stored["task"]["sequence_id"] != sequence
    assert client.run("intent_submit", sequence, "S/He wants to have a drink", "S/He is thirsty")["duplicate"] is True
    skipped = client.run("intent_skip", stored["task"]["sequence_id"], "The video does not load")
    assert skipped["skipped"] == stored["task"]["sequence_id"]
    db = running.ctx.database
    assert db.scalar("SELECT count(*) FROM annotations WHERE annotator='ann1'") == 1


def test_annotator_is_refused_admin_endpoints_and_nothing_changes(running, vilpact_dir):
    db = running.ctx.database
    client = ApiClient(running.url, "ann2", "password1")  # signing in is audited: count after it
    before = {t: db.scalar(f"SELECT count(*) FROM {t}") for t in ("users", "sequences", "audit_log", "annotations")}
    calls = [
        ("admin_import_vilpact", str(vilpact_dir), ""),
        ("admin_export_intents", "csv"),
        ("admin_users",),
        ("admin_user_add", "mallory", "admin", "password1"),
        ("admin_user_set_role", "ann2", "admin"),
        ("admin_user_disable", "boss"),
        ("study_create", "S", "intents", 1, 60, "C1", "", "", "prolific", 0, 0.8, 0, 2, "", 0, "", "", ""),
        ("study_list",),
        ("study_link", 1, "http://example.org"),
        ("study_close", 1),
        ("study_stats", 1),
    ]
    for name, *args in calls:
        with pytest.raises(ApiError, match="needs the admin role"):
            client.call(name, *args)
    # the UI's own (undocumented) handlers are endpoints of the admin page, whose gate admits only admins
    response = client.http.post("/admin/gradio_api/run/admin_ui_import", json={"data": [str(vilpact_dir), ""]})
    assert response.status_code == 401 and response.json()["session"] == "role_changed"
    assert before == {t: db.scalar(f"SELECT count(*) FROM {t}") for t in before}
    assert auth.get_user(db, "ann2").role == "annotator"
    assert not (running.ctx.settings.data_dir / "exports").exists()


def test_admin_endpoints_work_for_admins(running):
    client = ApiClient(running.url, "boss", "password1")
    names = {u["username"] for u in client.call("admin_users")}
    assert {"ann1", "ann2", "boss"} <= names
    exported = client.call("admin_export_intents", "jsonl")
    assert exported["rows"] >= 0 and exported["path"].endswith(".jsonl")


PID2 = "5f00aa11bb22cc33dd44ee02"  # a Prolific id: 24 hexadecimal characters


def test_study_endpoints_and_a_worker_arriving_over_http(running):
    """An admin script runs a study through the named endpoints; a worker's visit signs them in (issue 16 §1)."""
    admin = ApiClient(running.url, "boss", "password1")
    study = admin.call(
        "study_create", "Over <i>HTTP</i>", "intents", 1, 30, "OK1", "", "", "prolific", 0, 0.8, 5, 2, "", 0, "", "", ""
    )
    assert "secret" not in study and study["status"] == "open"
    link = admin.call("study_link", study["id"], running.url)["link"]
    visit = (
        link.replace("{{%PROLIFIC_PID%}}", "5f00aa11bb22cc33dd44ee01")
        .replace("{{%STUDY_ID%}}", "S")
        .replace("{{%SESSION_ID%}}", "X")
    )
    with httpx.Client() as worker:
        arrived = worker.get(visit, follow_redirects=True)
        assert arrived.status_code == 200 and 'data-state="qualified"' in arrived.text
        assert "Over &lt;i&gt;HTTP&lt;/i&gt;" in arrived.text  # escaped on the study page
        assert worker.post(f"{running.url}/api/intent_next", json={"data": []}).status_code == 200
        forged = worker.get(visit.replace("sig=", "sig=0"))
        assert forged.status_code == 403 and "not valid" in forged.text
    assert admin.call("study_stats", study["id"])["started"] == 1
    quiz = admin.call(
        "study_create", "Quiz", "vqa", 1, 30, "OK2", "NO2", "", "prolific", 2, 1.0, 5, 2, "", 0, "", "", ""
    )
    visit = admin.call("study_link", quiz["id"], running.url)["link"].replace("{{%PROLIFIC_PID%}}", PID2)
    with httpx.Client(base_url=running.url) as worker:
        assert 'data-state="started"' in worker.get(visit, follow_redirects=True).text

        def call(name: str, *args) -> dict:
            reply = worker.post(f"/scripts/gradio_api/run/{name}", json={"data": list(args), "session_hash": "w2"})
            return reply.json()["data"][0]

        me = call("study_me")
        assert me["status"] == "started" and len(me["qualification"]) == 2
        assert all(set(q) == {"id", "prompt", "options"} for q in me["qualification"])  # no answers
        keys = {item.id: item.answer for item in draw_quiz("vqa", 2, quiz["id"], PID2)}
        done = call("study_qualify", keys)
        assert {k: done[k] for k in ("status", "right", "asked", "passed")} == {
            "status": "qualified", "right": 2, "asked": 2, "passed": True}  # fmt: skip
        assert done["mistakes"] == [] and me["tries_left"] == 2
        assert call("study_leave") == {"status": "returned"}
    assert admin.call("study_stats", quiz["id"])["returned"] == 1
    assert any(s["id"] == study["id"] for s in admin.call("study_list"))
    assert admin.call("study_close", study["id"])["status"] == "closed"


def test_only_media_files_are_served(running):
    client = ApiClient(running.url, "ann1", "password1")
    db_path = running.ctx.settings.db_path.resolve()
    for path in (db_path, db_path.parent / "demo-accounts.json", "/etc/passwd"):
        assert client.http.get(f"/gradio_api/file={path}").status_code in (403, 404)


def test_missing_matplotlib_fails_fast_on_every_gradio_call():
    """app.main marks the uninstalled matplotlib as absent: Gradio's per-call ``import matplotlib`` then
    fails at once (ImportError, as before) instead of searching sys.path."""
    script = (
        "import importlib.util, sys, app\n"
        "assert importlib.util.find_spec('matplotlib') is None, 'matplotlib is installed here'\n"
        "app.mark_matplotlib_absent()\n"
        "try:\n    import matplotlib\nexcept ImportError as exc:\n    print('halted' if 'halted' in str(exc) else exc)\n"
        "import gradio.utils\nwith gradio.utils.MatplotlibBackendMananger():\n    print('call ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["halted", "call", "ok"]


def test_the_heap_freed_after_the_build_goes_back_to_the_system():
    """app.release_free_memory (run by freeze_heap once the pages are built): memory freed below a live
    allocation, which glibc keeps on its own, leaves the process's resident set."""
    script = (
        "import app\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 1024\n"
        "blocks = [bytes(10_000) for _ in range(20_000)]  # ~190 MiB through malloc, not Python's small-object arenas\n"
        "top = bytes(10_000)  # still alive above them: free() alone cannot shrink the heap\n"
        "del blocks\n"
        "held = rss()\n"
        "app.release_free_memory()\n"
        "print(held - rss())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert float(out.stdout) > 100  # MiB given back
