"""``models test``: one call to a model, its latency, and who answered.

:func:`probe_model` loads the model (through the app's pool), asks one short question, and reports the reply,
the latency of that call (loading excluded, reported apart), the revision its answers are keyed under
(:func:`backend.inference.revision.current_revision`: for a served model, what its server says it serves) and, for an OpenAI-compatible server, what each replica
says it serves (``GET /v1/models``: the served names, the weights' folder ``root`` and ``max_model_len`` where
the server gives them; ``GET /version``). ``replicas_agree`` is true only when every replica answered and all serve
the same weights (an unreachable replica is not agreeing); ``serves_this_model`` is false when a replica that
answered does not list the model's served name. Either makes ``ok`` false with a sentence in ``problems``, even when
the call itself answered (a server answering under another name is not the model asked for). ``warnings`` say what
cannot be checked (:func:`backend.inference.revision.revision_warnings`: weights not verifiable on a server someone
else started).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from backend.errors import CompStudioError
from backend.inference.request import GenerationParams, text

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.registry import ModelSpec

PROBE_PROMPT = "Reply with the single word: ready"


def replica_identities(backend: Any) -> list[dict[str, Any]] | None:
    """What each replica of an openai backend serves (None for other backends)."""
    transport = getattr(backend, "transport", None)
    if transport is None:
        return None
    versions = {r["url"]: r for r in transport.get_each("version", from_root=True)}
    out = []
    for entry in transport.get_each("models"):
        listing = (entry.get("json") or {}).get("data") if entry.get("status") == 200 else None
        version = versions.get(entry["url"], {})
        row: dict[str, Any] = {"url": entry["url"], "status": entry.get("status")}
        if entry.get("error"):
            row["error"] = entry["error"]
        if isinstance(listing, list):
            row["served"] = [
                {k: m.get(k) for k in ("id", "root", "max_model_len") if m.get(k) is not None}
                for m in listing
                if isinstance(m, dict)
            ]
        if version.get("status") == 200 and isinstance(version.get("json"), dict):
            row["version"] = version["json"].get("version")
        out.append(row)
    return out


def probe_model(ctx: AppContext, name: str, prompt: str = PROBE_PROMPT) -> dict[str, Any]:
    """One call to model ``name`` (see the module docstring); a failed call is reported, not raised."""
    from backend.inference.registry import get_spec

    return probe_spec(ctx, get_spec(ctx, name), prompt)


def probe_spec(ctx: AppContext, spec: ModelSpec, prompt: str = PROBE_PROMPT) -> dict[str, Any]:
    """:func:`probe_model` for a spec (the Models tab tests an entry before it is saved)."""
    from backend.inference.revision import current_revision

    began = time.perf_counter()
    backend = ctx.pool.get(spec)
    load_ms = (time.perf_counter() - began) * 1000
    result: dict[str, Any] = {"model": spec.name, "backend": spec.backend, "path": spec.path}
    began = time.perf_counter()
    try:
        with ctx.pool.slot():
            began = time.perf_counter()  # the call's latency, not the wait for the model queue
            reply = backend.generate([[text(prompt)]], GenerationParams(max_new_tokens=8))[0]
        result.update(ok=True, reply=reply)
    except (CompStudioError, RuntimeError, OSError, ValueError) as exc:
        result.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
    result["latency_ms"] = round((time.perf_counter() - began) * 1000, 1)
    result["load_ms"] = round(load_ms, 1)
    try:
        result["revision"] = current_revision(ctx, spec, refresh=True)
    except (CompStudioError, OSError) as exc:
        result["revision"] = f"unknown ({exc})"
    replicas = replica_identities(backend)
    if replicas is not None:
        result["replicas"] = replicas
        result.update(replica_checks(spec.path, replicas))
        if result["problems"]:
            result["ok"] = False
        from backend.inference.revision import revision_warnings, served_identity

        result["warnings"] = revision_warnings(spec, served_identity(ctx, spec))
    return result


def replica_checks(served_name: str, replicas: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the replicas agree and serve ``served_name``, and the sentences that say what is wrong.

    >>> up = {"url": "http://a/v1", "served": [{"id": "m", "root": "/w"}]}
    >>> replica_checks("m", [up, {"url": "http://b/v1", "error": "ConnectError"}])["replicas_agree"]
    False
    >>> replica_checks("other", [up])["problems"]
    ["http://a/v1 does not serve 'other' (it serves: m)"]
    """
    reachable = [r for r in replicas if "served" in r]
    unreachable = [r["url"] for r in replicas if "served" not in r]
    served = {tuple(sorted((m.get("id"), m.get("root")) for m in r["served"])) for r in reachable}
    problems = [f"replica {url} unreachable" for url in unreachable]
    if len(served) > 1:
        problems.append("replicas serve different weights")
    elsewhere = [r for r in reachable if not any(m.get("id") == served_name for m in r["served"])]
    for r in elsewhere:
        names = ", ".join(str(m.get("id")) for m in r["served"]) or "nothing"
        problems.append(f"{r['url']} does not serve {served_name!r} (it serves: {names})")
    return {
        "replicas_agree": not unreachable and len(served) <= 1,
        "serves_this_model": bool(reachable) and not elsewhere,
        "unreachable": unreachable,
        "problems": problems,
    }
