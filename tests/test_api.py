"""The scripting API of the real app: each named JSON endpoint through gradio_client and through raw HTTP
(the lean ``/gradio_api/run/<name>`` route and the two-step queued ``/gradio_api/call/<name>``), with its
result checked and a caller of the wrong role refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_helpers import ROOT, ApiClient, ApiError
from gradio_client import Client

from backend.vqa.items import list_items

PASSWORD = "password1"


@pytest.fixture(scope="module")
def running(served_app):
    return served_app({"ann": "annotator", "rev": "reviewer", "boss": "admin"}, password=PASSWORD, demo=True)


def _client(app, user: str) -> Client:
    return Client(app.url, auth=(user, PASSWORD), download_files=False, verbose=False)


def test_every_named_endpoint_is_listed_and_ui_events_are_private(running):
    listed = set(_client(running, "ann").view_api(print_info=False, return_format="dict")["named_endpoints"])
    reference = (ROOT / "docs" / "api.md").read_text()
    for name in (
        "planning_run",
        "planning_results",
        "planning_ask",
        "model_answer",
        "icl_select",
        "vqa_model_answer",
        "vqa_model_run",
        "vqa_vote",
        "review_next",
        "review_submit",
        "review_export",
        "vqa_export",
        "vqa_next_verification",
        "vqa_submit_verification",
        "icl_answer",
        "planning_author",
        "study_create",
        "study_list",
        "study_link",
        "study_close",
        "study_stats",
        "study_me",
        "study_qualify",
        "study_leave",
    ):
        assert f"/{name}" in listed and f"`{name}`" in reference
    assert not {"/planning_show", "/models_run", "/icl_ask", "/on_submit", "/on_run"} & listed


def test_documented_example_runs(running):
    """docs/api.md's planning example, as written there, with the host and account replaced."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(), re.S)
    code = next(block for block in blocks if "/planning_results" in block)
    code = code.replace('"http://127.0.0.1:7860"', repr(running.url)).replace(
        '("alice", "her-password")', f'("boss", "{PASSWORD}")'
    )
    scope: dict = {}
    exec(compile(code, "docs/api.md", "exec"), scope)  # noqa: S102 - the documented example itself
    assert scope["answer"]["parsed"] and scope["answer"]["correct_answer"]
    assert any("random" in run for run in scope["board"]["runs"])


def test_planning_through_client_and_raw_http(running):
    ann, boss = ApiClient(running.url, "ann", PASSWORD), _client(running, "boss")
    ids = ann.run("planning_questions")
    assert len(ids) > 10
    question = ann.call("planning_question", ids[0])  # annotators check questions: no key, no STRIPS verdicts
    assert len(question["choices"]) == 6 and question["answer_index"] is None and question["strips_checks"] is None
    reviewed = boss.predict(ids[0], api_name="/planning_question")
    assert reviewed["answer_index"] in range(6) and len(reviewed["strips_checks"]) == 6
    task = ann.run("planning_next_check")["question"]
    assert task["answer_index"] is None and task["strips_checks"] is None
    stored = ann.run("planning_submit_check", task["id"], -1, 12.5)
    assert stored == {"question_id": task["id"], "plausible_choice": -1, "repeated": False}
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("planning_ask", ids[0], "random", "text")
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("planning_run", "random", "text", False, 2)
    with pytest.raises(ApiError, match="reviewer role"):
        ann.run("planning_author", "S1", None)
    answer = boss.predict(ids[0], "random", "text", api_name="/planning_ask")
    assert answer["correct_answer"] and answer["status"]
    summary = boss.predict("random", "text", False, 3, api_name="/planning_run")
    assert summary["items"] == 3
    board = ann.call("planning_results", "bigram-prior", False)
    assert board["chance"] == pytest.approx(1 / 6, abs=1e-4) and board["disagreements"] == []


def test_models_and_a_live_answer(running):
    rev, ann = _client(running, "rev"), ApiClient(running.url, "ann", PASSWORD)
    assert "random" in {m["name"] for m in rev.predict(api_name="/model_list")}
    shown = rev.predict("toy-colors", "random", "toy-000", api_name="/model_answer")
    assert shown["item_id"] == "toy-000" and shown["correct_answer"] == "A" and shown["parsed"]
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("model_answer", "toy-colors", "random", "toy-000")
    with pytest.raises(ApiError, match="no item"):
        ApiClient(running.url, "rev", PASSWORD).call("model_answer", "toy-colors", "random", "toy-999")
    with pytest.raises(ApiError, match="admin role"):
        ApiClient(running.url, "rev", PASSWORD).run("model_save", {"name": "m", "backend": "random"})


def test_icl_vqa_and_review_endpoints(running):
    ann, boss = ApiClient(running.url, "ann", PASSWORD), ApiClient(running.url, "boss", PASSWORD)
    assert set(ann.call("icl_sets")) == {"bank", "tests"}
    with pytest.raises(ApiError, match="needs"):
        ann.call("icl_select", {"bank": "none", "tests": "none"})
    assert "unrated" in ann.run("vqa_levels")
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("vqa_model_answer", "random", "x", None, False)
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("vqa_vote", ["random"])
    with pytest.raises(ApiError, match="reviewer role"):
        ann.call("vqa_model_run", "random", None, False)
    verified = [item.id for item in list_items(running.ctx.database, status="verified")]
    assert boss.call("vqa_model_run", "random", None, False)["items"] == len(verified) > 0
    live = boss.call("vqa_model_answer", "random", verified[0], None, False)
    assert live["letters"] and live["key"] and live["error"] is None
    boss.call("vqa_vote", ["random"])
    assert ann.run("vqa_levels")["unrated"] == 0
    assert Path(boss.call("vqa_export", "jsonl")["path"]).name == "vqa_items.zip"
    with pytest.raises(ApiError, match="reviewer role"):
        ann.run("review_next")
    assert "queue" in boss.run("review_next")
    with pytest.raises(ApiError, match="admin role"):
        ApiClient(running.url, "rev", PASSWORD).run("review_export", "jsonl")
    exported = _client(running, "boss").predict("jsonl", api_name="/review_export")
    assert exported["path"]
