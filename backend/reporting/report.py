"""One report across the three benchmarks for chosen models (issue 14, part 6), read from what is stored.

Every figure comes from the benchmark's own result function; nothing is scored differently here:

* **Planning** (ViLPAct): :func:`backend.planning.leaderboard.leaderboard`, plain and circular (all six
  rotations), accuracy with its 95% bootstrap interval, by future length and by scene; the blind
  ``bigram-prior`` and chance (1/6) beside the models.
* **VQA** (MMComposition): :func:`backend.vqa.runs.leaderboard`, partial credit (section 3.2) overall, per
  dimension and per category, with the random row and every blind run; the appendix A.4 analysis
  (:mod:`backend.reporting.below_chance`) when model runs exist.
* **In-context** (CoFe): :func:`backend.icl.evaluation.category_breakdown` of each stored run of the models
  (one per setting it was run under), exact match per category.
* **Benchmarks from files** (:mod:`backend.filebench`): score, circular accuracy and consistency of each model
  with answers stored (:func:`backend.filebench.benchmark.report_rows`).
* **Outcomes**: answers read, refused and unparsed, with their rates (:mod:`backend.inference.outcomes`), per
  model and benchmark.

A served model whose server is unreachable is read under its last finished run's key
(:func:`backend.inference.reading.read_key`); the coverage table's ``note`` says so, and the manifest names the run
(``served_unreachable``).

Tables hold percentages (two decimals, as the papers print them); ``sections`` keep the sources' own JSON for the JSON export.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from backend.accounts.auth import require_role
from backend.errors import CompStudioError, ValidationError
from backend.humans.paired import people_rows
from backend.reporting.leaderboards import paper_table
from backend.reporting.plots import BarChart, Chart, IntervalChart, IntervalPoint
from backend.reporting.tables import Report, Table, pct
from backend.storage import utcnow

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.reading import ReadKey

RATES = (("answered (%)", "answered_rate"), ("refused (%)", "refusal_rate"), ("unparsed (%)", "parse_failure_rate"))


def _rates(source: dict[str, Any]) -> dict[str, float | None]:
    return {label: pct(source.get(key)) for label, key in RATES}


def _interval(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "accuracy (%)": pct(entry["accuracy"]),
        "ci95 low": pct(entry["ci95"][0]),
        "ci95 high": pct(entry["ci95"][1]),
    }


def _planning_rows(plain: dict, circular: dict, names: list[str], blind: str) -> list[dict[str, Any]]:
    rows = [{"model": "chance", "kind": "chance", "run": "", "accuracy (%)": pct(plain["chance"])}]
    people = [n for n, entry in plain["runs"].items() if entry.get("kind") == "people"]
    for name in [*people, *names]:
        entry, circ = plain["runs"][name], circular["runs"].get(name)
        kind = "people" if name in people else "blind baseline" if name == blind else "model"
        row = {"model": name, "kind": kind, "run": entry["run"]}
        row |= _interval(entry)
        row |= (
            {f"circular {k}": v for k, v in _interval(circ).items()}
            if circ
            else dict.fromkeys(("circular accuracy (%)", "circular ci95 low", "circular ci95 high"))
        )
        row["circular n"] = circ["n"] if circ else 0
        row["consistency (%)"] = pct(circ.get("consistency_rate")) if circ else None
        rows.append(row | _rates(entry))
    keys = list(rows[-1]) if len(rows) > 1 else list(rows[0])
    return [{k: row.get(k) for k in keys} for row in rows]


def _breakdown_rows(plain: dict, names: list[str], field: str, label: str) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        for group, entry in plain["runs"][name][field].items():
            rows.append({"model": name, label: group, **_interval(entry), "n": entry["n"]})
    return rows


def planning_section(
    ctx: AppContext, models: Sequence[str], samples: int
) -> tuple[list[Table], dict[str, Chart], dict]:
    """Planning tables (overall, by length, by scene) and the interval plot of plain and circular accuracy."""
    from backend.planning.leaderboard import BLIND_BASELINE, leaderboard

    plain = leaderboard(ctx.database, BLIND_BASELINE, False, samples, ctx)
    circular = leaderboard(ctx.database, None, True, samples, ctx)
    names = [m for m in (*models, BLIND_BASELINE) if m in plain["runs"]]
    names = list(dict.fromkeys(names))
    tables = [
        Table(
            "planning",
            "Planning (ViLPAct): accuracy, plain and circular, 95% bootstrap intervals",
            _planning_rows(plain, circular, names, BLIND_BASELINE),
        ),
        Table(
            "planning_by_length",
            "Planning accuracy by future length",
            _breakdown_rows(plain, names, "by_length", "length"),
        ),
        Table("planning_by_scene", "Planning accuracy by scene", _breakdown_rows(plain, names, "by_scene", "scene")),
    ]
    people = [p for p in plain["people_vs_models"] if p["model"] in names]
    if people:
        title = "Planning: each model against people, on the questions both answered (right or not; exact McNemar)"
        tables.append(Table("planning_people", title, people_rows(people)))
    points = []
    for name in names:
        for series, board in (("plain", plain), ("circular", circular)):
            entry = board["runs"].get(name)
            if entry and entry["n"]:
                points.append(
                    IntervalPoint(name, series, 100 * entry["accuracy"], 100 * entry["ci95"][0], 100 * entry["ci95"][1])
                )
    charts: dict[str, Chart] = (
        {"planning_accuracy": IntervalChart("Planning accuracy (95% interval)", points)} if points else {}
    )
    keep = {"questions": plain["questions"], "chance": plain["chance"], "baseline": plain["baseline"]}
    section = keep | {
        "runs": {n: plain["runs"][n] for n in names},
        "circular": {n: circular["runs"][n] for n in names if n in circular["runs"]},
    }
    return tables, charts, section


def vqa_section(ctx: AppContext, username: str, models: Sequence[str]) -> tuple[list[Table], dict[str, Chart], dict]:
    """VQA scores (overall, dimensions, categories) of the models' runs, every blind run, random and human."""
    from backend.reporting.below_chance import below_chance_report
    from backend.vqa import runs
    from backend.vqa.categories import DIMENSIONS

    run_model = {r.id: r.model for r in runs.list_runs(ctx)}
    board = [
        row
        for row in runs.leaderboard(ctx, username)
        if row["kind"] in ("random", "people", "blind") or run_model.get(row["name"]) in models or row["name"] in models
    ]
    scores = [
        {
            "run": r["name"],
            "kind": r["kind"],
            "overall (%)": r["overall"],
            "ci95 low": r.get("ci95_low"),
            "ci95 high": r.get("ci95_high"),
            **{d: r[d] for d in DIMENSIONS},
            "questions": r["questions"],
        }
        | {label: pct(r.get(key)) for label, key in RATES}
        for r in board
    ]
    categories = runs.category_order()
    per_category = [{"run": r["name"], **{c: r[c] for c in categories}} for r in board]
    shown = {r["name"] for r in board}
    compared = runs.comparison(ctx, username, samples=ctx.settings.bootstrap_samples)
    people = [p for p in compared["people_vs_models"] if p["model"] in shown and p["people"] in shown]
    tables = [
        Table("vqa", "VQA (MMComposition): partial credit (%), overall and per dimension", scores),
        Table(
            "vqa_paper",
            "VQA per category (%), as MMComposition's Table 2 prints it: people, the models, Random Choice",
            paper_table(board),
        ),
        Table("vqa_categories", "VQA per category (%), with the random row", per_category),
    ]
    if people:  # tables only some reports have (an empty one would export an empty CSV)
        title = "VQA: each model against people, on the items both answered (fully right or not; exact McNemar)"
        tables.append(Table("vqa_people", title, people_rows(people)))
    position = position_table(ctx, username, [m for m in models if m in shown])
    if position.rows:
        tables.append(position)
    series = [(r["name"], [r[c] for c in categories]) for r in board]
    charts: dict[str, Chart] = {"vqa_categories": BarChart("VQA per category (%)", categories, series)} if board else {}
    section: dict[str, Any] = {"rows": board, "people_vs_models": people}
    try:
        analysis = runs.low_cpv_analysis(ctx, username)
    except CompStudioError:  # no model runs yet: no appendix A.4 analysis
        analysis = None
    if analysis is not None:
        below_tables, below_charts = below_chance_report(analysis)
        tables += below_tables
        charts |= below_charts
        section["below_chance"] = {k: v for k, v in analysis.items() if k != "per_question"}
    return tables, charts, section


