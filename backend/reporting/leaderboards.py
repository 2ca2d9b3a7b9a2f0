"""The leaderboards' tables as a person reads them (issue 41): headers in words, numbers rounded as the papers
print them (percent with two decimals, as MMComposition's Table 2 prints 90.31), every row saying what it is
(people, a model, a model without images, random choice) and which items it covers. The rows themselves come
from the benchmarks' own functions (:func:`backend.vqa.runs.leaderboard`); the CSV and the JSON endpoints keep
their machine names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from backend.vqa.categories import CATEGORIES, DIMENSIONS, SHORT_NAMES

if TYPE_CHECKING:
    import pandas as pd

WHO = {
    "people": "people",
    "model": "model",
    "blind": "model, no image",
    "imported": "imported answers",
    "random": "random choice",
}


def interval(low: float | None, high: float | None) -> str:
    """A 95% interval as printed: ``88.10–92.40`` (empty when there is none).

    >>> interval(88.1, 92.4), interval(None, None)
    ('88.10–92.40', '')
    """
    return "" if low is None or high is None else f"{low:.2f}–{high:.2f}"


def _status(value: str | None) -> str:
    return "" if not value else value.replace("_", " ")


def vqa_board(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The VQA leaderboard's rows (:func:`backend.vqa.runs.leaderboard`) as the page shows them: one column per
    thing a person asks about, in words; the 13 categories are in :func:`paper_table`.

    >>> row = {"name": "Humans (majority of 3)", "kind": "people", "overall": 90.3125, "ci95_low": 85.0,
    ...        "ci95_high": 95.5, "Perception": 91.0, "Reasoning": 89.5, "Probing": None, "questions": 40,
    ...        "answered": 40, "refusals": None, "parse_failures": None, "errors": None, "flip_rate": None,
    ...        "status": None}
    >>> shown = vqa_board([row])[0]
    >>> shown["Run"], shown["Who"], shown["Overall (%)"], shown["95% interval"], shown["Items covered"]
    ('Humans (majority of 3)', 'people', 90.31, '85.00–95.50', 40)
    >>> shown["Probing (%)"], shown["Refused"], shown["Run status"]
    (None, None, '')
    """
    out = []
    for r in rows:
        shown = {
            "Run": r["name"],
            "Who": WHO.get(r["kind"], r["kind"]),
            "Overall (%)": _two(r.get("overall")),
            "95% interval": interval(r.get("ci95_low"), r.get("ci95_high")),
            **{f"{d} (%)": _two(r.get(d)) for d in DIMENSIONS},
            "Items covered": r.get("questions"),
            "Answered": r.get("answered"),
            "Refused": r.get("refusals"),
            "Unparsed": r.get("parse_failures"),
            "Failed calls": r.get("errors"),
            "Flips under rotation (%)": _two(r.get("flip_rate")),
            "Run status": _status(r.get("status")),
        }
        if "note" in r:
            shown["Note"] = r.get("note") or ""
        out.append(shown)
    return out


def _two(value: float | None) -> float | None:
    return None if value is None else round(float(value), 2)


