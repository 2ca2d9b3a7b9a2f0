"""Each model against each run of people, on the very items both answered (issue 41, Must 2).

A model and a run of people rarely cover the same items (people answer a sample; a model may run on part of a
benchmark): each pair is compared on the items **both** answered, and says how many (``n``). Outcomes are fully
right or not (:mod:`backend.inference.comparison`: paired bootstrap of the difference, exact McNemar on the
discordant items, Holm across the family of model × people pairs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.inference.comparison import Outcomes, cohens_h, common_items, holm, mcnemar_exact, paired_bootstrap

PEOPLE_COLUMNS = (
    "model", "people", "items both answered", "model right (%)", "people right (%)", "difference (points)",
    "95% interval", "only the model right", "only people right", "McNemar p", "Holm p",
)  # fmt: skip


def people_vs_models(
    models: Mapping[str, Outcomes], people: Mapping[str, Outcomes], samples: int = 2000, seed: int = 0
) -> list[dict]:
    """One row per (model, people run) on the items both answered.

    Worked by hand: the model is right on q1 q2 q3, wrong on q4; people are right on q1 q2 q4 q5 (q5 the model
    did not answer). On q1-q4: only the model right on q3, only people right on q4, so (1, 1) discordant,
    McNemar p = 1; both 3 of 4 right, difference 0.

    >>> rows = people_vs_models({"m": {"q1": True, "q2": True, "q3": True, "q4": False}},
    ...                         {"Humans (majority of 3)": {"q1": True, "q2": True, "q3": False, "q4": True,
    ...                                                     "q5": True}}, samples=100)
    >>> r = rows[0]
    >>> r["n"], r["model_only_right"], r["people_only_right"], r["p_value"], r["difference"]
    (4, 1, 1, 1.0, 0.0)
    """
    raw: list[dict[str, Any]] = []
    for model, mine in models.items():
        for name, theirs in people.items():
            shared = common_items({"a": mine, "b": theirs})
            a, b = [bool(mine[i]) for i in shared], [bool(theirs[i]) for i in shared]
            diff, low, high = paired_bootstrap(a, b, samples, seed)
            only_model, only_people, p = mcnemar_exact(a, b)
            acc_a = sum(a) / len(a) if a else 0.0
            acc_b = sum(b) / len(b) if b else 0.0
            raw.append(
                {
                    "model": model,
                    "people": name,
                    "n": len(shared),
                    "model_accuracy": round(acc_a, 4),
                    "people_accuracy": round(acc_b, 4),
                    "difference": round(diff, 4),
                    "ci95": [round(low, 4), round(high, 4)],
                    "model_only_right": only_model,
                    "people_only_right": only_people,
                    "p_value": round(p, 6),
                    "cohens_h": round(cohens_h(acc_a, acc_b), 4),
                }
            )
    adjusted = holm({f"{r['model']}|{r['people']}": r["p_value"] for r in raw})
    return [r | {"p_holm": round(adjusted[f"{r['model']}|{r['people']}"], 6)} for r in raw]


def people_rows(pairs: list[dict]) -> list[dict]:
    """:func:`people_vs_models` as a table a person reads (percent with two decimals, headers in words).

    >>> people_rows([{"model": "m", "people": "h", "n": 4, "model_accuracy": 0.75, "people_accuracy": 0.5,
    ...   "difference": 0.25, "ci95": [-0.25, 0.75], "model_only_right": 2, "people_only_right": 1,
    ...   "p_value": 1.0, "p_holm": 1.0}])[0]["difference (points)"]
    25.0
    """
    return [
        dict(
            zip(
                PEOPLE_COLUMNS,
                (
                    p["model"],
                    p["people"],
                    p["n"],
                    round(100 * p["model_accuracy"], 2),
                    round(100 * p["people_accuracy"], 2),
                    round(100 * p["difference"], 2),
                    f"{100 * p['ci95'][0]:.2f}–{100 * p['ci95'][1]:.2f}",
                    p["model_only_right"],
                    p["people_only_right"],
                    round(p["p_value"], 4),
                    round(p["p_holm"], 4),
                ),  # fmt: skip
                strict=True,
            )
        )
        for p in pairs
    ]
