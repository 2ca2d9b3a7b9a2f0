"""What the browser tab and the ``icl`` benchmark call: stored sets, a per-process cache of bank indexes,
test-case search, one case's selection with everything the tab shows, and two selectors side by side.

Every function a browser event reaches takes the caller's user name and checks the role itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.accounts.auth import require_role
from backend.errors import NotFound, ValidationError
from backend.icl.build import CaseResult, build_case
from backend.icl.data import IclExample
from backend.icl.index import BankIndex, build_index, side_keys
from backend.icl.prompts import ORDERS
from backend.icl.selection import preset_weights
from backend.icl.selectors import Selector, SelectorSpec, make_selector, setting_names
from backend.icl.store import list_sets, load_set, set_info
from backend.storage import Database

if TYPE_CHECKING:
    from backend.context import AppContext

VIEW_ROLE = "annotator"


class IclWorkspace:
    """Loaded sets and prepared selectors, keyed by set name and fingerprint (a re-import invalidates them)."""

    def __init__(self, cache_dir: Path | None = None):
        self.cache_dir = cache_dir
        self._lock = threading.Lock()
        self._sets: dict[tuple[str, str], list[IclExample]] = {}
        self._indexes: dict[tuple[str, str], BankIndex] = {}
        self._selectors: dict[tuple[Any, ...], Selector] = {}

    def examples(self, database: Database, name: str) -> list[IclExample]:
        key = (name, set_info(database, name)["fingerprint"])
        with self._lock:
            if key not in self._sets:
                self._sets[key] = load_set(database, name)
            return self._sets[key]

    def index(self, database: Database, name: str) -> BankIndex:
        key = (name, set_info(database, name)["fingerprint"])
        examples = self.examples(database, name)
        with self._lock:
            if key not in self._indexes:
                self._indexes[key] = build_index(examples)
            return self._indexes[key]

    def selector(self, database: Database, bank: str, spec: SelectorSpec) -> Selector:
        index = self.index(database, bank)
        key = (
            bank,
            index.fingerprint,
            spec.name,
            spec.weights,
            spec.seed,
            spec.mmr_lambda,
            spec.mmr_pool,
            spec.embedding_model,
        )
        with self._lock:
            if key not in self._selectors:
                self._selectors[key] = make_selector(index, spec, self.cache_dir)
            return self._selectors[key]


@dataclass(frozen=True)
class CaseRequest:
    """One selection as the tab asks for it."""

    bank: str
    tests: str
    line: int
    setting: str = "full_similarity"
    n: int = 10
    order: str = "structure_closer"
    seed: int = 0
    fictional: bool = False
    w_p: float | None = None
    w_s: float | None = None
    w_c: float | None = None
    diversity: bool | None = None
    primitive_once: bool | None = None
    mmr_lambda: float = 0.5

    def spec(self) -> SelectorSpec:
        if self.setting not in setting_names():
            raise ValidationError(f"unknown setting {self.setting!r}; choose one of {', '.join(setting_names())}")
        if self.order not in ORDERS:
            raise ValidationError(f"unknown order {self.order!r}; choose one of {', '.join(ORDERS)}")
        if not 1 <= self.n <= 50:
            raise ValidationError("the number of examples must be between 1 and 50")
        return SelectorSpec(self.setting, preset_weights(self.setting, self), self.seed, self.mmr_lambda)


def sets(ctx: AppContext, username: str | None) -> dict[str, list[str]]:
    rows = list_sets(ctx.database, username)
    return {kind: [r["name"] for r in rows if r["kind"] == kind] for kind in ("bank", "tests")}


def search_cases(
    ctx: AppContext, username: str | None, tests: str, category: str = "", query: str = "", limit: int = 200
) -> list[dict[str, Any]]:
    """Test cases whose input contains ``query`` (case-insensitive), optionally of one category."""
    require_role(ctx.database, username, VIEW_ROLE)
    examples = ctx.icl.examples(ctx.database, tests)
    needle = query.strip().lower()
    rows = []
    for line, example in enumerate(examples):
        if category and example.category != category:
            continue
        if needle and needle not in example.input.lower():
            continue
        rows.append({"line": line, "category": example.category, "input": example.input})
        if len(rows) >= limit:
            break
    return rows


def categories(ctx: AppContext, username: str | None, tests: str) -> list[str]:
    require_role(ctx.database, username, VIEW_ROLE)
    return sorted({e.category for e in ctx.icl.examples(ctx.database, tests)})


@dataclass
class CaseView:
    result: CaseResult
    bank: list[IclExample]
    uncovered_primitives: list[str]
    uncovered_structures: list[str]
    aiming: list[str]

    def rows(self) -> list[dict[str, Any]]:
        """The chosen examples in prompt order with their scores and what each newly covered."""
        return [
            {
                "position": i + 1,
                "line": c.example_id,
                "input": self.bank[c.example_id].input,
                "output": self.bank[c.example_id].output,
                "primitive_coverage": c.primitive_coverage,
                "structural_similarity": c.structural_similarity,
                "new_primitives": ", ".join(c.new_primitives),
                "new_structures": len(c.new_structures),
            }
            for i, c in enumerate(self.result.chosen)
        ]


def case_test(ctx: AppContext, request: CaseRequest) -> IclExample:
    examples = ctx.icl.examples(ctx.database, request.tests)
    if not 0 <= request.line < len(examples):
        raise NotFound(f"test set {request.tests!r} has no line {request.line}")
    return examples[request.line]


def select_case(ctx: AppContext, username: str | None, request: CaseRequest) -> CaseView:
    """One test case under one selector: chosen examples, prompt, statistics and what stays uncovered."""
    require_role(ctx.database, username, VIEW_ROLE)
    spec = request.spec()
    workspace = ctx.icl
    test = case_test(ctx, request)
    selector = workspace.selector(ctx.database, request.bank, spec)
    result = build_case(selector, test, request.n, request.order, request.seed, request.fictional)
    bank = selector.index.examples
    deep = spec.weights.deep_structures if spec.weights is not None else True
    covered_p: set[str] = set()
    covered_s: set[str] = set()
    for c in result.chosen:
        example = bank[c.example_id]
        covered_p |= side_keys(example.source, example.target, "P")
        covered_s |= side_keys(example.source, example.target, "S", deep)
    from backend.icl.selection import aiming_keys

    return CaseView(
        result,
        bank,
        sorted(side_keys(test.source, test.target, "P") - covered_p),
        sorted(side_keys(test.source, test.target, "S", deep) - covered_s),
        sorted(aiming_keys(test)),
    )


def case_json(view: CaseView) -> dict[str, Any]:
    """A selection as plain JSON (the ``icl_select`` endpoint): the test case, the chosen examples in prompt
    order, the statistics, the prompt, the ground truth and what stays uncovered."""
    test = view.result.test
    return {
        "test": {"input": test.input, "output": test.output, "category": test.category},
        "examples": view.rows(),
        "stats": dict(view.result.stats),
        "prompt": view.result.prompt,
        "ground_truth": view.result.ground_truth,
        "aiming": view.aiming,
        "uncovered_primitives": view.uncovered_primitives,
        "uncovered_structures": view.uncovered_structures,
    }


def select_case_json(ctx: AppContext, username: str | None, selection: dict[str, Any]) -> dict[str, Any]:
    """:func:`select_case` for scripts: ``selection`` holds :class:`CaseRequest`'s fields by name
    (``bank``, ``tests`` and ``line`` required)."""
    require_role(ctx.database, username, VIEW_ROLE)
    fields = set(CaseRequest.__dataclass_fields__)
    unknown = sorted(set(selection) - fields)
    if unknown:
        raise ValidationError(f"unknown selection field(s) {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
    missing = [k for k in ("bank", "tests", "line") if selection.get(k) in (None, "")]
    if missing:
        raise ValidationError(f"the selection needs {', '.join(missing)}")
    return case_json(select_case(ctx, username, CaseRequest(**{**selection, "line": int(selection["line"])})))