def position_table(ctx: AppContext, username: str, models: Sequence[str]) -> Table:
    """What circular evaluation reveals about each of ``models`` run under rotation (or both ways) on VQA
    (:func:`backend.vqa.circular.position_report`)."""
    from backend.reporting.leaderboards import position_rows
    from backend.vqa.circular import position_report

    figures = position_report(ctx, username, list(models))["models"] if models else []
    kept = [f for f in figures if f["flip"]["items"] or (f["both_ways"] and f["both_ways"]["items"])]
    title = (
        "VQA under circular evaluation: flips under rotation, answers per position against uniform (χ²), "
        "generation vs likelihood (people answer the options as authored: no rotation to measure)"
    )
    return Table("position_bias", title, position_rows(kept))


def setting_label(load_options: dict[str, Any] | None) -> str:
    """How an in-context run was set up, in a few words.

    >>> setting_label({"setting": "random", "n": "4", "order": "atom_closer"})
    'random · n=4 · atom_closer'
    >>> setting_label(None)
    'full_similarity · n=10 · structure_closer'
    """
    options = load_options or {}
    parts = [
        str(options.get("setting", "full_similarity")),
        f"n={options.get('n', 10)}",
        str(options.get("order", "structure_closer")),
    ]
    if str(options.get("matching", "both")) != "both":
        parts.append(f"matching={options['matching']}")
    if str(options.get("fictional", False)).lower() in {"true", "1", "yes"}:
        parts.append("fictional")
    return " · ".join(parts)


