"""The ``icl`` benchmark: CoFe prompts built from stored sets, free-text answers scored by exact match.

Options (``python -m backend eval --benchmark icl --option key=value`` or ``load_options``): ``bank`` and
``tests`` (stored set names; default: the newest bank and every test set), ``setting``, ``n``, ``order``,
``seed``, ``fictional`` and ``matching`` (``both``, ``source_only``, ``target_only``; the last keeps only the test
cases appendix C.6 keeps). Each item's ``meta["category"]`` carries the test case's category, so
:func:`accuracy_by_category` gives the per-category exact match the paper reports, and
:func:`outcomes_by_category` the answers read, refused and unparsed beside it (the run's summary gives them
overall, with their rates).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from backend.icl.build import CaseResult, build_case
from backend.icl.matching import variant_name
from backend.icl.selection import preset_weights
from backend.icl.selectors import SelectorSpec
from backend.icl.store import list_sets
from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.outcomes import outcome_counts
from backend.inference.request import GenerationParams, text

if TYPE_CHECKING:
    from backend.context import AppContext

BENCHMARK = "icl"


def item_id(tests: str, line: int, setting: str) -> str:
    """The id a test case's predictions are stored under, for the tab's live answer and batch runs alike (if the
    two drifted, stored predictions would split).

    >>> item_id("phrareco", 3, "full_similarity")
    'phrareco:3:full_similarity'
    """
    return f"{tests}:{line}:{setting}"


def eval_item(tests: str, line: int, setting: str, prompt: str, answer: str, category: str = "") -> EvalItem:
    """One test case with its selected examples as an :class:`EvalItem`: the one builder for tab and batch."""
    return EvalItem(
        item_id(tests, line, setting),
        [text(prompt)],
        answer=answer,
        meta={"category": category, "tests": tests, "line": line, "setting": setting},
    )


def case_item(tests: str, line: int, result: CaseResult, setting: str) -> EvalItem:
    return eval_item(tests, line, setting, result.prompt, result.ground_truth, result.test.category)


def load_items(
    ctx: AppContext,
    bank: str | None = None,
    tests: str | Iterable[str] | None = None,
    setting: str = "full_similarity",
    n: int | str = 10,
    order: str = "structure_closer",
    seed: int | str = 0,
    fictional: bool | str = False,
    matching: str = "both",
    **_: Any,
) -> list[EvalItem]:
    rows = list_sets(ctx.database)
    banks = [r["name"] for r in rows if r["kind"] == "bank"]
    if bank is None:
        if not banks:
            return []
        bank = banks[0]
    if tests is None:
        test_sets = sorted(r["name"] for r in rows if r["kind"] == "tests")
    else:
        test_sets = [tests] if isinstance(tests, str) else list(tests)
    workspace = ctx.icl
    weights = preset_weights(setting, SimpleNamespace(matching=matching)) if matching != "both" else None
    selector = workspace.selector(ctx.database, bank, SelectorSpec(name=setting, weights=weights, seed=int(seed)))
    flag = fictional if isinstance(fictional, bool) else str(fictional).lower() in {"1", "true", "yes"}
    label = variant_name(setting, matching)
    items = []
    for name in test_sets:
        for line, test in enumerate(workspace.examples(ctx.database, name)):
            result = build_case(selector, test, int(n), order, int(seed), flag)
            if result.kept:
                items.append(case_item(name, line, result, label))
    return items


def accuracy_by_category(items: list[EvalItem], scores: list[float]) -> dict[str, float]:
    """Exact-match accuracy per category and overall (``all``).

    >>> items = [EvalItem("a", [], answer="X", meta={"category": "c1"}), EvalItem("b", [], answer="Y", meta={"category": "c2"})]
    >>> accuracy_by_category(items, [1.0, 0.0])
    {'c1': 1.0, 'all': 0.5, 'c2': 0.0}
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for item, score in zip(items, scores, strict=True):
        groups[item.meta.get("category", "")].append(score)
        groups["all"].append(score)
    return {k: sum(v) / len(v) for k, v in groups.items()}


