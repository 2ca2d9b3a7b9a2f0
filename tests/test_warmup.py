"""The in-process planning baselines are warmed in the background at start (issue 13 §7, issue 17)."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
from conftest import seed_demo_media
from e2e_helpers import ApiClient, free_port, kill_hard, start_app_process, wait_http_ok

from backend.inference.warmup import start_warm_up, warm_models
from backend.settings import Settings

pytestmark = pytest.mark.slow  # over ~10 s a file: out of the quick loop (scripts/test.sh --quick)


def _wait_for_line(log, text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        output = log.read_text() if log.exists() else ""
        if text in output:
            return output
        time.sleep(0.5)
    raise AssertionError(f"{text!r} not in the app's log:\n{log.read_text()[-3000:]}")


def test_app_start_warms_the_planning_baselines_before_any_call(tmp_path, demo_media_cache):
    data_dir, log = tmp_path / "data", tmp_path / "app.log"
    seed_demo_media(Settings(data_dir=data_dir), demo_media_cache)
    port = free_port()
    process = start_app_process(data_dir, port, log=log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_http_ok(f"{url}/", timeout=120)
        output = _wait_for_line(log, "CompStudio: warmed", timeout=240)
        assert "warmed nsplan-lite, bigram-prior" in output, output[-2000:]
        # Gradio's tqdm patch (gradio/helpers.py patch_tqdm, installed once a page with gr.Progress(track_tqdm=True)
        # is built) breaks tqdm.__del__ for a bar made before it ("Exception ignored in ... tqdm.__del__": no
        # '_progress'); Python ignores it, and it is not the warm-up's. Any other traceback fails the test.
        ours = re.sub(r"Exception ignored in: <function tqdm.__del__[^\n]*\nTraceback.*?AttributeError: [^\n]*_progress'\n",
                      "", output, flags=re.S)  # fmt: skip
        assert "Traceback" not in ours, ours[-2000:]
        passwords = json.loads((data_dir / "demo-accounts.json").read_text())
        admin = ApiClient(url, "demo-admin", passwords["demo-admin"])
        # no model call has been made: the models are loaded by the warm-up alone
        loaded = {row["name"]: row["loaded"] for row in admin.run("model_list")}
        assert loaded["nsplan-lite"] is True and loaded["bigram-prior"] is True
        assert loaded["random"] is False
        question_id = admin.run("planning_questions")[0]
        answer = admin.call("planning_ask", question_id, "nsplan-lite", "text")
        assert answer["parsed"] in set("ABCDEF") and answer["status"] == "ok", answer
        assert answer["error"] is None and answer["from_store"] is False
        admin.close()
    finally:
        kill_hard(process)


def test_a_failing_warm_up_logs_one_line_and_leaves_the_model_to_first_use(ctx, caplog):
    warmed = warm_models(ctx, ("random", "no-such-model"))
    assert warmed == ["random"] and ctx.pool.loaded() == ["random"]
    failures = [r for r in caplog.records if "warm-up of no-such-model failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is None
    assert "\n" not in failures[0].getMessage()


def test_the_warm_up_says_when_it_is_done_even_when_a_model_fails(ctx):
    """app.py's background page build waits on ``done`` after /scripts: it must be set, whatever happens."""
    import threading

    done = threading.Event()
    thread = start_warm_up(ctx, names=("random", "no-such-model"), done=done)
    assert done.wait(60) and ctx.pool.loaded() == ["random"]
    thread.join(10)


def test_embedding_cache_answers_a_restart_without_the_encoder(tmp_path, monkeypatch):
    from backend.inference import embedding_cache
    from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels

    texts = ["S/He wants to make a sandwich.", "S/He is putting on shoes.", "S/He wants to make a sandwich."]
    encoders = EmbeddingModels(MINILM_HUB_ID)
    first = embedding_cache.EmbeddingCache(tmp_path, MINILM_HUB_ID, encoders)(texts)
    assert first.shape[0] == 3 and np.allclose(first[0], first[2])
    assert np.allclose(first[:2], encoders.embed(texts[:2], model=MINILM_HUB_ID), atol=1e-5)

    def no_encoder(*args, **kwargs):
        raise AssertionError("the encoder was asked for a text the cache holds")

    fresh = EmbeddingModels(MINILM_HUB_ID)  # a new process: nothing loaded
    monkeypatch.setattr(fresh, "embed", no_encoder)
    restarted = embedding_cache.EmbeddingCache(tmp_path, MINILM_HUB_ID, fresh)  # it reads the file
    assert np.array_equal(restarted(texts), first)


def test_an_unreadable_embedding_cache_is_rebuilt(tmp_path, caplog):
    from backend.inference.embedding_cache import EmbeddingCache
    from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels

    encoders = EmbeddingModels(MINILM_HUB_ID)
    cache = EmbeddingCache(tmp_path, MINILM_HUB_ID, encoders)
    cache.path.write_bytes(b"not a numpy file")
    assert cache(["S/He is reading a book."]).shape[0] == 1
    assert any("unreadable" in r.getMessage() for r in caplog.records)
    assert EmbeddingCache(tmp_path, MINILM_HUB_ID, encoders)(["S/He is reading a book."]).shape[0] == 1


def test_the_bundled_vectors_cover_the_demo_content_and_match_the_encoder(tmp_path, monkeypatch):
    """A fresh app's first nsplan-lite answer needs no encoder (issue 17): assets/embeddings holds the vector of
    every text nsplan-lite embeds on the demo content, as the encoder returns it."""
    from backend.context import build_context
    from backend.inference import embedding_cache
    from backend.inference.embeddings import EmbeddingModels
    from backend.planning.evaluation import nsplan_texts
    from backend.vilpact.demo import ensure_vilpact_demo

    ctx = build_context(Settings(data_dir=tmp_path / "data", demo_content=False))
    ensure_vilpact_demo(ctx)
    texts = nsplan_texts(ctx.database)
    model = ctx.settings.embedding_model
    assert len(texts) > 2000

    def no_encoder(*args, **kwargs):
        raise AssertionError("a demo text is missing from assets/embeddings: run scripts/bundle_embeddings.py")

    fresh = EmbeddingModels(model)
    monkeypatch.setattr(fresh, "embed", no_encoder)
    bundled = embedding_cache.EmbeddingCache(tmp_path / "cache", model, fresh)(texts)  # an empty data cache
    assert bundled.shape == (len(texts), 384)
    sample = [0, len(texts) // 2, len(texts) - 1]
    encoded = EmbeddingModels(model).embed([texts[i] for i in sample], model=model)
    assert np.allclose(bundled[sample], encoded, atol=1e-5)
    ctx.database.close()
