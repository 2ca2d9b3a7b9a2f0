"""Wilcoxon, agreement and compare-two-groups against the reference libraries and hand-computed examples,
and the action-sequence quality inspection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wilcoxon

from backend.errors import NotFound, ValidationError
from backend.review import agreement, inspection
from backend.review import service as review
from backend.review.stats import krippendorff_alpha_nominal, wilcoxon_signed_rank
from tests.review_helpers import add_people, add_sequences, annotate_all, judge_all


def test_wilcoxon_matches_scipy_with_ties_and_zero_differences():
    x = [3, 5, 2, 4, 4, 1, 5, 3, 2, 4, 3, 5]
    y = [3, 4, 3, 2, 4, 2, 3, 3, 3, 2, 1, 4]
    result = wilcoxon_signed_rank(x, y)
    reference = wilcoxon(x, y, zero_method="wilcox", method="approx")
    assert result["statistic"] == reference.statistic and result["p_value"] == pytest.approx(reference.pvalue)
    # by hand: differences 0 1 -1 2 0 -1 2 0 -1 2 2 1 -> 3 zeros, n = 9; |d| = 1 (x5) ranks 3, 2 (x4) ranks 7.5
    # W- = 3 * 3 = 9, W+ = 2 * 3 + 4 * 7.5 = 36 -> statistic 9
    assert (result["n_pairs"], result["n"], result["n_zero"], result["statistic"]) == (12, 9, 3, 9.0)
    assert result["method"] == "approx" and "3 pairs with equal scores were left out" in result["reading"]


def test_wilcoxon_reading_and_errors():
    significant = wilcoxon_signed_rank([2 * i + 1 for i in range(20)], list(range(20)))  # distinct differences
    assert significant["p_value"] < 0.05 and "significantly higher" in significant["reading"]
    assert significant["method"] == "exact"
    with pytest.raises(ValidationError, match="all 3 paired differences are zero"):
        wilcoxon_signed_rank([1, 2, 3], [1, 2, 3])
    with pytest.raises(ValidationError, match="paired"):
        wilcoxon_signed_rank([1, 2], [1])


def test_krippendorff_with_missing_judgments_matches_hand_computation():
    # 3 coders, 4 items, one missing. Item 1: 1,1,1; item 2: 0,0,- ; item 3: 1,0,1; item 4: 0,0,0.
    # Coincidences (weight 1/(m-1)): item1 o11 += 6/2 = 3; item2 o00 += 2/1 = 2; item3 o11 += 2/2 = 1,
    # o10 = o01 += 2/2 = 1 each; item4 o00 += 6/2 = 3. n = 11, n0 = 6, n1 = 5.
    # D_o = 2/11, D_e = 2*6*5/(11*10) = 60/110; alpha = 1 - (2/11)/(60/110) = 1 - 20/60 = 2/3
    matrix = [[1, 0, 1, 0], [1, 0, 0, 0], [1, np.nan, 1, 0]]
    assert krippendorff_alpha_nominal(matrix) == pytest.approx(2 / 3)
    assert krippendorff_alpha_nominal([[1, 1], [1, 1]]) is None  # one value everywhere: undefined


def test_compare_columns_from_an_upload(database):
    add_people(database, reviewers=["rev"])
    csv_text = "human_a,human_b,other\n4,3,x\n5,5,y\n3,1,z\n2,4,w\n5,2,v\n"
    result = agreement.compare_columns(database, "rev", csv_text.encode())
    assert result["columns"] == ["human_a", "human_b"] and (result["n"], result["n_zero"]) == (4, 1)
    assert result["statistic"] == wilcoxon([4, 5, 3, 2, 5], [3, 5, 1, 4, 2], zero_method="wilcox").statistic
    with pytest.raises(ValidationError, match="non-numeric"):
        agreement.compare_columns(database, "rev", csv_text, "human_a", "other")
    with pytest.raises(ValidationError, match="two paired columns"):
        agreement.compare_columns(database, "rev", "only\n1\n")


def _fake_embed(texts: list[str]) -> np.ndarray:
    """Unit vectors by the intent's last word: 'thirsty' -> e0, 'tired' -> e1, anything else -> e2."""
    axes = {"thirsty": 0, "tired": 1}
    vectors = np.zeros((len(texts), 3))
    for row, text in enumerate(texts):
        vectors[row, axes.get(text.split()[-1], 2)] = 1.0
    return vectors


