"""Agreement between annotators (semantic similarity of intents), between reviewers (Krippendorff's alpha,
Cohen's kappa) and "compare two groups" (Wilcoxon signed-rank on paired scores)."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from backend.accounts import auth
from backend.errors import ValidationError
from backend.review.stats import cohen_kappa, krippendorff_alpha_nominal, mean_pairwise_cosine, wilcoxon_signed_rank
from backend.settings import Settings
from backend.storage import Database

Embed = Callable[[list[str]], np.ndarray]


def _default_embed(settings: Settings) -> Embed:
    """A private encoder for the ``embedding_model`` setting (the app passes ``AppContext.embeddings.embed``)."""
    from backend.inference.embeddings import EmbeddingModels

    return EmbeddingModels(settings.embedding_model).embed


def semantic_agreement(
    database: Database, settings: Settings, username: str | None, embed: Embed | None = None, limit: int = 500
) -> dict[str, Any]:
    """Mean pairwise cosine similarity of the annotators' intents, per sequence round with 2+ annotations.

    ``embed`` maps texts to L2-normalised rows (the app passes ``AppContext.embeddings.embed``; default: an
    encoder of its own for the ``embedding_model`` setting). All texts are embedded in one batch.
    """
    auth.require_role(database, username, "reviewer")
    rows = database.query(
        """SELECT sequence_id, round, concrete_intent, high_level_intent FROM annotations
           WHERE source = 'live' AND (sequence_id, round) IN (
               SELECT sequence_id, round FROM annotations WHERE source = 'live'
               GROUP BY sequence_id, round HAVING count(*) >= 2 ORDER BY min(submitted_at) LIMIT ?)
           ORDER BY sequence_id, round, submitted_at, id""",
        (limit,),
    )
    if not rows:
        return {"sequences": [], "mean_concrete": None, "mean_high_level": None}
    texts = [r["concrete_intent"] for r in rows] + [r["high_level_intent"] for r in rows]
    vectors = np.asarray((embed or _default_embed(settings))(texts), dtype=float)
    concrete, high_level = vectors[: len(rows)], vectors[len(rows) :]
    groups: dict[tuple[str, int], list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault((row["sequence_id"], row["round"]), []).append(index)
    result = []
    for (sequence_id, review_round), indices in groups.items():
        result.append(
            {
                "sequence_id": sequence_id,
                "round": review_round,
                "annotations": len(indices),
                "concrete_similarity": mean_pairwise_cosine(concrete[indices]),
                "high_level_similarity": mean_pairwise_cosine(high_level[indices]),
            }
        )
    return {
        "sequences": result,
        "mean_concrete": round(float(np.mean([r["concrete_similarity"] for r in result])), 4),
        "mean_high_level": round(float(np.mean([r["high_level_similarity"] for r in result])), 4),
    }


def _judgment_table(database: Database) -> pd.DataFrame:
    """annotation_id x reviewer -> reasonable (0/1), for annotations judged by two or more reviewers."""
    rows = database.query(
        """SELECT j.annotation_id, r.reviewer, j.reasonable FROM review_judgments j JOIN reviews r ON r.id = j.review_id
           WHERE j.annotation_id IN (SELECT j2.annotation_id FROM review_judgments j2
                                     GROUP BY j2.annotation_id HAVING count(*) >= 2)"""
    )
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).pivot(index="annotation_id", columns="reviewer", values="reasonable")


def reviewer_agreement(database: Database, username: str | None) -> dict[str, Any]:
    """Krippendorff's alpha over all reviewers and Cohen's kappa per pair, on annotations judged twice or more."""
    auth.require_role(database, username, "reviewer")
    table = _judgment_table(database)
    if table.empty:
        return {
            "items": 0,
            "reviewers": [],
            "krippendorff_alpha": None,
            "pairs": [],
            "note": "no annotation has been judged by two reviewers yet (see the review_check_share setting)",
        }
    reviewers = [str(c) for c in table.columns]
    pairs = []
    for a, b in itertools.combinations(reviewers, 2):
        both = table[[a, b]].dropna()
        if both.empty:
            continue
        x, y = both[a].astype(int).tolist(), both[b].astype(int).tolist()
        pairs.append(
            {
                "reviewer_a": a,
                "reviewer_b": b,
                "items": len(both),
                "observed_agreement": round(float(np.mean(np.equal(x, y))), 4),
                "cohen_kappa": cohen_kappa(x, y),
            }
        )
    alpha = krippendorff_alpha_nominal(table.T.to_numpy(dtype=float))
    return {"items": len(table), "reviewers": reviewers, "krippendorff_alpha": alpha, "pairs": pairs}


def compare_reviewer_groups(database: Database, username: str | None, group_a: list[str], group_b: list[str]) -> dict:
    """Per sequence round judged by both groups: the share of annotations each group found reasonable."""
    auth.require_role(database, username, "reviewer")
    if not group_a or not group_b or set(group_a) & set(group_b):
        raise ValidationError("choose two non-empty groups of reviewers with nobody in both")
    rows = database.query(
        """SELECT r.sequence_id, r.round, r.reviewer, avg(j.reasonable) AS share FROM reviews r
           JOIN review_judgments j ON j.review_id = r.id GROUP BY r.id"""
    )
    frame = pd.DataFrame(rows, columns=["sequence_id", "round", "reviewer", "share"])
    frame["group"] = frame["reviewer"].map(lambda name: "a" if name in group_a else "b" if name in group_b else None)
    frame = frame.dropna(subset=["group"])
    paired = frame.pivot_table(index=["sequence_id", "round"], columns="group", values="share", aggfunc="mean").dropna()
    if paired.empty or not {"a", "b"} <= set(paired.columns):
        raise ValidationError("no sequence round was reviewed by both groups")
    return {"unit": "sequence round", **wilcoxon_signed_rank(paired["a"].tolist(), paired["b"].tolist())}


def compare_rounds(database: Database, username: str | None, round_a: int, round_b: int) -> dict:
    """Per annotator who was judged in both rounds: their acceptance rate in round a against round b."""
    auth.require_role(database, username, "reviewer")
    rows = database.query(
        """SELECT a.annotator, r.round, avg(j.reasonable) AS rate FROM review_judgments j
           JOIN reviews r ON r.id = j.review_id AND r.role = 'decision' JOIN annotations a ON a.id = j.annotation_id
           WHERE r.round IN (?, ?) GROUP BY a.annotator, r.round""",
        (round_a, round_b),
    )
    frame = pd.DataFrame(rows, columns=["annotator", "round", "rate"])
    paired = frame.pivot(index="annotator", columns="round", values="rate").dropna() if rows else pd.DataFrame()
    if paired.empty or round_a == round_b or not {round_a, round_b} <= set(paired.columns):
        raise ValidationError(f"no annotator was judged in both round {round_a} and round {round_b}")
    return {"unit": "annotator", **wilcoxon_signed_rank(paired[round_a].tolist(), paired[round_b].tolist())}


def compare_columns(
    database: Database,
    username: str | None,
    csv_bytes: bytes | str,
    column_a: str | None = None,
    column_b: str | None = None,
) -> dict:
    """The "two uploaded columns" comparison, for reviewers."""
    auth.require_role(database, username, "reviewer")
    return wilcoxon_from_csv(csv_bytes, column_a, column_b)


def wilcoxon_from_csv(csv_bytes: bytes | str, column_a: str | None = None, column_b: str | None = None) -> dict:
    """Wilcoxon on two paired numeric columns of a CSV (the first two columns by default)."""
    try:
        text = csv_bytes.decode("utf-8-sig") if isinstance(csv_bytes, bytes) else csv_bytes
        frame = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValidationError(f"the file is not a readable CSV: {exc}") from None
    columns = [str(c) for c in frame.columns]
    column_a, column_b = (
        column_a or (columns[0] if columns else None),
        column_b or (columns[1] if len(columns) > 1 else None),
    )
    missing = [c for c in (column_a, column_b) if c not in columns]
    if missing or column_a is None or column_b is None:
        raise ValidationError(f"the CSV needs two paired columns; found {', '.join(columns) or 'none'}")
    values = frame[[column_a, column_b]].apply(pd.to_numeric, errors="coerce")
    bad = int(values.isna().any(axis=1).sum())
    if bad:
        raise ValidationError(f"{bad} rows have an empty or non-numeric score in {column_a} or {column_b}")
    return {
        "unit": "row",
        "columns": [column_a, column_b],
        **wilcoxon_signed_rank(values[column_a].tolist(), values[column_b].tolist()),
    }
