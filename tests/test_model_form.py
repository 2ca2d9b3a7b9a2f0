"""The Models tab's backend (issue 44 §10, §11): the form's entry round trip, Test (``probe_entry``, what
``compstudio models test`` calls) with its roles and warnings, "loaded" for served models, and live answers kept
out of the run lists."""

from __future__ import annotations

import pytest
from fake_openai_server import FakeOpenAIServer

from backend.accounts import auth
from backend.errors import PermissionDenied
from backend.inference import run_items, service
from backend.inference.benchmarks import get_benchmark
from backend.inference.model_form import ModelForm, entry_from_form, form_from_entry
from backend.inference.registry import ModelSpec, spec_from_dict
from backend.inference.runner import answer_item, run_eval


@pytest.fixture
def people(ctx):
    auth.add_user(ctx.database, "rev", "reviewer", None)
    auth.add_user(ctx.database, "boss", "admin", None)
    return ctx


def test_the_form_round_trips_an_entry_and_keeps_options_it_does_not_show():
    spec = ModelSpec(
        "m", "openai", "served", concurrency=8, options={"base_url": ["http://a/v1", "http://b/v1"], "timeout_s": 5}
    )
    form = form_from_entry(spec)
    assert (form.base_urls, form.concurrency, form.other_options) == ("http://a/v1\nhttp://b/v1", 8, {"timeout_s": 5})
    assert spec_from_dict(entry_from_form(form)) == spec


def test_test_an_unsaved_entry_is_for_admins_and_warns_when_the_server_serves_another_model(people):
    ctx = people
    with FakeOpenAIServer(model="fake-vlm") as server:
        entry = entry_from_form(ModelForm("probe-me", "openai", "other-name", base_urls=server.base_url))
        with pytest.raises(PermissionDenied):
            service.probe_entry(ctx, "rev", entry)
        result = service.probe_entry(ctx, "boss", entry)
        assert result["ok"] is False and result["serves_this_model"] is False
        assert result["warnings"] == [
            f"{server.base_url} does not serve 'other-name' (it serves: fake-vlm): set the path to a name it serves."
        ]
        assert "probe-me" not in ctx.pool.loaded()  # an entry not saved is not kept loaded
        fixed = service.probe_entry(ctx, "boss", {**entry, "path": "fake-vlm"})
        assert fixed["ok"] is True and fixed["warnings"] == []


def test_reviewers_test_a_registered_model_as_registered(people):
    ctx = people
    service.save_model(ctx, "boss", {"name": "coin", "backend": "random"})
    registered = service.model_table(ctx, "rev")
    entry = entry_from_form(form_from_entry(next(r for r in registered if r["name"] == "coin")))
    assert service.probe_entry(ctx, "rev", entry)["ok"] is True
    with pytest.raises(PermissionDenied):  # changed: no longer the registered model
        service.probe_entry(ctx, "rev", {**entry, "batch_size": 4})


def test_a_served_model_is_never_loaded(people):
    ctx = people
    service.save_model(ctx, "boss", entry_from_form(ModelForm("srv", "openai", "x", base_urls="http://127.0.0.1:9/v1")))
    ctx.pool.get(ctx.models.get_spec(ctx.settings, "srv"))  # what a view does to read what the server serves
    assert "srv" in ctx.pool.loaded()
    assert next(r for r in service.model_table(ctx, "rev") if r["name"] == "srv")["loaded"] is False


def test_a_live_answer_is_stored_but_not_listed_as_a_run(people):
    ctx = people
    item = get_benchmark(ctx, "toy-colors").load_items(ctx)[0]
    answer_item(ctx, "toy-colors", "random", item)
    assert ctx.database.scalar("SELECT count(*) FROM eval_runs") == 1  # kept, as the leaderboards read it
    assert service.recent_runs(ctx, "rev") == []
    assert run_items.list_runs(ctx.database) == []
    run_eval(ctx, "toy-colors", "random", limit=3)
    assert [r["model"] for r in service.recent_runs(ctx, "rev")] == ["random"]
    assert len(run_items.list_runs(ctx.database)) == 1
