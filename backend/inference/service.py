"""Role-checked entry points for the UI and API (every Gradio event is an HTTP endpoint).

* Reading the registry, starting batch runs and asking a model about one item: ``reviewer`` and up
  (researchers). Annotators cannot: model answers must not bias the annotations they write.
* Changing the registry and unloading models: ``admin``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from backend.accounts.auth import require_role
from backend.errors import NotFound, ValidationError
from backend.inference import registry
from backend.inference.benchmarks import EvalItem, get_benchmark, list_benchmarks
from backend.inference.runner import Answer, Progress, RunSummary, answer_item, run_eval
from backend.inference.store import list_runs
from backend.storage import audit

if TYPE_CHECKING:
    from backend.context import AppContext

RUN_ROLE = "reviewer"
REGISTRY_ROLE = "admin"


def model_table(ctx: AppContext, username: str | None) -> list[dict[str, Any]]:
    """Every registered model with whether it is loaded and whether it can be edited. ``loaded``: its weights are
    held by this process; a served model (openai) never is: its client, which the views build to read what the
    server serves, holds none (issue 44 §11: a never-used ``vllm-local`` read ``loaded: true``)."""
    from backend.inference.revision import SERVED_BACKENDS

    require_role(ctx.database, username, RUN_ROLE)
    loaded = set(ctx.pool.loaded())
    return [
        {
            **spec.as_dict(),
            "loaded": spec.name in loaded and spec.backend not in SERVED_BACKENDS,
            "builtin": ctx.models.is_builtin(spec.name),
        }
        for spec in registry.list_models(ctx).values()
    ]


def benchmark_names(ctx: AppContext, username: str | None) -> list[str]:
    require_role(ctx.database, username, RUN_ROLE)
    return list(list_benchmarks(ctx))


def save_model(ctx: AppContext, username: str | None, data: dict[str, Any]) -> registry.ModelSpec:
    """Add or replace a model in ``models.json`` (admins only)."""
    username = require_role(ctx.database, username, REGISTRY_ROLE).username
    return store_model(ctx, username, registry.spec_from_dict(data, ctx.models.backends))


def store_model(ctx: AppContext, actor: str, spec: registry.ModelSpec, *, replace: bool = True) -> registry.ModelSpec:
    """Write ``spec`` into ``models.json`` (audited under ``actor``; the command line is trusted). With
    ``replace=False`` an existing entry of that name is an error."""
    if ctx.models.is_builtin(spec.name):
        raise ValidationError(f"{spec.name!r} is a built-in model and cannot be changed; choose another name")
    models = ctx.models.file_models(ctx.settings)
    if not replace and spec.name in models:
        raise ValidationError(f"a model named {spec.name!r} is already registered; pass --replace to overwrite it")
    models[spec.name] = spec
    with ctx.database.write() as db:
        registry.write_models(ctx.settings, list(models.values()))
        audit(db, actor, "models.save", spec.name, spec.as_dict())
    return spec


def delete_model(ctx: AppContext, username: str | None, name: str) -> list[str]:
    """Remove a model from ``models.json`` (admins only). Returns the remaining names."""
    username = require_role(ctx.database, username, REGISTRY_ROLE).username
    return remove_model(ctx, username, name)


def remove_model(ctx: AppContext, actor: str, name: str) -> list[str]:
    """Remove ``name`` from ``models.json`` (audited under ``actor``). Returns the remaining names."""
    models = ctx.models.file_models(ctx.settings)
    if name not in models:
        raise ValidationError(f"no model {name!r} in the registry file; models there: {', '.join(sorted(models))}")
    del models[name]
    with ctx.database.write() as db:
        registry.write_models(ctx.settings, list(models.values()))
        audit(db, actor, "models.delete", name)
    ctx.pool.unload(name)
    return sorted(models)


def probe_entry(ctx: AppContext, username: str | None, entry: dict[str, Any]) -> dict[str, Any]:
    """``models test`` from the Models tab: one call to the model ``entry`` describes
    (:func:`backend.inference.probe.probe_spec`, what the command calls), with what its server serves and the
    warnings a person must read (:func:`probe_warnings`). A registered model as registered: reviewers; an entry
    not saved (or changed): admins, since it sends a request to an address of their choosing. The backend of an
    entry not saved is unloaded after the call; a model that cannot be loaded is reported, not raised."""
    from backend.inference.probe import probe_spec

    spec = registry.spec_from_dict(entry, ctx.models.backends)
    registered = registry.list_models(ctx).get(spec.name)
    as_registered = registered is not None and registered.load_key() == spec.load_key()
    require_role(ctx.database, username, RUN_ROLE if as_registered else REGISTRY_ROLE)
    try:
        result = probe_spec(ctx, spec)
    except (OSError, RuntimeError, ValueError, ImportError) as exc:  # weights not found, a bad module:factory
        result = {"model": spec.name, "backend": spec.backend, "path": spec.path, "ok": False}
        result["error"] = f"the model could not be loaded: {type(exc).__name__}: {exc}"[:500]
    finally:
        if not as_registered:
            ctx.pool.unload(spec.name)
    return {**result, "warnings": probe_warnings(result)}


def probe_warnings(result: dict[str, Any]) -> list[str]:
    """What a probe's result says that a person must not miss: a server that does not serve the named model,
    replicas that serve different weights, a replica that did not answer.

    >>> probe_warnings({"model": "m", "path": "Qwen/X", "ok": True, "serves_this_model": False,
    ...     "replicas": [{"url": "http://h/v1", "status": 200, "served": [{"id": "other"}]}]})
    ["http://h/v1 does not serve 'Qwen/X' (it serves: other): set the path to a name it serves."]
    """
    out = []
    for replica in result.get("replicas") or []:
        served = [str(m.get("id")) for m in replica.get("served", [])]
        if "served" in replica and result.get("path") not in served:
            names = ", ".join(served) or "nothing"
            out.append(
                f"{replica['url']} does not serve {result.get('path')!r} (it serves: {names}): "
                "set the path to a name it serves."
            )
        elif "served" not in replica:
            problem = replica.get("error") or f"answered {replica.get('status')}"
            out.append(f"{replica['url']} did not say what it serves ({problem}).")
    if result.get("replicas_agree") is False:
        out.append("The replicas serve different weights: their answers would be mixed in one run.")
    return out


def unload_model(ctx: AppContext, username: str | None, name: str | None = None) -> list[str]:
    require_role(ctx.database, username, REGISTRY_ROLE)
    return ctx.pool.unload(name)


def start_run(
    ctx: AppContext,
    username: str | None,
    benchmark: str,
    model: str,
    *,
    limit: int | None = None,
    retry_failed: bool = False,
    judge: str | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """A batch run (reviewers and admins); resumes from the prediction store."""
    user = require_role(ctx.database, username, RUN_ROLE)
    return run_eval(
        ctx,
        benchmark,
        model,
        limit=limit,
        retry_failed=retry_failed,
        judge=judge,
        progress=progress,
        actor=user.username,
    )


def ask_model(ctx: AppContext, username: str | None, benchmark: str, model: str, item: EvalItem) -> Answer:
    """ "Ask a model" on one item of a benchmark tab: prompt, raw output, parsed answer, correctness, latency."""
    require_role(ctx.database, username, RUN_ROLE)
    get_benchmark(ctx, benchmark)
    return answer_item(ctx, benchmark, model, item)


def answer_by_id(ctx: AppContext, username: str | None, benchmark: str, model: str, item_id: str) -> dict[str, Any]:
    """A live answer to one item of a benchmark, found by its id (the ``model_answer`` endpoint), as JSON."""
    require_role(ctx.database, username, RUN_ROLE)
    found = [item for item in get_benchmark(ctx, benchmark).load_items(ctx) if item.item_id == item_id]
    if not found:
        raise NotFound(f"no item {item_id!r} in benchmark {benchmark!r}")
    return {"item_id": item_id, "model": model, **asdict(answer_item(ctx, benchmark, model, found[0]))}


def recent_runs(ctx: AppContext, username: str | None, limit: int = 20) -> list[dict[str, Any]]:
    """The newest batch runs (live answers, stored as runs of one item, are not runs a person started)."""
    require_role(ctx.database, username, RUN_ROLE)
    return list_runs(ctx.database, limit, include_live=False)
