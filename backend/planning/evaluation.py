"""The ``vilpact-planning`` benchmark and the planning baselines as models of the inference layer.

Benchmark: six choices A–F (each a future action sequence, names joined by ", "). The request holds the
observed window as frames sampled uniformly with the cached sampler (:mod:`backend.planning.media`;
count: setting ``planning_frames``) and the intent; in ``text`` mode, or when a question has no video,
the observed action names stand in for the frames (``meta["mode"]`` says which was used). Scoring by
generation and answer parsing (primary) or by option log-likelihood (the model's ``scoring``), through the
shared runner. ``circular=True`` makes six items per question, one per rotation of the choices; a question
counts as right only when every rotation is (:func:`circular_answers`).

Models: ``nsplan-lite`` and ``bigram-prior`` answer items themselves (``answer_items``) from the item's
metadata and the knowledge base of the database the item came from, so they appear in every leaderboard
beside ``random``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.inference.benchmarks import BenchmarkSpec, EvalItem
from backend.inference.embeddings import MINILM_HUB_ID, EmbeddingModels
from backend.inference.registry import ModelRegistry, ModelSpec
from backend.inference.request import GenerationParams, Request, text, video
from backend.planning.catalog import Catalog, load_catalog
from backend.planning.questions import CHOICE_LETTERS, N_CHOICES, PlanningQuestion, list_questions
from backend.settings import Settings

if TYPE_CHECKING:
    from backend.context import AppContext
    from backend.inference.base import OptionScore
    from backend.planning.baselines import BigramPrior, NSPlanLite
    from backend.storage import Database

BENCHMARK = "vilpact-planning"
MODES = ("frames", "text")


def question_prompt(question: PlanningQuestion, observed_names: list[str], with_frames: bool) -> str:
    """The question text (the options are appended by the runner).

    >>> q = PlanningQuestion("q", "q", "q", 0, 24, ("c1",), "S/He is thirsty", (("c2",),) * 6, 0, None)
    >>> print(question_prompt(q, ["Holding a cup"], False))
    A person did these actions (the first 20% of a video): Holding a cup.
    Their intent: S/He is thirsty.
    Which future sequence of actions is the most plausible?
    """
    if with_frames:
        first = "The frames above show the first 20% of a video of a person."
    else:
        actions = "; ".join(observed_names) if observed_names else "(no action yet)"
        first = f"A person did these actions (the first 20% of a video): {actions}."
    return f"{first}\nTheir intent: {question.intent}.\nWhich future sequence of actions is the most plausible?"


def _video_path(ctx: AppContext, question: PlanningQuestion) -> str | None:
    row = ctx.database.query_one("SELECT video_path FROM sequences WHERE id = ?", (question.sequence_id,))
    return row["video_path"] if row and row["video_path"] else None


def planning_item(
    ctx: AppContext, question: PlanningQuestion, catalog: Catalog, mode: str = "frames", rotation: int = 0
) -> EvalItem:
    """One question as an item; ``rotation`` shifts the choices (option i shows choice (i + r) mod 6)."""
    from PIL import Image

    from backend.planning.media import observed_window_seconds, sample_frames_timed

    order = [(i + rotation) % N_CHOICES for i in range(N_CHOICES)]
    options = tuple(", ".join(catalog.names(question.choices[i])) for i in order)
    path = _video_path(ctx, question) if mode == "frames" else None
    request: list[dict[str, Any]] = []
    if path:
        start, end = observed_window_seconds(question.ob_start_frame, question.ob_end_frame)
        arrays, times = sample_frames_timed(
            ctx.settings, path, start, end, ctx.settings.planning_frames, ctx.settings.planning_decoder
        )
        fps = len(arrays) / (end - start) if end > start else None  # the frames' rate: Qwen2.5-VL places them in time
        sampling = {"frames": ctx.settings.planning_frames, "decoder": ctx.settings.planning_decoder}
        request.append(
            video(
                frames=[Image.fromarray(a) for a in arrays],
                fps=fps,
                sampling={**sampling, "window": [start, end]},
                timestamps=times,  # shown in the Samples view; not hashed (the frames and sampling are)
            )
        )
    request.append(text(question_prompt(question, catalog.names(question.observed), bool(path))))
    item_id = question.id if rotation == 0 and mode == "frames" else f"{question.id}#{mode}-r{rotation}"
    return EvalItem(
        item_id,
        request,
        options,
        frozenset(CHOICE_LETTERS[order.index(question.answer_index)]),
        meta={
            "question_id": question.id,
            "rotation": rotation,
            "order": order,
            "mode": "frames" if path else "text",
            "observed": list(question.observed),
            "intent": question.intent,
            "choices": [list(question.choices[i]) for i in order],
            "db_path": str(ctx.database.path),
            "scene": question.scene,
            "future_length": question.future_length,
        },
    )


def load_planning_items(
    ctx: AppContext, mode: str = "frames", circular: bool = False, limit: int | None = None
) -> list[EvalItem]:
    """Items of the questions that count (released and validated), in id order."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    catalog = load_catalog(ctx.database)
    questions = list_questions(ctx.database)[:limit]
    rotations = range(6) if circular else range(1)
    return [planning_item(ctx, q, catalog, mode, r) for q in questions for r in rotations]


