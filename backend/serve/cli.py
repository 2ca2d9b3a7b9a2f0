"""``compstudio serve MODEL --engine vllm|sglang [--tp N] [--replicas N] [-- ENGINE FLAGS]``, ``serve --stop MODEL``
and ``serve --status [MODEL]`` (:mod:`backend.serve.service`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from backend.serve.engines import ENGINES


def _serve(args: argparse.Namespace) -> Any:
    from backend.cli import context_from
    from backend.errors import ValidationError
    from backend.serve import service

    ctx = context_from(args)
    if args.stop:
        return service.stop(ctx, args.stop)
    if args.status is not None:
        return service.replica_states(ctx, args.status or None)
    if not args.model:
        raise ValidationError("name a model to serve (a registered model, a folder or a Hub id), or --stop / --status")
    ask = service.Request(
        model=args.model,
        engine=args.engine,
        name=args.name,
        tp=args.tp,
        replicas=args.replicas,
        gpus=args.gpus,
        port=args.port,
        host=args.host,
        max_model_len=args.max_model_len,
        extra=tuple(args.engine_flags),
        python=args.python,
        command=args.command or "",
    )
    serving, _, known = service.plan(ctx, ask)
    if args.dry_run:
        return {"name": serving.name, "revision": serving.revision, "replicas": [r.argv for r in serving.replicas]}
    try:
        spec = service.start(ctx, serving, known, tied=not args.detach, timeout_s=args.ready_timeout)
    except KeyboardInterrupt:  # while the replicas load: start() has stopped them
        return {"stopped": serving.name, "by": "interrupt", "before": "ready"}
    ready = {"serving": spec.name, "engine": serving.engine, "revision": spec.options.get("revision")}
    ready["replicas"] = [{"url": r.url, "gpus": r.gpus, "log": r.log} for r in serving.replicas]
    if args.detach:
        return ready | {"stop_with": f"compstudio serve --stop {spec.name}"}
    line = ready | {"stop_with": "Ctrl+C, or compstudio serve --stop " + spec.name}
    try:  # one line, once every replica is ready and Ctrl+C is caught: a script can wait for it
        return service.supervise(ctx, spec.name, lambda: print(json.dumps(line), flush=True))
    except KeyboardInterrupt:  # before supervise caught it
        return {**service.stop(ctx, spec.name), "by": "interrupt"}


def register(sub: Any, groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    serve = sub.add_parser(
        "serve",
        parents=[common],
        help="start vLLM or SGLang as managed replicas and register them (Ctrl+C or --stop ends them)",
        description="Start an engine's OpenAI-compatible server, one replica per GPU or per --tp GPUs (or --replicas "
        "N without GPUs), register every replica URL in the model's entry, and stop them all on Ctrl+C. Engine "
        "flags after -- pass through.",
    )
    serve.add_argument("model", nargs="?", help="a registered transformers model, a model folder or a Hub id")
    serve.add_argument("--engine", choices=list(ENGINES), default="vllm", help="the serving engine (default vllm)")
    serve.add_argument("--name", default=None, help="the registry name (default: MODEL-ENGINE, or the folder's name)")
    serve.add_argument("--tp", type=int, default=1, help="tensor-parallel size: GPUs per replica")
    serve.add_argument("--replicas", type=int, default=None, help="replicas (default: every GPU group; 1 on CPU)")
    serve.add_argument("--gpus", default=None, help="the GPUs to use, e.g. 0,1,2,3 (default: every GPU)")
    serve.add_argument("--port", type=int, default=None, help="the first replica's port (default: free ports)")
    serve.add_argument("--host", default="127.0.0.1", help="the address replicas listen on (0.0.0.0: other hosts)")
    serve.add_argument("--max-model-len", type=int, default=None, help="context length (default: the model's, capped)")
    serve.add_argument("--python", default=None, help="the Python of the engine's own venv (default: this one)")
    serve.add_argument("--command", default=None, help="--engine command: a command line with {port}, {model}, {name}")
    serve.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for each replica's health")
    serve.add_argument("--detach", action="store_true", help="return once ready; the replicas run until serve --stop")
    serve.add_argument("--dry-run", action="store_true", help="print each replica's command line and start nothing")
    serve.add_argument("--stop", metavar="NAME", default=None, help="stop every replica of a served model")
    serve.add_argument("--status", metavar="NAME", nargs="?", const="", default=None, help="replicas and their state")
    serve.set_defaults(engine_flags=[])  # what follows `--` on the command line (backend.cli.main)
    serve.set_defaults(handler=_serve)