RANKED_STATUSES = ("finished", "finished with errors")  # a failed run (no successful item) is not reported


def _icl_runs(ctx: AppContext, models: Sequence[str]) -> list[tuple[str, dict | None, int | None]]:
    """(model, load options, limit) of every distinct stored in-context run of ``models``, newest first."""
    from backend.inference.store import list_runs

    seen: dict[str, tuple[str, dict | None, int | None]] = {}
    for run in list_runs(ctx.database, limit=100_000):
        if run["benchmark"] != "icl" or run["model"] not in models or run["status"] not in RANKED_STATUSES:
            continue
        options = run["options"] or {}
        if options.get("live"):
            continue  # a live answer is a run of one item: its setting's batch runs are what is reported
        loaded = options.get("load_options") or {}
        # one entry per setting as the report names it (``n=4`` from the command line is the same run as 4)
        same = [setting_label(loaded), loaded.get("bank"), loaded.get("tests"), options.get("limit")]
        key = json.dumps([run["model"], *same], sort_keys=True, default=str)
        seen.setdefault(key, (run["model"], options.get("load_options"), options.get("limit")))
    return list(seen.values())


def icl_section(ctx: AppContext, models: Sequence[str]) -> tuple[list[Table], dict[str, Chart], dict]:
    """Exact match per category and setting of the models' stored in-context runs (under current settings)."""
    from backend.icl.evaluation import category_breakdown

    rows, skipped, found = [], [], {}
    for model, options, limit in _icl_runs(ctx, models):
        label = setting_label(options)
        try:
            result = category_breakdown(ctx, model, options, limit)
        except (KeyError, CompStudioError):  # answers stored under other settings, or a set since removed
            skipped.append({"model": model, "setting": label})
            continue
        found[f"{model} | {label}"] = result
        for category, counts in result["outcomes_by_category"].items():
            n = sum(int(counts[k]) for k in ("answered", "refusals", "parse_failures", "errors"))
            exact = result["exact_match_by_category"].get(category)
            rows.append(
                {"model": model, "setting": label, "category": category, "exact match (%)": pct(exact), "n": n}
                | _rates(counts)
            )
    tables = [Table("icl", "In-context (CoFe): exact match (%) per category and setting", rows)]
    categories = sorted({r["category"] for r in rows})
    series = [
        (
            name,
            [
                next(
                    (
                        r["exact match (%)"]
                        for r in rows
                        if f"{r['model']} | {r['setting']}" == name and r["category"] == c
                    ),
                    None,
                )
                for c in categories
            ],
        )
        for name in found
    ]
    charts: dict[str, Chart] = (
        {"icl_categories": BarChart("In-context exact match per category (%)", categories, series)} if rows else {}
    )
    return tables, charts, {"runs": found, "not_under_current_settings": skipped}