SPEC = BenchmarkSpec(
    name=BENCHMARK,
    description="ViLPAct multiple-choice planning: the first 20% of a video and an intent; pick the most "
    "plausible future action sequence of six (A-F).",
    load_items=load_planning_items,
    params=GenerationParams(max_new_tokens=16),
    aliases=("planning",),
    compare="backend.planning.leaderboard:compare_command",
)
BENCHMARKS = (SPEC,)


def chosen_index(item_meta: dict, letters: frozenset[str] | None) -> int | None:
    """The original choice index behind an answered letter of a (possibly rotated) item."""
    if not letters or len(letters) != 1:
        return None
    position = CHOICE_LETTERS.index(next(iter(letters)))
    return item_meta["order"][position] if position < len(item_meta["order"]) else None


# -- baselines as models --------------------------------------------------------------------------


class _KnowledgeBackend(ABC):
    """Shared plumbing: build the model once per database the items come from."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _model_for(self, db_path: str) -> Any:
        with self._lock:
            if db_path not in self._models:
                from backend.storage import Database

                self._models[db_path] = self.build(Database(db_path))
            return self._models[db_path]

    def warm(self, database: Database) -> None:
        """Build the model for ``database`` now rather than on the first call (the app's start-up warm-up)."""
        self._model_for(str(database.path))

    @abstractmethod
    def build(self, database: Database) -> Any:
        """The baseline's model, built from the knowledge base in ``database``."""

    @abstractmethod
    def choose(self, model: Any, item: EvalItem) -> int:
        """The index of the choice the baseline picks for ``item``."""

    def answer_items(self, items: Sequence[EvalItem], params: GenerationParams) -> list[str]:
        answers = []
        for item in items:
            if "db_path" not in item.meta:
                raise ValueError(f"{self.spec.name} answers only {BENCHMARK} items")
            answers.append(CHOICE_LETTERS[self.choose(self._model_for(item.meta["db_path"]), item)])
        return answers

    def generate(self, requests: Sequence[Request], params: GenerationParams) -> list[str]:
        raise ValueError(f"{self.spec.name} answers only {BENCHMARK} items, not free prompts")

    def score_options(self, request: Request, options: Sequence[str]) -> list[OptionScore]:
        raise ValueError(f"{self.spec.name} answers only {BENCHMARK} items, not free prompts")

    def unload(self) -> None:
        self._models.clear()


class NSPlanLiteBackend(_KnowledgeBackend):
    """``embeddings``: the app's sentence encoders (``AppContext.embeddings``, handed over by the registry);
    without them the backend loads its own."""

    def __init__(self, spec: ModelSpec, embeddings: EmbeddingModels | None = None) -> None:
        super().__init__(spec)
        self.embeddings = embeddings or EmbeddingModels(str(spec.options.get("embedding_model") or MINILM_HUB_ID))

    def build(self, database: Database) -> NSPlanLite:
        from backend.inference.embedding_cache import EmbeddingCache
        from backend.planning.baselines import BigramPrior, NSPlanLite
        from backend.planning.knowledge import build_knowledge_base

        model_name = self.spec.options.get("embedding_model")
        kb = build_knowledge_base(database)
        prior_weight = float(self.spec.options.get("prior_weight", 0.0))
        prior = (
            BigramPrior([e.actions for e in kb], float(self.spec.options["bigram_weight"])) if prior_weight else None
        )
        return NSPlanLite(
            kb,
            # kept across restarts; the encoder is the app's (AppContext.embeddings, through the registry)
            EmbeddingCache(Path(database.path).parent / "cache" / "embeddings", model_name, self.embeddings),
            intent_weight=float(self.spec.options["intent_weight"]),
            top_k=int(self.spec.options["top_k"]),
            prior=prior,
            prior_weight=prior_weight,
        )

    def warm(self, database: Database) -> None:
        """Also embed the intents of the questions that count, so that a live Ask embeds nothing."""
        super().warm(database)
        self._model_for(str(database.path)).prepare(question_intents(database))

    def answer_items(self, items: Sequence[EvalItem], params: GenerationParams) -> list[str]:
        for db_path in {i.meta["db_path"] for i in items if i.meta.get("db_path")}:
            self._model_for(db_path).prepare([i.meta["intent"] for i in items if i.meta.get("db_path") == db_path])
        return super().answer_items(items, params)

    def choose(self, model: NSPlanLite, item: EvalItem) -> int:
        from backend.planning.baselines import pick

        scores = model.score_choices(item.meta["observed"], item.meta["intent"], item.meta["choices"])
        return pick(scores, item.meta["question_id"])


def question_intents(database: Database) -> list[str]:
    """The intents of the planning questions that count: nsplan-lite's queries."""
    return [q.intent for q in list_questions(database)]


def nsplan_texts(database: Database) -> list[str]:
    """Every text nsplan-lite embeds for ``database`` before its first answer, sorted: the knowledge base's
    intents and the questions' intents (what the warm-up prepares; ``scripts/bundle_embeddings.py``)."""
    from backend.planning.knowledge import build_knowledge_base

    kb_intents = {t for entry in build_knowledge_base(database) for t in entry.intents}
    return sorted(kb_intents | {t for t in question_intents(database) if t.strip()})


class BigramPriorBackend(_KnowledgeBackend):
    def build(self, database: Database) -> BigramPrior:
        from backend.planning.baselines import BigramPrior
        from backend.planning.knowledge import build_knowledge_base

        return BigramPrior([e.actions for e in build_knowledge_base(database)], float(self.spec.options["weight"]))

    def choose(self, model: BigramPrior, item: EvalItem) -> int:
        from backend.planning.baselines import pick

        scores = [model.score(item.meta["observed"], c) for c in item.meta["choices"]]
        return pick(scores, item.meta["question_id"])


def provide_models(registry: ModelRegistry, settings: Settings) -> None:
    """The planning baselines as in-process models of ``registry`` (see ``PROVIDER_MODULES``)."""
    registry.register_backend("nsplan-lite", lambda spec: NSPlanLiteBackend(spec, registry.embeddings))
    registry.register_backend("bigram-prior", BigramPriorBackend)
    registry.register_model(
        ModelSpec(
            "nsplan-lite",
            "nsplan-lite",
            batch_size=64,
            description="Retrieval planner after NSPlan: BM25 over observed action ids + intent cosine, "
            "choices scored against retrieved futures, plus transition knowledge (planning only; no video).",
            options={
                "intent_weight": settings.nsplan_intent_weight,
                "top_k": settings.nsplan_top_k,
                "embedding_model": settings.embedding_model,
                "prior_weight": settings.nsplan_prior_weight,
                "bigram_weight": settings.bigram_weight,
            },
        )
    )
    registry.register_model(
        ModelSpec(
            "bigram-prior",
            "bigram-prior",
            batch_size=64,
            description="Blind prior: smoothed bigram model of action transitions (no video, no intent; planning only).",
            options={"weight": settings.bigram_weight},
        )
    )
