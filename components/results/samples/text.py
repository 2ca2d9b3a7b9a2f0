"""The Samples panel's text: a run's rows as table cells, the counts, one item's header and parse trace, two runs'
sides. Pure functions over what :mod:`backend.inference.samples_api` returns; everything a model said or a person
wrote is plain text (table cells) or escaped Markdown (:func:`components.common.esc`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from backend.humans.samples import PeopleOnItem, counts_text
from components.common import esc

FILTER_CHOICES = [
    ("all", "all"),
    ("wrong", "wrong"),
    ("unparsed", "unparsed"),
    ("refused", "refused"),
    ("inconsistent across rotations (flips)", "inconsistent"),
    ("right", "right"),
    ("failed calls", "failed"),
    ("people split (an item to check)", "people_split"),
    ("models wrong where people agree (a gap)", "people_agree_model_wrong"),
]
COLUMNS = ["item", "category", "details", "key", "read", "outcome", "score", "rotations", "people", "raw output"]
VS_COLUMNS = ["item", "category", "key", "right", "A read", "A outcome", "B read", "B outcome"]
PAGE_SIZE = 25


def _details(facets: dict[str, Any], category: str = "") -> str:
    """What else the view filters on besides the category (the scene is the category of planning items)."""
    names = {"future_length": "length", "choice_type": "choice"}
    return ", ".join(
        f"{names.get(k, k)} {v}" for k, v in facets.items() if k != "tests" and not (k == "scene" and v == category)
    )


def _media_line(part: dict[str, Any], index: int) -> str:
    """How one video part became frames (from the recorded request: window, count, decoder, rate)."""
    sampling = part.get("sampling") or {}
    window = sampling.get("window")
    span = f" of {window[0]:.2f}-{window[1]:.2f} s" if window else ""
    fps = f", {part['fps']:.2f} frames per second" if part.get("fps") else ""
    decoder = f" (decoder: {sampling['decoder']})" if sampling.get("decoder") else ""
    return f"Video {index}: {part.get('frames', '?')} frames sampled{span}{fps}{decoder}."


def _rotations(row: dict[str, Any]) -> str:
    if not row["rotations"]:
        return ""
    picks = " ".join(f"r{r['rotation']}:{r['original'] or r['read']}" for r in row["rotations"])
    return f"{'agree' if row['agree'] else 'DISAGREE'} ({picks})"


def _people(on: dict[str, Any] | None) -> str:
    """How people answered the item (counts per option, the key marked; options as authored)."""
    return counts_text(PeopleOnItem(on["counts"], on["key"])) if on else ""


def table_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The page's rows for the table (plain text cells; the raw output cut to one line)."""
    return pd.DataFrame(
        [
            [
                r["item_id"],
                r["category"],
                _details(r["facets"], r["category"]),
                r["answer"],
                r["parsed"],
                r["outcome"],
                "" if r["score"] is None else round(r["score"], 4),
                _rotations(r),
                _people(r.get("people")),
                " ".join((r["raw_output"] or r["error"] or "").split())[:160],
            ]
            for r in rows
        ],
        columns=COLUMNS,
    )


def counts_markdown(page: dict[str, Any]) -> str:
    counts = page["counts"]
    shown = ", ".join(f"{counts[name]} {label}" for label, name in FILTER_CHOICES if name != "all")
    run = page["run"]
    rebuilt = " Its items were rebuilt from its options (it ran before runs kept them)." if page["items_source"] == "rebuilt" else ""  # fmt: skip
    return f"**{esc(run['label'])}**: {counts['all']} items ({shown}).{rebuilt}"


def page_info_text(page: dict[str, Any]) -> str:
    return f"Showing {page['total']} that match, page {min(page['query']['page'], page['pages'])} of {page['pages']}."


def trace_markdown(detail: dict[str, Any]) -> str:
    """How the answer was read: the stored reading, then every rule tried when it is read again now."""
    sample = detail["sample"]
    lines = [f"**Read as:** {esc(sample['parsed'])}, by the rule *{esc(sample['how'] or '-')}*."]
    trace = detail["trace"]
    if trace is None:
        return lines[0] + " There is no output to read."
    if detail["reread_differs"]:
        lines.append(
            f"⚠️ Read again today, this output gives *{esc(trace['result']['how'])}*: the parser changed since "
            "the answer was stored (scores use the stored reading)."
        )
    lines += ["", "| step | rule | outcome | what it saw |", "|---|---|---|---|"]
    for index, step in enumerate(trace["steps"], 1):
        detail_text = esc(step["detail"]).replace("\n", " ")
        lines.append(f"| {index} | {esc(step['rule'])} | {esc(step['outcome'])} | {detail_text} |")
    return "\n".join(lines)


def header_markdown(detail: dict[str, Any]) -> str:
    s = detail["sample"]
    score = "" if s["score"] is None else f", score {s['score']:.4g}"
    details = _details(s["facets"], s["category"])
    where = " · ".join(esc(x) for x in (s["category"], details) if x)
    prompt = detail["prompt"]
    proof = (
        "the recorded prompt hashes to this key"
        if prompt and prompt["proven"]
        else "no record of this prompt (stored before runs recorded them)"
        if prompt is None
        else "⚠️ the recorded prompt does not hash to this key"
    )
    videos = [p for p in (prompt or {}).get("parts", []) if p["type"] == "video" and "sampling" in p]
    media = "".join(f"\n\n{esc(_media_line(part, i))}" for i, part in enumerate(videos, 1))
    people = detail.get("people")
    beside = f"\n\n**People** (options as authored): {esc(_people(people))}" if people else ""
    return (
        f"### {esc(s['item_id'])}\n{where + ' · ' if where else ''}key **{esc(s['answer'])}** · read "
        f"**{esc(s['parsed'])}** · {esc(s['outcome'])}{score}{beside}\n\nPrompt hash `{esc(s['prompt_hash'])}`: {proof}."
        + media
        + "".join(f"\n\n{esc(note)}" for note in (prompt or {}).get("notes", []))
    )


def gallery_items(detail: dict[str, Any]) -> list[tuple[str, str]]:
    prompt = detail["prompt"] or {}
    return [(image["path"], image["caption"]) for image in prompt.get("images", []) if image["path"]]


def item_choice(row: dict[str, Any]) -> str:
    """A page's item as the item picker names it: id, outcome, what was read."""
    return f"{row['item_id']}: {row['outcome']}, read {row['parsed']}"[:120]


def run_choices(runs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(run["label"], str(run["run_id"])) for run in runs]


def side_markdown(detail: dict[str, Any], tag: str) -> str:
    s = detail
    return f"**{tag}: {esc(s['model'])}** read **{esc(s['parsed'])}**, {esc(s['outcome'])}"