def file_benchmarks_section(ctx: AppContext, models: Sequence[str]) -> tuple[list[Table], dict]:
    """Benchmarks imported from files (:mod:`backend.filebench`): per benchmark and model with answers stored,
    the score on the items as authored, circular accuracy and consistency (items with every rotation answered)
    and how answers were read."""
    from backend.filebench.benchmark import file_benchmark_names, report_rows

    found = [row for name in file_benchmark_names(ctx) for m in models if (row := report_rows(ctx, name, m))]
    rows = [
        {
            "benchmark": r["benchmark"],
            "model": r["model"],
            "run": r["run"],
            "score (%)": pct(r["score"]),
            "circular accuracy (%)": pct(r["circular_accuracy"]),
            "consistency (%)": pct(r["consistency_rate"]),
            "circular n": r["circular_complete"],
        }
        | _rates(r)
        for r in found
    ]
    title = "Benchmarks from files: score, circular accuracy and consistency (%)"
    return ([Table("file_benchmarks", title, rows)] if rows else []), {"rows": found}


def outcomes_table(planning: Table, vqa: Table, icl: Table, files: Table | None = None) -> Table:
    """Answers read, refused and unparsed, per model and benchmark, side by side."""
    rows = [
        {"benchmark": "planning", "model": r["model"], **{k: r[k] for k, _ in RATES}}
        for r in planning.rows
        if r["kind"] not in ("chance", "people")
    ]
    rows += [
        {"benchmark": "vqa", "model": r["run"], **{k: r[k] for k, _ in RATES}}
        for r in vqa.rows
        if r["kind"] not in ("random", "people")
    ]
    rows += [
        {"benchmark": r["benchmark"], "model": r["model"], **{k: r[k] for k, _ in RATES}}
        for r in (files.rows if files else [])
    ]
    totals: dict[str, dict[str, float]] = {}
    for r in icl.rows:
        entry = totals.setdefault(f"{r['model']} | {r['setting']}", dict.fromkeys(["n", *(k for k, _ in RATES)], 0.0))
        entry["n"] += r["n"]
        for k, _ in RATES:
            entry[k] += (r[k] or 0.0) * r["n"]
    for name, entry in totals.items():
        rows.append(
            {
                "benchmark": "icl",
                "model": name,
                **{k: round(entry[k] / entry["n"], 1) if entry["n"] else None for k, _ in RATES},
            }
        )
    return Table("outcomes", "Answers read, refused and unparsed (%), per model and benchmark", rows)


REPORTED = ("vilpact-planning", "mmcomposition", "icl")  # the benchmarks whose keys the manifest names


