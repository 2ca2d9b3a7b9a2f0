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
from backend.errors import ImportFileError, NotFound, ValidationError
from backend.icl.build import CaseResult, build_case
from backend.icl.data import IclExample
from backend.icl.index import BankIndex, build_index, side_keys
from backend.icl.matching import MATCHING, sentence_rules, variant_name
from backend.icl.prompts import ORDERS
from backend.icl.selection import preset_weights
from backend.icl.selectors import Selector, SelectorSpec, make_selector, setting_names
from backend.icl.stats import aggregate, markdown_table
from backend.icl.store import import_set, list_sets, load_set, set_info
from backend.inference.embeddings import EmbeddingModels
from backend.storage import Database

if TYPE_CHECKING:
    from backend.context import AppContext

VIEW_ROLE = "annotator"
UPLOAD_ROLE = "reviewer"  # storing a bank or test set from the browser: reviewers and admins
UPLOAD_MAX_BYTES = 50 * 1024 * 1024  # CoFe's whole bank (24,155 lines) is 3.6 MB
UPLOAD_SUFFIXES = (".jsonl", ".json")
MAX_POOL = 100_000


class IclWorkspace:
    """Loaded sets and prepared selectors, keyed by set name and fingerprint (a re-import invalidates them)."""

    def __init__(self, cache_dir: Path | None = None, embeddings: EmbeddingModels | None = None):
        self.cache_dir = cache_dir
        self.embeddings = embeddings  # the app's sentence encoders, for the embedding selectors
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
                self._selectors[key] = make_selector(index, spec, self.cache_dir, self.embeddings)
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
    matching: str | None = None
    mmr_lambda: float = 0.5
    mmr_pool: int = 100

    def spec(self) -> SelectorSpec:
        """The selector this request asks for; every bad value is named in one :class:`ValidationError`."""
        problems = []
        if self.setting not in setting_names():
            problems.append(f"unknown setting {self.setting!r}; choose one of {', '.join(setting_names())}")
        if self.order not in ORDERS:
            problems.append(f"unknown order {self.order!r}; choose one of {', '.join(ORDERS)}")
        if not 1 <= self.n <= 50:
            problems.append("the number of examples must be between 1 and 50")
        if self.matching not in (None, *MATCHING):
            problems.append(f"matching must be one of {', '.join(MATCHING)}, not {self.matching!r}")
        for name in ("w_p", "w_s"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                problems.append(f"{name} must be 0 or more (section 4.1: w_p = 100 ≫ w_s = 1), not {value}")
        if self.setting == "mmr" and not 0 <= self.mmr_lambda <= 1:
            problems.append(f"MMR λ must be between 0 and 1 (1: relevance only), not {self.mmr_lambda}")
        if self.setting == "mmr" and not 1 <= self.mmr_pool <= MAX_POOL:
            problems.append(f"the MMR pool must be between 1 and {MAX_POOL:,} examples, not {self.mmr_pool}")
        if problems:
            raise ValidationError(problems)
        return SelectorSpec(self.setting, preset_weights(self.setting, self), self.seed, self.mmr_lambda, self.mmr_pool)

    @property
    def variant(self) -> str:
        """The name predictions of this selection are stored under (:func:`variant_name`)."""
        return variant_name(self.setting, self.matching or "both")


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
    order, the statistics, the prompt, the ground truth, what stays uncovered, and the matching variant with
    whether it keeps this test case (appendix C.6)."""
    test = view.result.test
    return {
        "matching": view.result.matching,
        "kept": view.result.kept,
        "sentence_rules": sorted(sentence_rules(test.source)),
        "covered_sentence_rules": view.result.covered_sentence_rules,
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


def set_table(ctx: AppContext, username: str | None, request: CaseRequest) -> dict[str, Any]:
    """Table 2 over the whole test set ``request.tests`` under the request's selector and matching variant (its
    ``line`` is ignored), with how many test cases the variant keeps (appendix C.6 keeps 1,037 of 4,785)."""
    require_role(ctx.database, username, VIEW_ROLE)
    spec = request.spec()
    selector = ctx.icl.selector(ctx.database, request.bank, spec)
    tests = ctx.icl.examples(ctx.database, request.tests)
    selector.prepare_queries([t.input for t in tests])
    rows = []
    for test in tests:
        result = build_case(selector, test, request.n, request.order, request.seed, request.fictional)
        if result.kept:
            rows.append((test.category, result.stats))
    table = aggregate(rows)
    matching = request.matching or "both"
    return {
        "setting": request.setting,
        "matching": matching,
        "test_cases": len(tests),
        "test_cases_kept": len(rows),
        "table": table,
        "markdown": markdown_table(table, kept=(len(rows), len(tests)), matching=matching),
    }


def upload_set(
    ctx: AppContext, username: str | None, path: str | Path | None, name: str, kind: str, replace: bool = False
) -> dict[str, Any]:
    """Store an example bank or test set a reviewer or admin uploaded in the browser: the file's type and size
    are checked before it is read, then every line is validated and stored in one transaction
    (:func:`backend.icl.store.import_set`; a bad line names its number and nothing is stored)."""
    user = require_role(ctx.database, username, UPLOAD_ROLE)
    if not path:
        raise ValidationError("choose a JSONL file to upload")
    file = Path(path)
    if file.suffix.lower() not in UPLOAD_SUFFIXES:
        raise ValidationError(f"upload a JSON Lines file (.jsonl), not {file.suffix or 'a file without a suffix'}")
    size = file.stat().st_size
    if size > UPLOAD_MAX_BYTES:
        raise ValidationError(
            f"the file has {size / 1e6:.1f} MB; the limit is {UPLOAD_MAX_BYTES / 1e6:.0f} MB "
            "(import larger sets with `python -m backend import icl`)"
        )
    name = (name or "").strip() or file.stem
    try:
        return import_set(ctx.database, user.username, file, name, kind, replace=replace)
    except ImportFileError as exc:  # name the file as the person knows it, not the server's temporary copy
        raise ImportFileError(file.name, exc.line, exc.problem) from None


def set_table_json(ctx: AppContext, username: str | None, selection: dict[str, Any]) -> dict[str, Any]:
    """:func:`set_table` for scripts: ``selection`` holds :class:`CaseRequest`'s fields (``bank`` and ``tests``
    required, ``line`` ignored)."""
    require_role(ctx.database, username, VIEW_ROLE)
    fields = set(CaseRequest.__dataclass_fields__)
    unknown = sorted(set(selection) - fields)
    if unknown:
        raise ValidationError(f"unknown selection field(s) {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
    if not selection.get("bank") or not selection.get("tests"):
        raise ValidationError("the table needs a bank and a test set")
    return set_table(ctx, username, CaseRequest(**{**selection, "line": 0}))


def can_upload(ctx: AppContext, username: str | None) -> bool:
    """Whether the caller may store sets from the browser (the tab shows the upload panel only then)."""
    from backend.errors import PermissionDenied

    try:
        require_role(ctx.database, username, UPLOAD_ROLE)
    except PermissionDenied:
        return False
    return True


# Backends whose models write free text (a logical form): the generative ones, and the random baseline (a word of
# the prompt: the chance floor). The planning baselines (nsplan-lite, bigram-prior) only pick planning options.
FREE_TEXT_BACKENDS = ("transformers", "openai", "python", "random")


def answer_models(ctx: AppContext, username: str | None) -> list[str]:
    """The registered models that can answer an in-context prompt (reviewers: asking a model needs the role)."""
    from backend.inference import service as inference

    return [m["name"] for m in inference.model_table(ctx, username) if m["backend"] in FREE_TEXT_BACKENDS]


def check_answer_model(ctx: AppContext, username: str | None, model: str) -> None:
    """Refuse a model that cannot write a logical form, naming the ones that can."""
    names = answer_models(ctx, username)
    if model not in names:
        raise ValidationError(
            f"{model!r} cannot answer an in-context prompt (free text); choose one of "
            f"{', '.join(names) or 'the text models (none registered)'}"
        )
