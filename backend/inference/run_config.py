"""Run files: ``run.yaml`` names a run's model, benchmark, settings and options; ``eval --config`` runs one.

Every batch run writes one beside its record, ``<data_dir>/runs/<run id>/run.yaml`` (and ``eval --out DIR`` a copy
in ``DIR``). It holds the model's whole registry entry (not only its name, so a later edit of the registry does
not change what the file means), the benchmark with its load options, ``limit``, the ``gen`` overrides and the
judge, and under ``expect`` the prediction key and data-set hash the run had. ``compstudio eval --config
run.yaml`` runs it again: the same key, so the stored answers are reused (nothing is recomputed) and the numbers
are the same; its summary says whether the key and the data set matched (``reproduces``). Flags given beside
``--config`` override the file's values. Example::

    benchmark: mmcomposition
    model: {name: qwen2-vl-2b, backend: transformers, path: Qwen/Qwen2-VL-2B-Instruct, batch_size: 8}
    limit: 100
    gen: {max_new_tokens: 16}
    options: {circular: true}
    judge: off

A model given as a mapping that is not in the registry, or differs from the registry's entry of that name, is
used for this command only (the registry file is not changed; ``models add`` does that).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import ImportFileError, ValidationError
from backend.inference.overrides import generation_overrides

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.runner import RunSummary

RUN_FILE = "run.yaml"


@dataclass(frozen=True)
class RunConfig:
    benchmark: str
    model: str | dict[str, Any]  # a registered name, or a model entry
    limit: int | None = None
    gen: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the benchmark's load options
    judge: str | None = None
    retry_failed: bool = False
    expect: dict[str, Any] | None = None  # what the run that wrote the file had: settings_hash, content_hash

    @property
    def model_name(self) -> str:
        return str(self.model["name"]) if isinstance(self.model, dict) else self.model


def config_from_dict(data: Any, source: str = "run file") -> RunConfig:
    """A :class:`RunConfig` from a parsed file; ``ValidationError`` naming every problem."""
    if not isinstance(data, dict):
        raise ValidationError(f"{source}: expected a mapping of benchmark, model, limit, gen, options, judge")
    known = {f.name for f in fields(RunConfig)}
    problems = [f"{source}: unknown key {key!r}; valid: {', '.join(sorted(known))}" for key in data if key not in known]
    for key in ("benchmark", "model"):
        if not data.get(key):
            problems.append(f"{source}: {key} is required")
    if isinstance(data.get("model"), dict) and not data["model"].get("name"):
        problems.append(f"{source}: a model entry needs a name")
    for key in ("gen", "options"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            problems.append(f"{source}: {key} must be a mapping (key: value)")
    limit = data.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        problems.append(f"{source}: limit must be a whole number of items (at least 1)")
    if problems:
        raise ValidationError(problems)
    judge = data.get("judge")
    return RunConfig(
        benchmark=str(data["benchmark"]),
        model=data["model"] if isinstance(data["model"], dict) else str(data["model"]),
        limit=limit,
        gen=generation_overrides(data.get("gen")),
        options=dict(data.get("options") or {}),
        judge="off" if judge is False else (None if judge is None else str(judge)),
        retry_failed=bool(data.get("retry_failed", False)),
        expect=data.get("expect"),
    )


def read_config(path: Path) -> RunConfig:
    """Read ``run.yaml`` (YAML, or JSON, which YAML reads too)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ImportFileError(str(path), None, "file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ImportFileError(str(path), mark.line + 1 if mark else None, f"not valid YAML ({exc})") from None
    return config_from_dict(data, str(path))


def with_flags(config: RunConfig, **flags: Any) -> RunConfig:
    """``config`` with the command line's values where it gave one (None: not given); ``gen`` and ``options``
    are merged key by key."""
    changes = {k: v for k, v in flags.items() if v is not None and k not in {"gen", "options"}}
    merged = replace(config, **changes)
    if flags.get("gen"):
        merged = replace(merged, gen={**merged.gen, **generation_overrides(flags["gen"])})
    if flags.get("options"):
        merged = replace(merged, options={**merged.options, **flags["options"]})
    return merged


def run_config_from_args(args: Any) -> RunConfig:
    """The run ``eval`` was asked for: ``--config`` with the flags over it, or the flags alone."""
    from backend.inference.overrides import parse_pairs

    flags = {
        "benchmark": args.benchmark,
        "model": args.model,
        "limit": args.limit,
        "judge": args.judge,
        "retry_failed": True if args.retry_failed else None,
        "gen": parse_pairs(args.gen, "--gen"),
        "options": parse_pairs(args.option, "--benchmark-option"),
    }
    if args.config is not None:
        return with_flags(read_config(args.config), **flags)
    if not args.benchmark or not args.model:
        raise ValidationError("name the run: --benchmark NAME --model NAME, or --config run.yaml")
    return config_from_dict({k: v for k, v in flags.items() if v is not None and v != {}}, "the command line")


def use_model(ctx: AppContext, config: RunConfig) -> tuple[str, str | None]:
    """The model name to run, and a note when the file's entry is used in place of the registry's."""
    from backend.errors import NotFound
    from backend.inference.registry import get_spec, spec_from_dict

    if not isinstance(config.model, dict):
        return config.model, None
    spec = spec_from_dict(dict(config.model), ctx.models.backends)
    try:
        registered = get_spec(ctx, spec.name)
    except NotFound:
        registered = None
    if registered == spec:
        return spec.name, None
    ctx.models.register_model(spec)  # this process only: the registry file is left as it is
    why = "is not in the registry" if registered is None else "differs from the registry's entry"
    return spec.name, f"model {spec.name} {why}: this run uses the entry in the run file"


def run_file_data(ctx: AppContext, summary: RunSummary, config: RunConfig) -> dict[str, Any]:
    """What ``run.yaml`` holds for a finished run (the model's whole entry)."""
    from backend.inference.registry import get_spec

    manifest = summary.manifest or {}
    data: dict[str, Any] = {
        "benchmark": summary.benchmark,
        "model": get_spec(ctx, summary.model).as_dict(),
        "limit": config.limit,
        "gen": dict(config.gen),
        "options": dict(config.options),
        "judge": config.judge,
    }
    if config.retry_failed:
        data["retry_failed"] = True
    data["expect"] = {
        "settings_hash": manifest.get("key", {}).get("settings_hash"),
        "content_hash": manifest.get("dataset", {}).get("content_hash"),
        "items": summary.items,
        "run_id": summary.run_id,
    }
    return data


def write_run_file(folder: Path, data: dict[str, Any]) -> Path:
    """Write ``folder/run.yaml`` (atomically) and return its path."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RUN_FILE
    tmp = path.with_suffix(".yaml.tmp")
    header = "# CompStudio run file: `compstudio eval --config run.yaml` runs it again (docs/evaluation-cli.md)\n"
    body = yaml.safe_dump(_plain(data), sort_keys=False, allow_unicode=True)
    tmp.write_text(header + body, encoding="utf-8")
    tmp.replace(path)
    return path


def _plain(value: Any) -> Any:
    """Tuples as lists, so the YAML stays plain (safe_dump refuses tuples)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def run_folder(ctx: AppContext, run_id: int) -> Path:
    return ctx.settings.data_dir / "runs" / str(run_id)


def record_run(ctx: AppContext, summary: RunSummary, config: RunConfig) -> Path | None:
    """Write the run file of a finished run beside its record; None when the disk refused (the run stands)."""
    try:
        return write_run_file(run_folder(ctx, summary.run_id), run_file_data(ctx, summary, config))
    except OSError:
        return None


def reproduces(config: RunConfig, summary: RunSummary) -> dict[str, Any] | None:
    """Whether a run from a run file had the key and data set the file expects (None: it expects nothing)."""
    if not config.expect:
        return None
    manifest = summary.manifest or {}
    key = manifest.get("key", {}).get("settings_hash")
    content = manifest.get("dataset", {}).get("content_hash")
    return {
        "settings_hash": key == config.expect.get("settings_hash"),
        "content_hash": content == config.expect.get("content_hash"),
    }


def as_dict(config: RunConfig) -> dict[str, Any]:
    return asdict(config)