def read_keys(ctx: AppContext, models: Sequence[str]) -> dict[str, dict[str, ReadKey]]:
    """Per model and benchmark of :data:`REPORTED`, the key its answers are read under
    (:func:`backend.inference.reading.read_key`: a served model whose server is down, its last run's)."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec

    return {m: {b: read_key(ctx, get_benchmark(ctx, b), get_spec(ctx, m)) for b in REPORTED} for m in models}


def manifest(
    ctx: AppContext, models: Sequence[str], keys: dict[str, dict[str, ReadKey]] | None = None
) -> dict[str, Any]:
    """What the report was computed under: each model's fingerprint and the settings hash its answers are
    read under per benchmark (model revision included; ``keys``, default :func:`read_keys`), with
    ``served_unreachable`` naming the run shown for a served model whose server is down, and the run manifest
    (backend/inference/manifest.py) of the latest finished run under each of those keys."""
    from backend.inference.registry import get_spec
    from backend.inference.store import run_manifests

    keys = keys if keys is not None else read_keys(ctx, models)
    out: dict[str, Any] = {"generated_at": utcnow(), "bootstrap_samples": ctx.settings.bootstrap_samples, "models": {}}
    found: set[tuple[str, str, str]] = set()
    for model in models:
        spec = get_spec(ctx, model)
        hashes = {b: k.settings_hash for b, k in keys[model].items()}
        found |= {(model, b, h) for b, h in hashes.items()}
        entry = {"fingerprint": spec.fingerprint(), "settings_hash": hashes, "spec": spec.as_dict()}
        down = {
            b: {"error": k.unreachable, "url": k.url, "run": k.last_run.run_id if k.last_run else None}
            | ({"revision": k.last_run.revision} if k.last_run else {})
            for b, k in keys[model].items()
            if k.unreachable is not None
        }
        out["models"][model] = entry | ({"served_unreachable": down} if down else {})
    out["runs"] = [entry for entry in run_manifests(ctx.database, found) if entry["manifest"]]
    return out


def parse_models(text: str | Sequence[str] | None) -> list[str]:
    """Model names from ``"A,B"`` or a list, stripped, duplicates dropped.

    >>> parse_models(" a, b ,a,")
    ['a', 'b']
    """
    items = text.split(",") if isinstance(text, str) else list(text or [])
    return list(dict.fromkeys(m.strip() for m in items if m and m.strip()))


def results_found(
    names: Sequence[str],
    planning: dict,
    vqa: dict,
    icl: dict,
    files: dict | None = None,
    notes: dict[str, str] | None = None,
) -> Table:
    """Each chosen model and where it has results; a model with none is listed "no results yet" (never left
    out without a word). A run's name is the model's, or the model's followed by `` [...]``. ``notes``: the
    sentence of each served model whose server is unreachable (a ``note`` column then, for every model)."""

    def of(model: str, run_names: Sequence[str], separator: str = " [") -> bool:
        return any(n == model or n.startswith(model + separator) for n in run_names)

    rows = []
    for model in names:
        where = {
            "planning": of(model, list(planning.get("runs", {}))),
            "vqa": of(model, [r["name"] for r in vqa.get("rows", []) if r["kind"] not in ("random", "people")]),
            "in-context": of(model, list(icl.get("runs", {})), " | "),
            "from files": any(r["model"] == model for r in (files or {}).get("rows", [])),
        }
        shown = ", ".join(k for k, v in where.items() if v) or "no results yet"
        rows.append({"model": model, **{k: "yes" if v else "" for k, v in where.items()}, "results": shown})
    if notes:
        rows = [row | {"note": notes.get(row["model"], "")} for row in rows]
    return Table("coverage", "The models of this report and where they have results", rows)


def build_report(ctx: AppContext, username: str | None, models: str | Sequence[str] | None) -> Report:
    """The report of ``models`` (registered model names) on the three benchmarks (reviewers and admins)."""
    from backend.inference.reading import combined_note
    from backend.inference.registry import get_spec

    user = require_role(ctx.database, username, "reviewer")
    names = parse_models(models)
    if not names:
        raise ValidationError("choose at least one model for the report (e.g. --models random,bigram-prior)")
    for name in names:
        get_spec(ctx, name)  # NotFound names the valid models
    keys = read_keys(ctx, names)
    notes = {m: note for m in names if (note := combined_note(m, list(keys[m].values())))}
    samples = ctx.settings.bootstrap_samples
    p_tables, p_charts, p_section = planning_section(ctx, names, samples)
    v_tables, v_charts, v_section = vqa_section(ctx, user.username, names)
    i_tables, i_charts, i_section = icl_section(ctx, names)
    f_tables, f_section = file_benchmarks_section(ctx, names)
    outcomes = outcomes_table(p_tables[0], v_tables[0], i_tables[0], f_tables[0] if f_tables else None)
    found = results_found(names, p_section, v_section, i_section, f_section, notes)
    return Report(
        title=f"CompStudio report: {', '.join(names)}",
        tables=(found, *p_tables, *v_tables, *i_tables, *f_tables, outcomes),
        charts={**p_charts, **v_charts, **i_charts},
        sections={
            "manifest": manifest(ctx, names, keys),
            "planning": p_section,
            "vqa": v_section,
            "icl": i_section,
            "file_benchmarks": f_section,
        },
    )