def test_semantic_similarity_and_round_comparison(database, settings):
    add_people(database, annotators=["a1", "a2", "a3", "b1", "b2", "b3"], reviewers=["rev"])
    add_sequences(database, ["S1", "S2"])
    annotate_all(database, settings, ["a1", "a2", "a3"])
    result = agreement.semantic_agreement(database, settings, "rev", embed=_fake_embed)
    # high-level intents: thirsty (e0), tired (e1), hot (e2): all pairs orthogonal -> 0.0; concrete: all e2 -> 1.0
    assert [r["high_level_similarity"] for r in result["sequences"]] == [0.0, 0.0]
    assert result["mean_concrete"] == 1.0
    for verdicts in ([True, False, False], [False, False, False]):
        item = review.next_review(database, settings, "rev")["item"]
        final = review.FinalChoice(item["annotations"][0]["annotation_id"], item["annotations"][0]["annotation_id"])
        review.submit_review(
            database,
            settings,
            "rev",
            item["sequence_id"],
            1,
            judge_all(item, verdicts),
            final if any(verdicts) else None,
        )
    with pytest.raises(ValidationError, match="no annotator was judged in both"):
        agreement.compare_rounds(database, "rev", 1, 2)
    with pytest.raises(ValidationError, match="reviewed by both groups"):
        agreement.compare_reviewer_groups(database, "rev", ["rev"], ["someone"])


def test_inspection_sample_report_in_the_papers_form(database, settings):
    add_people(database, reviewers=["rev", "rev2"])
    add_sequences(database, [f"T{i}" for i in range(8)], split="test", pool=False)
    add_sequences(database, ["V1", "V2"], split="val", pool=False)
    started = inspection.start_inspection(database, settings.replace(inspection_sample_size=5), "rev", seed=7)
    assert started["size"] == 5 and started["split"] == "test"
    items = database.query("SELECT sequence_id FROM inspection_items ORDER BY position")
    assert all(r["sequence_id"].startswith("T") for r in items)
    again = inspection.start_inspection(database, settings, "rev", size=5, seed=7)
    assert [
        r["sequence_id"]
        for r in database.query(
            "SELECT sequence_id FROM inspection_items WHERE inspection_id = ? ORDER BY position",
            (again["inspection_id"],),
        )
    ] == [r["sequence_id"] for r in items]  # same seed, same sample
    verdicts = [(True, True, True), (True, False, False), (False, False, True), (True, True, False), (True, True, True)]
    for verdict in verdicts:
        current = inspection.next_item(database, "rev", started["inspection_id"])
        inspection.judge(
            database, "rev", started["inspection_id"], current["sequence_id"], inspection.InspectionJudgment(*verdict)
        )
    assert inspection.next_item(database, "rev", started["inspection_id"]) is None
    report = inspection.report(database, "rev", started["inspection_id"])
    assert report["reviewers"][0]["paper_form"] == "4 / 3 / 3 of 5" and report["reviewers"][0]["complete"]
    with pytest.raises(NotFound):
        inspection.judge(database, "rev", started["inspection_id"], "V1", inspection.InspectionJudgment(1, 1, 1))
    with pytest.raises(ValidationError, match="no sequences in split"):
        inspection.start_inspection(database, settings, "rev", split="train")


def test_semantic_similarity_with_the_local_sentence_embedding_model(database, settings):
    """The default path: an encoder of its own for the ``embedding_model`` setting (bundled MiniLM)."""
    add_people(database, annotators=["a1", "a2", "a3"], reviewers=["rev"])
    add_sequences(database, ["S1"])
    annotate_all(database, settings, ["a1", "a2", "a3"])
    result = agreement.semantic_agreement(database, settings, "rev")
    row = result["sequences"][0]
    assert row["annotations"] == 3
    # three different paraphrases of related intents: similar but not identical
    assert 0.2 < row["concrete_similarity"] < 0.99 and 0.2 < row["high_level_similarity"] < 0.99
    assert result["mean_concrete"] == row["concrete_similarity"]