def evaluate_by_category(
    ctx: AppContext,
    model: str,
    load_options: dict[str, Any] | None = None,
    limit: int | None = None,
    actor: str = "cli",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) ``model`` on the ``icl`` benchmark and add exact match per category."""
    from backend.inference.runner import run_eval

    summary = run_eval(ctx, BENCHMARK, model, limit=limit, actor=actor, load_options=load_options, progress=progress)
    return {**summary.as_dict(), **category_breakdown(ctx, model, load_options, limit, summary.settings_hash)}


def run_report(
    ctx: AppContext,
    model: str,
    load_options: dict[str, Any] | None = None,
    limit: int | None = None,
    gen: Any = None,
    shash: str | None = None,
) -> dict[str, Any]:
    """What an ``eval --benchmark icl`` summary adds (the spec's ``report``): exact match per category, as
    ``icl eval`` reports it (:func:`category_breakdown`; ``gen`` is in the run's key ``shash`` already)."""
    return category_breakdown(ctx, model, load_options, limit, shash)


def category_breakdown(
    ctx: AppContext,
    model: str,
    load_options: dict[str, Any] | None = None,
    limit: int | None = None,
    shash: str | None = None,
) -> dict[str, Any]:
    """Exact match (over the items whose call did not fail) and outcomes per category of ``model``'s stored
    answers to the run's items (after ``run_eval``: ``icl eval`` and ``eval --benchmark icl`` both report it,
    reading under the run's key ``shash``). Without ``shash``, what views read
    (:func:`backend.inference.reading.read_key`); ``note`` then says when that is a served model's last run
    because its server is unreachable."""
    from backend.inference.benchmarks import get_benchmark
    from backend.inference.prepared import prepare
    from backend.inference.reading import read_key
    from backend.inference.registry import get_spec
    from backend.inference.store import lookup

    bench, spec = get_benchmark(ctx, BENCHMARK), get_spec(ctx, model)
    items = load_items(ctx, **(load_options or {}))
    prepared = prepare(bench, items[:limit] if limit is not None else items, ctx.digests)
    key = read_key(ctx, bench, spec) if shash is None else None
    stored = lookup(ctx.database, spec.name, bench.name, key.settings_hash if key is not None else str(shash))
    rows = [stored[(p.item.item_id, p.prompt_hash)] for p in prepared]
    items = [p.item for p in prepared]
    answered = [(p.item, r) for p, r in zip(prepared, rows, strict=True) if not r.failed]  # failed: no score
    return {
        "exact_match_by_category": accuracy_by_category(
            [i for i, _ in answered], [r.score or 0.0 for _, r in answered]
        ),
        "outcomes_by_category": outcomes_by_category(items, [r.status for r in rows]),
        **({"note": key.note} if key is not None and key.note else {}),
    }


def outcomes_by_category(items: list[EvalItem], statuses: list[str]) -> dict[str, dict[str, int | float]]:
    """Answers read, refused and unparsed (:func:`backend.inference.outcomes.outcome_counts`) per category.

    >>> items = [EvalItem("a", [], answer="X", meta={"category": "c1"}), EvalItem("b", [], answer="Y", meta={"category": "c1"})]
    >>> counts = outcomes_by_category(items, ["ok", "refusal"])["c1"]
    >>> counts["answered"], counts["refusals"], counts["parse_failures"], counts["refusal_rate"]
    (1, 1, 0, 0.5)
    """
    groups: dict[str, list[str]] = defaultdict(list)
    for item, status in zip(items, statuses, strict=True):
        groups[item.meta.get("category", "")].append(status)
    return {category: outcome_counts(group) for category, group in groups.items()}


BENCHMARKS = (
    BenchmarkSpec(
        name=BENCHMARK,
        description="CoFe in-context compositional generalization: prompts from a stored bank and test set, "
        "exact match of the logical form (per category via meta['category'])",
        load_items=load_items,
        params=GenerationParams(max_new_tokens=256, stop=("\n",)),
        metric="exact_match",
        report=run_report,  # exact match per category, as `icl eval` reports it
        aliases=("in-context",),
    ),
)
