"""Model registry: the file, defaults, unknown names, extra backends, role checks, light imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from backend.accounts import auth
from backend.errors import NotFound, PermissionDenied, ValidationError
from backend.inference import registry, service
from backend.inference.benchmarks import get_benchmark
from backend.inference.registry import ModelSpec, get_model, list_models


def test_defaults_without_a_registry_file(ctx):
    models = list_models(ctx)
    assert {"random", "qwen2-vl-2b", "vllm-local"} <= set(models)
    assert models["random"].backend == "random"


def test_unknown_model_names_every_valid_one(ctx):
    with pytest.raises(NotFound) as caught:
        get_model(ctx, "gpt-17")
    assert "random" in str(caught.value) and "vllm-local" in str(caught.value)


def test_unknown_benchmark_names_every_valid_one(ctx):
    with pytest.raises(NotFound, match="toy-colors"):
        get_benchmark(ctx, "nope")


def test_registry_file_is_validated(ctx):
    path = registry.registry_path(ctx.settings)
    path.write_text(json.dumps({"models": [{"name": "x", "backend": "tensorflow"}]}))
    with pytest.raises(ValidationError, match="valid backends: .*openai.*random.*transformers"):
        list_models(ctx)
    path.write_text(json.dumps({"models": [{"name": "x", "backend": "random", "bs": 2}]}))
    with pytest.raises(ValidationError, match="unknown model field"):
        list_models(ctx)


def test_python_backend_and_register_backend(ctx):
    spec = ModelSpec("echo", "python", "inference_helpers:echo_factory")
    backend = registry.build_backend(spec)
    assert backend.generate([[{"type": "text", "text": "hi"}]], registry_params()) == ["The answer is (A)."]
    ctx.models.register_backend("echo-backend", "inference_helpers:EchoBackend")
    assert type(ctx.models.build_backend(ModelSpec("e2", "echo-backend"))).__name__ == "EchoBackend"
    with pytest.raises(NotFound, match="echo-backend"):  # another app's registry does not have it
        registry.build_backend(ModelSpec("e2", "echo-backend"))


def registry_params():
    from backend.inference.request import GenerationParams

    return GenerationParams(max_new_tokens=4)


def test_register_model_is_listed_and_not_editable(ctx):
    auth.add_user(ctx.database, "boss", "admin", "password123")
    ctx.models.register_model(ModelSpec("always-a", "python", "inference_helpers:echo_factory"))
    assert "always-a" in list_models(ctx)
    with pytest.raises(ValidationError, match="built-in"):
        service.save_model(ctx, "boss", {"name": "always-a", "backend": "random"})


def test_pool_loads_once_and_reloads_an_edited_spec(ctx):
    first = get_model(ctx, "random")
    assert get_model(ctx, "random") is first
    auth.add_user(ctx.database, "boss", "admin", "password123")
    service.save_model(ctx, "boss", {"name": "random", "backend": "random", "options": {"seed": 7}})
    second = get_model(ctx, "random")
    assert second is not first and second.seed == 7
    assert "random" in ctx.pool.unload("random")


def test_roles_annotators_cannot_run_or_edit(ctx):
    auth.add_user(ctx.database, "ann", "annotator", "password123")
    auth.add_user(ctx.database, "rev", "reviewer", "password123")
    auth.add_user(ctx.database, "boss", "admin", "password123")
    for call in (
        lambda who: service.start_run(ctx, who, "toy-colors", "random", limit=2),
        lambda who: service.model_table(ctx, who),
    ):
        with pytest.raises(PermissionDenied):
            call("ann")
        with pytest.raises(PermissionDenied):
            call(None)
        call("rev")
    for who in ("ann", "rev"):
        with pytest.raises(PermissionDenied):
            service.save_model(ctx, who, {"name": "m", "backend": "random"})
        with pytest.raises(PermissionDenied):
            service.delete_model(ctx, who, "random")
    service.save_model(ctx, "boss", {"name": "m", "backend": "random"})
    assert "m" in list_models(ctx)
    assert "m" not in service.delete_model(ctx, "boss", "m")
    actions = [r["action"] for r in ctx.database.query("SELECT action FROM audit_log WHERE actor = 'boss'")]
    assert actions[-2:] == ["models.save", "models.delete"]


def test_importing_the_inference_layer_imports_no_heavy_library():
    code = (
        "import sys, backend, backend.cli, backend.inference.service, backend.inference.runner, "
        "backend.inference.registry\n"
        "backend.cli.build_parser()\n"
        "heavy = [m for m in ('torch', 'transformers', 'httpx') if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_two_apps_in_one_process_share_no_models_benchmarks_or_loaded_backends(ctx, tmp_path):
    from backend.context import build_context
    from backend.inference.benchmarks import BenchmarkSpec
    from backend.settings import Settings

    other = build_context(Settings(data_dir=tmp_path / "other", demo_content=False))
    ctx.models.register_model(ModelSpec("only-here", "python", "inference_helpers:echo_factory"))
    ctx.benchmarks.register(BenchmarkSpec("only-here-bench", "one app's benchmark", lambda ctx: []))
    assert "only-here" in list_models(ctx) and "only-here" not in list_models(other)
    assert "only-here-bench" in ctx.benchmarks.all() and "only-here-bench" not in other.benchmarks.all()
    assert {"nsplan-lite", "bigram-prior"} <= set(list_models(other))  # each app gets the providers' models
    loaded = get_model(ctx, "random")
    assert ctx.pool.loaded() == ["random"] and other.pool.loaded() == []
    assert get_model(other, "random") is not loaded


def test_model_names_fall_back_to_the_built_in_models(ctx):
    """The one list the pickers offer: every model, sorted; a broken registry file leaves what no file gives."""
    names = registry.model_names(ctx)
    assert names == sorted(list_models(ctx))
    assert {"nsplan-lite", "bigram-prior", "random"} <= set(names)
    ctx.settings.data_dir.mkdir(parents=True, exist_ok=True)
    registry.registry_path(ctx.settings).write_text("{not json")
    with pytest.raises(ValidationError, match="not valid JSON"):
        list_models(ctx)
    assert registry.model_names(ctx) == names
