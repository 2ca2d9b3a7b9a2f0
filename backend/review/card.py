"""The dataset card (``README.md``) written beside every export: counts, rounds and acceptance rates."""

from __future__ import annotations

from collections import Counter
from typing import Any

_FILE_NOTES = {
    "all_gt_seq.csv": "ViLPAct's `all_gt_seq.csv` columns; `intention_k` is `concrete;high-level` (drop-in for "
    "existing ViLPAct code; two intent pairs per sequence, the first repeated when only one exists)",
    "dataset.jsonl": "one JSON record per sequence, every final intent pair with its edit flag and original text",
    "dataset.parquet": "the same records as `dataset.jsonl`, in Parquet",
}


def _percent(value: float | None) -> str:
    """
    >>> _percent(0.82), _percent(None)
    ('82.0%', '–')
    """
    return "–" if value is None else f"{100 * value:.1f}%"


def dataset_card(records: list[dict[str, Any]], rounds: list[dict], totals: dict[str, int], files: list[str]) -> str:
    origins = Counter(r["origin"] for r in records)
    splits = Counter(r["split"] or "none" for r in records)
    intents = sum(len(r["intents"]) for r in records)
    edited = sum(1 for r in records for i in r["intents"] if i["edited"])
    data_file = "dataset.jsonl" if "dataset.jsonl" in files else (files[0] if files else "dataset.jsonl")
    lines = [
        "---",
        "pretty_name: ViLPAct intents (CompStudio export)",
        "task_categories:\n- video-text-to-text",
        "language:\n- en",
        "tags:\n- intent\n- planning\n- compositional-generalization",
        f"configs:\n- config_name: default\n  data_files: {data_file}",
        "---",
        "",
        "# ViLPAct intents, reviewed with CompStudio",
        "",
        "Action sequences from Charades (as in ViLPAct, Chen et al.) with crowd-written future-directed "
        '("S/He wants to ...") and high-level ("S/He is ...") intents, each reviewed by an expert in up to '
        "three rounds; annotations never judged reasonable were discarded.",
        "",
        "## Counts",
        "",
        "| what | count |",
        "|---|---|",
        f"| sequences | {len(records)} |",
        f"| intent pairs | {intents} |",
        f"| intent pairs edited by a reviewer (original kept) | {edited} |",
    ]
    lines += [f"| sequences with origin `{k}` | {v} |" for k, v in sorted(origins.items())]
    lines += [f"| sequences in split `{k}` | {v} |" for k, v in sorted(splits.items())]
    lines += [f"| sequences discarded after the last round (not included) | {totals.get('discarded', 0)} |", ""]
    lines += ["## Review rounds", ""]
    if rounds:
        lines += [
            "| round | sequences reviewed | with a reasonable annotation | annotations judged | judged reasonable |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['round']} | {r['sequences_reviewed']} | {r['sequences_accepted']} "
            f"({_percent(r['sequences_accepted_share'])}) | {r['annotations_judged']} | "
            f"{r['annotations_reasonable']} ({_percent(r['annotations_reasonable_share'])}) |"
            for r in rounds
        ]
        lines.append("\nViLPAct reported 82%, 94% and 100% reasonable annotations in rounds 1-3.")
    else:
        lines.append("No live review rounds in this database (intents come from the ViLPAct release).")
    lines += ["", "## Files", ""]
    lines += [f"- `{name}`: {_FILE_NOTES.get(name, '')}" for name in files]
    lines += [
        "",
        "## Fields (JSONL / Parquet)",
        "",
        "`id`, `video_id`, `source`, `split`, `scene`, `actions` (`class_id`, `name`, `start`, `end` in seconds), "
        "`act_seq_start`, `act_seq_end`, `ob_start_frame`, `ob_end_frame` (24 fps), `ob_act_seq` / `future_act_seq` "
        "(actions starting before / after the end of the observed window), `origin` (`review` or `released`), "
        "`review_round`, `intents` (`concrete_intent`, `high_level_intent`, `edited`, `original_concrete_intent`, "
        "`original_high_level_intent`; the first is the reviewer's selection).",
        "",
        "## Source and licence",
        "",
        "ViLPAct (github.com/terryyz/ViLPAct, Apache-2.0). Videos are not included: Charades has its own licence.",
        "",
    ]
    return "\n".join(lines)
