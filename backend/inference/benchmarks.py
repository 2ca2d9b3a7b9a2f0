"""Benchmarks described as data: a :class:`BenchmarkSpec` names how to load items, build prompts, parse
and score answers. The runner (:mod:`backend.inference.runner`) needs nothing else.

Other packages add theirs by appending their module to :data:`BENCHMARK_MODULES` (the module defines
``BENCHMARKS``, a tuple of specs), e.g. ``vilpact-planning``, ``mmcomposition``, ``icl``. An app's
:class:`BenchmarkRegistry` (``AppContext.benchmarks``) imports them on first use.

An :class:`EvalItem` is one question: ``request`` (the interleaved parts of the question itself, without
the options), ``options`` (texts, lettered A, B, ...), ``answer`` (the set of correct letters, or a
reference string for free-text tasks), ``multi`` (indefinite choice: any number of letters may be correct)
and ``meta`` (anything the benchmark's own scorer or a baseline needs). The default prompt appends the
lettered options and an instruction (:func:`choice_request`); the default score is exact match.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from backend.errors import NotFound
from backend.inference.parsing import ParsedAnswer, letters_for, parse_choice, parse_text
from backend.inference.request import GenerationParams, Request, text

if TYPE_CHECKING:
    from backend.context import AppContext

#: Modules that define ``BENCHMARKS: tuple[BenchmarkSpec, ...]`` (append one line per benchmark package).
BENCHMARK_MODULES: tuple[str, ...] = (
    "backend.inference.toy",
    "backend.vqa.models",
    "backend.planning.evaluation",
    "backend.icl.evaluation",
)


@dataclass(frozen=True)
class EvalItem:
    item_id: str
    request: Request
    options: tuple[str, ...] = ()
    answer: frozenset[str] | str = frozenset()
    multi: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def is_choice(self) -> bool:
        return bool(self.options)

    @property
    def letters(self) -> str:
        return letters_for(len(self.options))

    def answer_display(self) -> str:
        return ", ".join(sorted(self.answer)) if isinstance(self.answer, frozenset) else str(self.answer)


def choice_request(item: EvalItem) -> Request:
    """The question, then ``A. option`` lines, then the answer instruction (single or indefinite choice).

    >>> item = EvalItem("q1", [text("What is red?")], ("apple", "sky"), frozenset("A"))
    >>> print(choice_request(item)[-1]["text"])
    Options:
    A. apple
    B. sky
    Answer with the option's letter from the given choices directly.
    """
    if not item.options:
        return list(item.request)
    lines = [f"{letter}. {option}" for letter, option in zip(item.letters, item.options, strict=True)]
    if item.multi:
        instruction = (
            "One or more options may be correct. Answer with the letters of all correct options, separated by commas."
        )
    else:
        instruction = "Answer with the option's letter from the given choices directly."
    return [*item.request, text("Options:\n" + "\n".join(lines) + "\n" + instruction)]


def parse_item(item: EvalItem, raw: str) -> ParsedAnswer:
    """Letters for choice items (:func:`parse_choice`), the first line for free-text items."""
    if item.options:
        return parse_choice(raw, len(item.options), item.options, item.multi)
    return parse_text(raw)


def exact_score(item: EvalItem, parsed: ParsedAnswer) -> float:
    """1.0 when the parsed letters equal the answer set (or the text equals the reference, spaces
    normalised), else 0.0. Unparsed answers score 0.

    >>> exact_score(EvalItem("q", [], ("x", "y"), frozenset("B")), ParsedAnswer("ok", frozenset("B")))
    1.0
    >>> exact_score(EvalItem("q", [], (), "a  b"), ParsedAnswer("ok", text="a b"))
    1.0
    """
    if not parsed.ok:
        return 0.0
    if isinstance(item.answer, frozenset):
        return float(parsed.letters == item.answer)
    return float(" ".join(parsed.text.split()) == " ".join(str(item.answer).split()))


#: what the command line says when ``compare --circular`` names a benchmark without a circular comparison
CIRCULAR_COMPARE_ONLY = (
    "--circular applies to planning and benchmarks from files; for VQA run: compstudio vqa run MODEL --circular"
)


@dataclass(frozen=True)
class CompareAsked:
    """What ``compstudio compare`` asks of a benchmark (backend/inference/cli.py)."""

    models: list[str] | None  # None: every stored run
    samples: int  # bootstrap resamples
    circular: bool = False
    options: dict[str, str] | None = None  # --benchmark-option pairs
    baseline_run: bool = True  # answer what the benchmark's blind baseline has not answered yet (planning)


@dataclass(frozen=True)
class BenchmarkSpec:
    """A benchmark as data. ``load_items(ctx, **options) -> list[EvalItem]`` in a stable order."""

    name: str
    description: str
    load_items: Callable[..., list[EvalItem]]
    build_request: Callable[[EvalItem], Request] = choice_request
    parse: Callable[[EvalItem, str], ParsedAnswer] = parse_item
    score: Callable[[EvalItem, ParsedAnswer], float] = exact_score
    params: GenerationParams = GenerationParams()
    metric: str = "accuracy"
    #: what a run's summary adds from the store: ``report(ctx, model, load_options, limit, gen, shash=None) -> dict``
    #: (``shash``: the run's key, when the caller has it)
    report: Callable[..., dict[str, Any]] | None = None
    #: the load options a run's items depend on, filled in from the app's settings (e.g. VQA's image mode), so
    #: that a run's row records them whoever started it: ``default_options(ctx) -> dict``
    default_options: Callable[[AppContext], dict[str, Any]] | None = None
    #: other names the command line accepts for this benchmark (``planning`` for ``vilpact-planning``)
    aliases: tuple[str, ...] = ()
    #: the benchmark's own ``compstudio compare``, named ``"package.module:function"`` and imported when called, as
    #: :data:`BENCHMARK_MODULES` are (the comparison builds on the module that defines the spec, so the spec only
    #: names it): ``function(ctx, name, asked: CompareAsked) -> dict``. None: the paired comparison of stored runs
    compare: str | None = None
    #: the comparison on circular outcomes (``compare --circular``): ``compare_circular(ctx, name, models, samples)``
    compare_circular: Callable[..., dict[str, Any]] | None = None

    def resolve_options(self, ctx: AppContext, options: dict[str, Any] | None) -> dict[str, Any] | None:
        """``options`` with this benchmark's defaults filled in (None and unset values take the default)."""
        if self.default_options is None:
            return options
        given = {k: v for k, v in (options or {}).items() if v is not None}
        return self.default_options(ctx) | given

    def run_compare(self, ctx: AppContext, asked: CompareAsked) -> dict[str, Any]:
        """The benchmark's own comparison (:attr:`compare`; only when it names one)."""
        if self.compare is None:
            raise ValueError(f"benchmark {self.name!r} has no comparison of its own")
        module, _, function = self.compare.partition(":")
        compare: Callable[[AppContext, str, CompareAsked], dict[str, Any]] = getattr(
            importlib.import_module(module), function
        )
        return compare(ctx, self.name, asked)