def paper_table(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MMComposition's Table 2 layout: people first, then the models best first, Random Choice last; a column
    per category under its short name, then Overall, with the items each row covers and its 95% interval.

    >>> rows = [{"name": "Random choice", "kind": "random", "overall": 30.15, "questions": 4},
    ...         {"name": "m", "kind": "model", "overall": 40.0, "questions": 4, "ci95_low": 1.0, "ci95_high": 80.0},
    ...         {"name": "n", "kind": "model", "overall": 67.95, "questions": 2},
    ...         {"name": "Humans (majority of 3)", "kind": "people", "overall": 90.31, "questions": 3}]
    >>> [(r["Method"], r["Overall"]) for r in paper_table(rows)]
    [('Humans (majority of 3)', 90.31), ('n', 67.95), ('m', 40.0), ('Random Choice', 30.15)]
    >>> list(paper_table(rows)[0])[:3], list(paper_table(rows)[0])[-3:]
    (['Method', 'Attr-P', 'Obj-P'], ['Overall', 'Items', '95% interval'])
    """
    people = [r for r in rows if r["kind"] == "people"]
    models = sorted((r for r in rows if r["kind"] not in ("people", "random")), key=lambda r: -(r["overall"] or 0))
    chance = [r for r in rows if r["kind"] == "random"]
    out = []
    for r in [*people, *models, *chance]:
        name = "Random Choice" if r["kind"] == "random" else r["name"]  # as the paper names the row
        out.append(
            {"Method": name}
            | {SHORT_NAMES[c]: _two(r.get(SHORT_NAMES[c])) for c in CATEGORIES}
            | {
                "Overall": _two(r.get("overall")),
                "Items": r.get("questions"),
                "95% interval": interval(r.get("ci95_low"), r.get("ci95_high")),
            }
        )
    return out


def position_rows(figures: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What circular evaluation reveals, one row per model (:func:`backend.vqa.circular.position_bias`).

    >>> fig = {"model": "m", "flip": {"items": 2, "flip_rate": 0.5}, "positions": {"shares": {"A": 0.75, "B": 0.25},
    ...        "chi2": 4.0, "p_value": 0.0455}, "circular": {"consistency_rate": 0.5}, "both_ways": None}
    >>> position_rows([fig])[0]
    {'Model': 'm', 'Items under every rotation': 2, 'Flips under rotation (%)': 50.0, 'Consistent (%)': 50.0, 'Answers at A (%)': 75.0, 'Answers at B (%)': 25.0, 'χ² against uniform': 4.0, 'p': 0.0455, 'Generation vs likelihood: differ (%)': None}
    """
    letters = sorted({letter for f in figures for letter in f["positions"].get("shares", {})})
    out = []
    for f in figures:
        both = f.get("both_ways") or {}
        rate = both.get("disagreement_rate")
        flip = f["flip"].get("flip_rate")
        consistent = (f.get("circular") or {}).get("consistency_rate")
        shares = f["positions"].get("shares", {})
        out.append(
            {
                "Model": f["model"],
                "Items under every rotation": f["flip"]["items"],
                "Flips under rotation (%)": None if flip is None else round(100 * flip, 2),
                "Consistent (%)": None if consistent is None or not f["flip"]["items"] else round(100 * consistent, 2),
            }
            | {f"Answers at {x} (%)": round(100 * shares[x], 2) if x in shares else None for x in letters}
            | {
                "χ² against uniform": f["positions"].get("chi2"),
                "p": f["positions"].get("p_value"),
                "Generation vs likelihood: differ (%)": None if rate is None else round(100 * rate, 2),
            }
        )
    return out


def paired_rows(table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """:func:`backend.inference.comparison.compare_models`' pairs as a person reads them: percent with two
    decimals, each pair's own count of items both answered.

    >>> from backend.inference.comparison import compare_models
    >>> rows = paired_rows(compare_models({"a": {"q": True, "r": True}, "b": {"q": False}}, 10, pairwise=True))
    >>> rows[0]["Items both answered"], rows[0]["A right (%)"], rows[0]["Only A right"], rows[0]["Difference (points)"]
    (1, 100.0, 1, 100.0)
    """
    return [
        {
            "Run A": p["model_a"],
            "Run B": p["model_b"],
            "Items both answered": p["n"],
            "A right (%)": round(100 * p["accuracy_a"], 2),
            "B right (%)": round(100 * p["accuracy_b"], 2),
            "Difference (points)": round(100 * p["difference"], 2),
            "95% interval": interval(round(100 * p["ci95"][0], 2), round(100 * p["ci95"][1], 2)),
            "Only A right": p["a_only_right"],
            "Only B right": p["b_only_right"],
            "McNemar p": round(p["p_value"], 4),
            "Holm p": round(p["p_holm"], 4),
        }
        for p in table["pairs"]
    ]


def printed(rows: Sequence[Mapping[str, Any]], skip: Sequence[str] = ("p", "McNemar p", "Holm p")) -> list[dict]:
    """Rows as the papers print them: every float with two decimals (``100.00``, not ``100``), a missing
    value as ``-`` (MMComposition's Table 2 prints the categories it has no score for so); counts stay
    integers and p-values (``skip``) keep their own digits.

    >>> printed([{"Run": "h", "Overall (%)": 100.0, "Obj-P": None, "Items": 3, "Holm p": 0.0455}])
    [{'Run': 'h', 'Overall (%)': '100.00', 'Obj-P': '-', 'Items': 3, 'Holm p': 0.0455}]
    """
    return [
        {k: "-" if v is None else f"{v:.2f}" if isinstance(v, float) and k not in skip else v for k, v in row.items()}
        for row in rows
    ]


def frame(rows: Sequence[Mapping[str, Any]], empty: str) -> pd.DataFrame:
    """A table for the page, or one cell saying why it is empty (never bare numbered headers).

    >>> list(frame([], "nothing to pair yet").iloc[0])
    ['nothing to pair yet']
    """
    import pandas as pd

    return pd.DataFrame(list(rows)) if rows else pd.DataFrame([{"": empty}])
