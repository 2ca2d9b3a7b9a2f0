"""The Models tab over HTTP: roles are enforced by the backend and model calls share one queue."""

from __future__ import annotations

import gradio as gr
import pytest
from e2e_helpers import free_port
from gradio_client import Client

from backend.accounts import auth
from backend.inference.benchmarks import get_benchmark
from backend.inference.registry import list_models
from components.models import build_ask_model, build_models_tab
from components.models.api import register as register_models_api

PASSWORD = "password123"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from backend.context import build_context
    from backend.settings import Settings

    ctx = build_context(Settings(data_dir=tmp_path_factory.mktemp("models-ui"), demo_content=False))
    for name, role in (("ann", "annotator"), ("rev", "reviewer"), ("boss", "admin")):
        auth.add_user(ctx.database, name, role, PASSWORD)
    items = {item.item_id: item for item in get_benchmark(ctx, "toy-colors").load_items(ctx)}
    with gr.Blocks() as demo:
        with gr.Tabs():
            build_models_tab(ctx)
        register_models_api(ctx)  # the named endpoints (the app puts them on the /scripts mount)
        current = gr.Textbox(value="toy-000", visible=False)
        build_ask_model(
            ctx, "toy-colors", lambda item_id: items[item_id], current, api_name="icl_ask"
        )  # a row of the access table
    demo.queue()
    port = free_port()
    demo.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        ssr_mode=False,
        auth=lambda user, password: auth.authenticate(ctx.database, user, password),
    )
    yield ctx, demo, f"http://127.0.0.1:{port}"
    demo.close()


def _client(url: str, user: str) -> Client:
    return Client(url, auth=(user, PASSWORD), download_files=False, verbose=False)


def test_every_model_call_uses_the_shared_queue(served):
    _, demo, _ = served
    by_name = {fn.api_name: fn for fn in demo.fns.values()}
    for name in ("model_run", "model_unload", "model_answer", "icl_ask"):
        assert by_name[name].concurrency_id == "models" and by_name[name].concurrency_limit == 1


def test_annotator_cannot_run_or_edit(served):
    ctx, _, url = served
    client = _client(url, "ann")
    with pytest.raises(Exception, match="reviewer role"):
        client.predict("toy-colors", "random", 2, False, None, api_name="/model_run")
    with pytest.raises(Exception, match="admin role"):
        client.predict({"name": "evil", "backend": "random"}, api_name="/model_save")
    with pytest.raises(Exception, match="reviewer role"):
        client.predict("toy-colors", "random", "toy-000", api_name="/model_answer")
    assert "evil" not in list_models(ctx)
    assert ctx.database.scalar("SELECT COUNT(*) FROM predictions") == 0


def test_reviewer_runs_a_benchmark_and_asks_a_model(served):
    ctx, _, url = served
    client = _client(url, "rev")
    summary = client.predict("toy-colors", "random", 4, False, None, api_name="/model_run")
    assert summary["items"] == 4 and summary["newly_computed"] == 4 and "accuracy" in summary
    shown = client.predict("toy-colors", "random", "toy-000", api_name="/model_answer")
    assert shown["item_id"] == "toy-000" and shown["correct_answer"] == "A" and shown["from_store"] is True
    with pytest.raises(Exception, match="admin role"):
        client.predict({"name": "m2", "backend": "random"}, api_name="/model_save")


def test_admin_edits_the_registry(served):
    ctx, _, url = served
    client = _client(url, "boss")
    result = client.predict({"name": "m2", "backend": "random", "options": {"seed": 3}}, api_name="/model_save")
    assert result["name"] == "m2" and list_models(ctx)["m2"].options == {"seed": 3}
    with pytest.raises(Exception, match="valid backends"):
        client.predict({"name": "m3", "backend": "tensorflow"}, api_name="/model_save")