class BenchmarkRegistry:
    """The benchmarks of one app (``AppContext.benchmarks``): those of :data:`BENCHMARK_MODULES`, imported on
    first use, any registered at run time, and those ``discover()`` finds when asked (benchmarks imported from
    files, :mod:`backend.filebench`: another process may add one while the app runs). Built-in names win."""

    def __init__(
        self,
        modules: Sequence[str] = BENCHMARK_MODULES,
        discover: Callable[[], Sequence[BenchmarkSpec]] | None = None,
    ):
        self._modules = list(modules)
        self._specs: dict[str, BenchmarkSpec] = {}
        self._lock = threading.Lock()
        self._discover = discover

    def _load(self) -> None:
        with self._lock:
            while self._modules:
                for spec in importlib.import_module(self._modules.pop(0)).BENCHMARKS:
                    self._specs.setdefault(spec.name, spec)

    def register(self, spec: BenchmarkSpec) -> BenchmarkSpec:
        self._load()
        self._specs[spec.name] = spec
        return spec

    def builtin_names(self) -> set[str]:
        self._load()
        return set(self._specs)

    def all(self) -> dict[str, BenchmarkSpec]:
        self._load()
        found = {spec.name: spec for spec in (self._discover() if self._discover else ())}
        return dict(sorted((found | self._specs).items()))

    def get(self, name: str) -> BenchmarkSpec:
        benchmarks = self.all()
        if name not in benchmarks:
            raise NotFound(f"unknown benchmark {name!r}; valid benchmarks: {', '.join(benchmarks) or '(none)'}")
        return benchmarks[name]

    @overload
    def canonical(self, name: str) -> str: ...
    @overload
    def canonical(self, name: None) -> None: ...
    def canonical(self, name: str | None) -> str | None:
        """The benchmark a built-in one's alias names (the short names ``planning``, ``vqa``, ``in-context``);
        any other name as it is (a filter over stored runs may name a benchmark no longer registered)."""
        self._load()
        return next((spec.name for spec in self._specs.values() if name in spec.aliases), name)

    def named(self, name: str) -> BenchmarkSpec:
        """A benchmark by its name or a built-in one's alias (what the command line accepts)."""
        return self.get(self.canonical(name) or name)


def list_benchmarks(ctx: AppContext) -> dict[str, BenchmarkSpec]:
    return ctx.benchmarks.all()


def get_benchmark(ctx: AppContext, name: str) -> BenchmarkSpec:
    return ctx.benchmarks.get(name)
