"""``compstudio models list|add|test|remove``: the model registry from the command line.

``models add NAME --backend openai --path SERVED_NAME --base-url URL [--base-url URL]... [--backend-option k=v]...`` is
what lmms-eval's ``--model_args pretrained=...,base_url=...`` says, kept in ``<data-dir>/models.json`` so every
command, tab and report uses the same entry. ``models test NAME`` makes one call and prints its latency and
what answered (:func:`backend.inference.probe.probe_model`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from backend.terminal import add_output_flags, add_pairs_flag, show, table


def batch_size(text: str) -> int | str:
    """``--batch-size``: a number, or ``auto`` (the largest batch that fits, searched during the run).

    >>> batch_size("8"), batch_size("auto")
    (8, 'auto')
    """
    return "auto" if text.strip().lower() == "auto" else int(text)


SPEC_FLAGS = (  # flag -> ModelSpec field, converted, and its help
    ("dtype", str, "weights' dtype: auto (bfloat16 on a GPU, float32 on CPU), float32, bfloat16, float16"),
    ("device", str, "auto (the GPU when there is one), cpu, cuda, cuda:1, ..."),
    ("batch_size", batch_size, "items per call (in-process models), or auto: the largest that fits; never in the key"),
    ("max_new_tokens", int, "answer length limit when the benchmark sets none"),
    ("frames_per_video", int, "frames sampled from each video"),
    ("max_image_side", int, "images are shrunk so their longer side is at most this many pixels"),
    ("prompt_style", str, "chat (the model's chat template) or plain (text as is, for base models)"),
    ("scoring", str, "generate (answers parsed) or likelihood (options scored by log-probability)"),
    ("concurrency", int, "requests in flight at once (openai)"),
    ("description", str, "a sentence shown in the Models tab"),
)


def option_value(text: str) -> Any:
    """A ``--backend-option`` value: JSON when it parses (numbers, true/false, lists), else the text.

    >>> option_value("8"), option_value("true"), option_value('["a", "b"]'), option_value("http://h:8000/v1")
    (8, True, ['a', 'b'], 'http://h:8000/v1')
    """
    try:
        return json.loads(text)
    except ValueError:
        return text


def spec_data(args: argparse.Namespace) -> dict[str, Any]:
    """The registry entry the flags of ``models add`` describe."""
    from backend.inference.overrides import parse_pairs

    options = {key: option_value(value) for key, value in parse_pairs(args.option, "--backend-option").items()}
    if args.base_url:
        options["base_url"] = args.base_url[0] if len(args.base_url) == 1 else list(args.base_url)
    data: dict[str, Any] = {"name": args.name, "backend": args.backend, "path": args.path or "", "options": options}
    for name, _kind, _help in SPEC_FLAGS:
        value = getattr(args, name)
        if value is not None:
            data[name] = value
    return data


def _add(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.registry import registry_path, spec_from_dict
    from backend.inference.service import store_model

    ctx = context_from(args)
    spec = spec_from_dict(spec_data(args), ctx.models.backends)
    if spec.backend == "openai":
        from backend.inference.backends.transport import TransportOptions

        TransportOptions.from_spec(spec)  # bad URLs or limits fail now, not at the first run
    stored = store_model(ctx, "cli", spec, replace=args.replace)
    return {"added": stored.as_dict(), "registry": str(registry_path(ctx.settings))}


def _remove(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.service import remove_model

    return {"removed": args.name, "models": remove_model(context_from(args), "cli", args.name)}


def _list(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.inference.registry import list_models

    specs = [spec.as_dict() for spec in list_models(context_from(args)).values()]

    def render(rows: list[dict[str, Any]]) -> str:
        keep = ("name", "backend", "path", "batch_size", "concurrency", "scoring", "prompt_style")
        return table([{k: r[k] for k in keep} | {"base_url": r["options"].get("base_url")} for r in rows])

    return show(args, specs, render)


def _test(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.errors import InferenceError
    from backend.inference.probe import probe_model

    ctx = context_from(args)
    try:
        result = probe_model(ctx, args.name)
    finally:
        ctx.pool.unload()
    shown = show(args, result, _probe_table)
    if not result["ok"]:
        if shown is not None:
            from backend.cli import emit

            emit(shown)
        failed = [f"did not answer: {result['error']}"] if result.get("error") else []
        why = "; ".join(failed + list(result.get("problems") or []))
        raise InferenceError(f"model {args.name}: {why}")
    return shown


def _probe_table(result: dict[str, Any]) -> str:
    """The probe as a table, then the revision as it is (its ``|`` kept), replicas, problems and warnings."""
    head = {k: result.get(k) for k in ("model", "backend", "path", "ok", "latency_ms", "load_ms")}
    parts = [
        table([head]),
        f"revision: {result.get('revision')}",
        f"reply: {result.get('reply', result.get('error'))!r}",
    ]
    if "replicas" in result:
        rows = [
            {
                "replica": r["url"],
                "status": r.get("status") or "unreachable",
                "served": ", ".join(str(m.get("id")) for m in r.get("served", [])) or r.get("error"),
                "root": ", ".join(str(m.get("root")) for m in r.get("served", []) if m.get("root")),
                "max_model_len": ", ".join(
                    str(m.get("max_model_len")) for m in r.get("served", []) if m.get("max_model_len")
                ),
                "version": r.get("version"),
            }
            for r in result["replicas"]
        ]
        parts.append(table(rows, title="replicas"))
        parts.append(
            f"replicas agree: {result['replicas_agree']}; serve {result['path']!r}: {result['serves_this_model']}"
        )
    parts += [f"problem: {p}" for p in result.get("problems") or []]
    parts += [f"warning: {w}" for w in result.get("warnings") or []]
    return "\n\n".join(parts)


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    models = sub.add_parser("models", help="the model registry (<data-dir>/models.json): list, add, test, remove")
    actions = models.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", parents=[common], help="list registered models")
    add_output_flags(listing)
    listing.set_defaults(handler=_list)

    add = actions.add_parser("add", parents=[common], help="register a model (an lmms-eval --model_args, kept)")
    add.add_argument("name", help="the name every command and tab uses")
    add.add_argument("--backend", required=True, help="transformers, openai (or another registered backend)")
    add.add_argument("--path", default=None, help="transformers: a folder or Hub id; openai: the served model name")
    add.add_argument(
        "--base-url",
        action="append",
        default=None,
        metavar="URL",
        help="openai: the server's /v1 URL; repeat for replicas (one per GPU or node, or routers)",
    )
    add_pairs_flag(
        add,
        "backend-option",
        "a backend option, repeatable (values as JSON when they parse). openai: api_key_env, revision, timeout_s, "
        "retries, adaptive_concurrency=true, min_concurrency, max_concurrency, native_video=true, extra_body; "
        "transformers: model_class=causal-lm, native_video=true, attn_implementation, revision; speed only (never "
        "in the key): static_cache=true, compile=false, max_batch_size, device_map",
    )
    for name, kind, text in SPEC_FLAGS:
        add.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None, help=text)
    add.add_argument("--replace", action="store_true", help="overwrite an entry of the same name")
    add.set_defaults(handler=_add)

    test = actions.add_parser("test", parents=[common], help="one call: latency, reply and what the server serves")
    test.add_argument("name")
    add_output_flags(test)
    test.set_defaults(handler=_test)

    remove = actions.add_parser("remove", parents=[common], help="remove a model from the registry file")
    remove.add_argument("name")
    remove.set_defaults(handler=_remove)
