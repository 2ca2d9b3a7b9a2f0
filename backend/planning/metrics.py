"""The paper's generative planning metrics (ViLPAct §5, "Evaluation metrics"), for models that output
top-k future action sequences.

Where the paper is ambiguous we follow the authors' released evaluation script
(``software/model/deep_generative_baselines/action_level_charades_prophetnet_evaluation_top10.py``):

* **Seq-item-acc**: positions ``i < min(len(ref), len(pred))`` with ``pred[i] == ref[i]``, divided by the
  *prediction* length (setting ``planning_item_acc_denominator``: ``prediction`` | ``reference`` | ``longer``);
  an empty prediction scores 0. Averaged over the top-k of a question, then over questions.
* **Precision / recall**: on *sets* of actions (``|set(ref) & set(pred)| / |set(pred)|`` resp. ``/ |set(ref)|``),
  as the script does; setting ``planning_pr_counting=occurrences`` counts repeated actions instead.
* **Seq-hit@k**: share of questions whose first k predictions contain the reference exactly.
* **BLEU-1/2**: NLTK's ``corpus_bleu`` on action tokens without smoothing, every one of a question's
  top-k predictions being one hypothesis against that question's reference (as the script does).
  Reported as fractions in [0, 1] (the paper prints them x100).
* **Dist-1/2** (Li et al. 2015): distinct n-grams / all n-grams over the top-k predictions of every question
  pooled together (setting ``planning_dist_scope=per_question`` averages per-question ratios instead).

"future" metrics compare predicted futures with the reference future; "full" metrics prepend the observed
actions to both, as the script's full-sequence evaluation does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

Seq = Sequence[str]


@dataclass(frozen=True)
class MetricOptions:
    top_k: int = 10
    item_acc_denominator: str = "prediction"
    pr_counting: str = "set"
    dist_scope: str = "pooled"


def item_accuracy(reference: Seq, prediction: Seq, denominator: str = "prediction") -> float:
    """Exact-position matches over the prediction length (authors' code).

    >>> item_accuracy(["a", "b", "c"], ["a", "x", "c", "d"])          # 2 matches / 4 predicted
    0.5
    >>> item_accuracy(["a", "b", "c"], ["a", "x", "c", "d"], "reference")  # 2 / 3
    0.6666666666666666
    >>> item_accuracy(["a", "b"], [])                                  # empty prediction
    0.0
    """
    matches = sum(1 for i in range(min(len(reference), len(prediction))) if prediction[i] == reference[i])
    size = {"prediction": len(prediction), "reference": len(reference), "longer": max(len(prediction), len(reference))}[
        denominator
    ]
    return matches / size if size else 0.0


def precision_recall(reference: Seq, prediction: Seq, counting: str = "set") -> tuple[float, float]:
    """Order-free precision and recall.

    >>> precision_recall(["a", "b", "b", "c"], ["b", "b", "d"])            # sets {a,b,c} vs {b,d}
    (0.5, 0.3333333333333333)
    >>> precision_recall(["a", "b", "b", "c"], ["b", "b", "d"], "occurrences")  # 2/3 predicted, 2/4 reference
    (0.6666666666666666, 0.5)
    >>> precision_recall(["a"], [])
    (0.0, 0.0)
    """
    if counting == "set":
        ref, pred = set(reference), set(prediction)
        common = len(ref & pred)
        return (common / len(pred) if pred else 0.0, common / len(ref) if ref else 0.0)
    ref_set, pred_set = set(reference), set(prediction)
    precision = sum(1 for a in prediction if a in ref_set) / len(prediction) if prediction else 0.0
    recall = sum(1 for a in reference if a in pred_set) / len(reference) if reference else 0.0
    return precision, recall


def seq_hit(reference: Seq, predictions: Sequence[Seq], k: int) -> float:
    """1.0 when one of the first k predictions equals the reference.

    >>> seq_hit(["a", "b"], [["a"], ["a", "b"]], 1), seq_hit(["a", "b"], [["a"], ["a", "b"]], 5)
    (0.0, 1.0)
    """
    return 1.0 if any(list(p) == list(reference) for p in predictions[:k]) else 0.0


def _ngrams(tokens: Seq, n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def corpus_bleu(pairs: Sequence[tuple[Seq, Seq]], max_n: int) -> float:
    """NLTK ``corpus_bleu`` with uniform weights over 1..max_n, one reference each, no smoothing.

    Clipped n-gram matches and n-gram counts are summed over the corpus (a hypothesis with no n-grams of
    an order still counts 1 in that order's denominator, as NLTK's ``max(1, count)``); brevity penalty
    ``exp(1 - r/c)`` when the hypotheses are shorter in total. A zero match count at any order gives 0
    (NLTK returns 0 for no unigram match and ~1e-154 otherwise: we return 0).

    Worked example: hypotheses "a b c" vs "a b d" and "a a" vs "a": unigram matches 2 + 1 = 3 of 5,
    bigram matches 1 + 0 of 3; c = 5 >= r = 4, so BP = 1. BLEU-1 = 3/5, BLEU-2 = sqrt(3/5 * 1/3).

    >>> corpus_bleu([(["a", "b", "d"], ["a", "b", "c"]), (["a"], ["a", "a"])], 1)
    0.6
    >>> round(corpus_bleu([(["a", "b", "d"], ["a", "b", "c"]), (["a"], ["a", "a"])], 2), 6)
    0.447214
    >>> corpus_bleu([(["a", "b"], ["a"])], 1)       # short hypothesis: BP = exp(1 - 2/1)
    0.36787944117144233
    >>> corpus_bleu([(["a"], [])], 1)
    0.0
    """
    log_sum = 0.0
    for n in range(1, max_n + 1):
        matched = total = 0
        for reference, hypothesis in pairs:
            ref_counts = Counter(_ngrams(reference, n))
            hyp_counts = Counter(_ngrams(hypothesis, n))
            matched += sum(min(count, ref_counts[g]) for g, count in hyp_counts.items())
            total += max(1, sum(hyp_counts.values()))  # NLTK: max(1, count) per hypothesis
        if matched == 0:
            return 0.0
        log_sum += math.log(matched / total) / max_n
    hyp_len = sum(len(h) for _, h in pairs)
    ref_len = sum(len(r) for r, _ in pairs)
    penalty = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return penalty * math.exp(log_sum)


def distinct_n(sequences: Sequence[Seq], n: int) -> float:
    """Distinct n-grams over all n-grams of ``sequences`` (Li et al. 2015); 0 when there are none.

    >>> distinct_n([["a", "b", "a"], ["a", "b"]], 1)     # {a, b} of 5 unigrams
    0.4
    >>> distinct_n([["a", "b", "a"], ["a", "b"]], 2)     # {ab, ba} of 3 bigrams
    0.6666666666666666
    >>> distinct_n([["a"]], 2)
    0.0
    """
    grams = [g for s in sequences for g in _ngrams(s, n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def compute(records: Sequence[dict], options: MetricOptions = MetricOptions()) -> dict[str, float]:
    """Every metric over ``records`` (each ``{"reference": [...], "predictions": [[...], ...]}``).

    A question with no predictions scores 0 on the per-question metrics. Worked example (top-k = 10):
    question 1 reference a b, predictions [a b] and [a c]; question 2 reference c, predictions [] .
    Item acc: q1 (2/2 + 1/2)/2 = 0.75, q2 0 -> 0.375. Precision q1 (1 + 1/2)/2 = 0.75 -> 0.375.
    Recall q1 (1 + 1/2)/2 -> 0.375. Seq-hit@5: q1 hits -> 0.5. BLEU-1: matches 2 + 1 of 4 hypothesis tokens,
    c = 4 = r -> 0.75. Dist-1 pooled: {a, b, c} of 4 -> 0.75.

    >>> out = compute([{"reference": ["a", "b"], "predictions": [["a", "b"], ["a", "c"]]},
    ...                {"reference": ["c"], "predictions": []}])
    >>> {k: out[k] for k in ("seq_item_acc", "precision", "recall", "seq_hit@5", "bleu1", "dist1")}
    {'seq_item_acc': 0.375, 'precision': 0.375, 'recall': 0.375, 'seq_hit@5': 0.5, 'bleu1': 0.75, 'dist1': 0.75}
    """
    item, precision, recall, hit5, hit10, dist_seqs = [], [], [], [], [], []
    pairs: list[tuple[Seq, Seq]] = []
    per_question_dist: dict[int, list[float]] = {1: [], 2: []}
    for record in records:
        reference = list(record["reference"])
        predictions = [list(p) for p in record["predictions"]][: options.top_k]
        item.append(_mean([item_accuracy(reference, p, options.item_acc_denominator) for p in predictions]))
        pr = [precision_recall(reference, p, options.pr_counting) for p in predictions]
        precision.append(_mean([p for p, _ in pr]))
        recall.append(_mean([r for _, r in pr]))
        hit5.append(seq_hit(reference, predictions, 5))
        hit10.append(seq_hit(reference, predictions, 10))
        pairs.extend((reference, p) for p in predictions)
        dist_seqs.extend(predictions)
        for n in (1, 2):
            per_question_dist[n].append(distinct_n(predictions, n))
    if options.dist_scope == "per_question":
        dist = {n: _mean(per_question_dist[n]) for n in (1, 2)}
    else:
        dist = {n: distinct_n(dist_seqs, n) for n in (1, 2)}
    return {
        "questions": len(records),
        "seq_item_acc": _mean(item),
        "precision": _mean(precision),
        "recall": _mean(recall),
        "seq_hit@5": _mean(hit5),
        "seq_hit@10": _mean(hit10),
        "bleu1": corpus_bleu(pairs, 1),
        "bleu2": corpus_bleu(pairs, 2),
        "dist1": dist[1],
        "dist2": dist[2],
    }


def compute_future_and_full(records: Sequence[dict], options: MetricOptions = MetricOptions()) -> dict:
    """``{"future": ..., "full": ...}``; "full" only for records that carry their ``observed`` actions."""
    result: dict = {"future": compute(records, options)}
    with_observed = [r for r in records if r.get("observed") is not None]
    if with_observed:
        full = [
            {
                "reference": list(r["observed"]) + list(r["reference"]),
                "predictions": [list(r["observed"]) + list(p) for p in r["predictions"]],
            }
            for r in with_observed
        ]
        result["full"] = compute(full, options)
    return result
