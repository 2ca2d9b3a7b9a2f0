"""The Samples view of the Results tab (reviewers and admins): any stored run item by item, one item as the
model saw it, and two runs side by side.

Layout, then thin handlers over :mod:`backend.inference.samples_api` (which checks the caller's role), then
events, each with an explicit, stable ``api_name``. Everything a model said or a person wrote reaches the page
as plain text (text boxes, table cells) or escaped Markdown (:func:`components.common.esc`). JSON endpoints:
``results_sample_runs``, ``results_samples``, ``results_sample`` and ``results_samples_vs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.humans.samples import PeopleOnItem, counts_text
from backend.inference import samples_api
from components.access import endpoint, listen
from components.common import EventOptions, caller, esc, ui_errors
from components.feedback import shown_in

FAST: EventOptions = {"api_visibility": "private", "queue": False}  # database reads: milliseconds
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


def _counts(page: dict[str, Any]) -> str:
    counts = page["counts"]
    shown = ", ".join(f"{counts[name]} {label}" for label, name in FILTER_CHOICES if name != "all")
    run = page["run"]
    rebuilt = " Its items were rebuilt from its options (it ran before runs kept them)." if page["items_source"] == "rebuilt" else ""  # fmt: skip
    return f"**{esc(run['label'])}**: {counts['all']} items ({shown}).{rebuilt}"


def _page_info(page: dict[str, Any]) -> str:
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


def _header(detail: dict[str, Any]) -> str:
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


def _choice(row: dict[str, Any]) -> str:
    """A page's item as the item picker names it: id, outcome, what was read."""
    return f"{row['item_id']}: {row['outcome']}, read {row['parsed']}"[:120]


def _run_choices(runs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(run["label"], str(run["run_id"])) for run in runs]


@dataclass
class SamplesPanel:
    run: gr.Dropdown
    other: gr.Dropdown


def _side(detail: dict[str, Any], tag: str) -> str:
    s = detail
    return f"**{tag}: {esc(s['model'])}** read **{esc(s['parsed'])}**, {esc(s['outcome'])}"


def build_samples_tab(ctx: AppContext) -> SamplesPanel:
    """The Samples sub-tab (call inside the Results tab's ``gr.Tabs``)."""
    with gr.Tab("Samples", id="results-samples") as tab:
        gr.Markdown(
            "Any stored run item by item: what each item's model answered, how that was read, and its score. "
            "Filter the wrong, unparsed, refused or inconsistent items, search the outputs, open one to see the "
            "prompt, the images or frames the model got, and the parse trace; compare two runs item by item."
        )
        with gr.Row():
            run = gr.Dropdown(label="Run", choices=[], elem_id="samples-run", scale=4)
            refresh = gr.Button("Refresh runs", elem_id="samples-refresh", scale=1)
        with gr.Row():
            which = gr.Dropdown(label="Show", choices=FILTER_CHOICES, value="all", elem_id="samples-filter")
            category = gr.Dropdown(label="Category", choices=[("any", "")], value="", elem_id="samples-category")
            search = gr.Textbox(label="Output contains", elem_id="samples-search")
            show = gr.Button("Show", variant="primary", elem_id="samples-show")
        counts = gr.Markdown(elem_id="samples-counts")
        page_info = gr.Markdown(elem_id="samples-page-info")
        table = gr.Dataframe(headers=COLUMNS, interactive=False, wrap=True, elem_id="samples-table", label="Samples")
        with gr.Row():
            prev_page = gr.Button("◀ Previous page", elem_id="samples-prev", size="sm")
            page_no = gr.Number(label="Page", value=1, precision=0, minimum=1, elem_id="samples-page")
            next_page = gr.Button("Next page ▶", elem_id="samples-next", size="sm")
        pick = gr.Dropdown(label="Open an item of this page", choices=[], elem_id="samples-pick")
        header = gr.Markdown(elem_id="samples-item")
        media = gr.Gallery(label="Images and frames, as the model got them", columns=4, height="auto", elem_id="samples-media")  # fmt: skip
        with gr.Row():
            prompt = gr.Textbox(label="Prompt (the template filled in)", lines=8, interactive=False, elem_id="samples-prompt")  # fmt: skip
            raw = gr.Textbox(label="Raw output", lines=8, interactive=False, elem_id="samples-raw")
        trace = gr.Markdown(elem_id="samples-trace")
        with gr.Accordion("Stored key and run manifest", open=False):
            key = gr.JSON(label="Stored key", elem_id="samples-key")
            manifest = gr.JSON(label="Run manifest", elem_id="samples-manifest")
        gr.Markdown("#### Two runs side by side")
        with gr.Row():
            other = gr.Dropdown(label="Compare with run", choices=[], elem_id="samples-other", scale=4)
            compare = gr.Button("Compare", elem_id="samples-compare", scale=1)
        vs_counts = gr.Markdown(elem_id="samples-vs-counts")
        vs_table = gr.Dataframe(headers=VS_COLUMNS, interactive=False, wrap=True, elem_id="samples-vs-table", label="Items only one run got right")  # fmt: skip
        vs_pairs = gr.State([])
        vs_pick = gr.Dropdown(label="Open an item side by side", choices=[], elem_id="samples-vs-pick")
        with gr.Row():
            with gr.Column():
                side_a = gr.Markdown(elem_id="samples-vs-a")
                raw_a = gr.Textbox(label="Run A's output", lines=6, interactive=False, elem_id="samples-vs-raw-a")
            with gr.Column():
                side_b = gr.Markdown(elem_id="samples-vs-b")
                raw_b = gr.Textbox(label="Run B's output", lines=6, interactive=False, elem_id="samples-vs-raw-b")

    def on_open(request: gr.Request) -> dict:
        choices = _run_choices(samples_api.runs(ctx, caller(ctx, request)))
        return {run: gr.Dropdown(choices=choices), other: gr.Dropdown(choices=choices)}

    def show_page(
        run_id: str | None, filt: str, cat: str, text: str, number: float | None, first: bool, request: gr.Request
    ) -> dict:
        """A page of the run; ``first``: a new query (with the filters' counts and the run's categories)."""
        if not run_id:
            return {counts: "Choose a run first.", table: table_rows([]), pick: gr.Dropdown(choices=[], value=None)}
        page = samples_api.samples_page(
            ctx, caller(ctx, request), run_id, filter=filt or "all", category=cat or "", search=text or "",
            page=max(1, int(number or 1)), page_size=PAGE_SIZE, with_counts=first,
        )  # fmt: skip
        out = {
            page_info: _page_info(page),
            table: table_rows(page["rows"]),
            pick: gr.Dropdown(choices=[(_choice(r), r["item_id"]) for r in page["rows"]], value=None),
            page_no: min(page["query"]["page"], page["pages"]),
        }
        if first:
            choices = [("any", ""), *[(c, c) for c in page["categories"]]]
            out |= {counts: _counts(page), category: gr.Dropdown(choices=choices, value=cat or "")}
        return out

    page_outputs = [counts, page_info, table, pick, page_no, category]

    @shown_in(counts)
    def on_show(run_id: str | None, filt: str, cat: str, text: str, request: gr.Request) -> dict:
        return show_page(run_id, filt, cat, text, 1, True, request)

    @shown_in(page_info)
    def on_prev(run_id: str | None, filt: str, cat: str, text: str, number: float | None, request: gr.Request) -> dict:  # fmt: skip
        return show_page(run_id, filt, cat, text, max(1, int(number or 1) - 1), False, request)

    @shown_in(page_info)
    def on_next(run_id: str | None, filt: str, cat: str, text: str, number: float | None, request: gr.Request) -> dict:  # fmt: skip
        return show_page(run_id, filt, cat, text, int(number or 1) + 1, False, request)

    @shown_in(header)
    def on_pick(run_id: str | None, item_id: str | None, request: gr.Request) -> dict:
        if not run_id or not item_id:
            return {header: "Choose a run and one of its items."}
        detail = samples_api.sample(ctx, caller(ctx, request), run_id, item_id)
        return {
            header: _header(detail),
            media: gallery_items(detail),
            prompt: (detail["prompt"] or {}).get("prompt_text", "(not recorded)"),
            raw: detail["sample"]["raw_output"] or detail["sample"]["error"] or "",
            trace: trace_markdown(detail),
            key: detail["key"],
            manifest: detail["manifest"],
        }

    @shown_in(vs_counts)
    def on_compare(run_id: str | None, other_id: str | None, request: gr.Request) -> dict:
        if not run_id or not other_id:
            return {vs_counts: "Choose a run above and a run to compare it with."}
        result = samples_api.samples_vs(ctx, caller(ctx, request), run_id, other_id, page_size=500)
        a, b = result["a"], result["b"]
        rows = [
            [r["base_id"], r["category"], r["a"]["answer"], (a if r["right"] == "a" else b)["model"],
             r["a"]["parsed"], r["a"]["outcome"], r["b"]["parsed"], r["b"]["outcome"]]
            for r in result["rows"]
        ]  # fmt: skip
        more = f" (the first {len(rows)} shown)" if result["pages"] > 1 else ""
        return {
            vs_counts: (
                f"A = **{esc(a['label'])}**, B = **{esc(b['label'])}**. Both answered {result['common']} items; "
                f"only A was right on **{result['a_only_right']}**, only B on **{result['b_only_right']}** "
                f"(the discordant pairs of the paired comparison){more}."
            ),
            vs_table: pd.DataFrame(rows, columns=VS_COLUMNS),
            vs_pairs: [{"a": r["a"], "b": r["b"], "models": [a["model"], b["model"]]} for r in result["rows"]],
            vs_pick: gr.Dropdown(choices=[(r["base_id"], i) for i, r in enumerate(result["rows"])], value=None),
        }

    def on_compare_pick(pairs: list[dict[str, Any]], row: int | None) -> dict:
        if not pairs or row is None or not 0 <= int(row) < len(pairs):
            return {side_a: "", side_b: ""}
        pair = pairs[int(row)]
        model_a, model_b = pair["models"]
        return {
            side_a: _side(pair["a"] | {"model": model_a}, "A"),
            raw_a: pair["a"]["raw_output"] or pair["a"]["error"] or "",
            side_b: _side(pair["b"] | {"model": model_b}, "B"),
            raw_b: pair["b"]["raw_output"] or pair["b"]["error"] or "",
        }

    filters = [run, which, category, search]
    listen(ctx, tab.select, ui_errors(on_open), None, [run, other], api_name="results_samples_open", **FAST)
    listen(ctx, refresh.click, ui_errors(on_open), None, [run, other], api_name="results_samples_refresh", **FAST)
    listen(ctx, show.click, on_show, filters, page_outputs, api_name="results_samples_show", **FAST)
    listen(ctx, which.input, on_show, filters, page_outputs, api_name="results_samples_filter", **FAST)
    listen(ctx, search.submit, on_show, filters, page_outputs, api_name="results_samples_search", **FAST)
    listen(ctx, prev_page.click, on_prev, [*filters, page_no], page_outputs, api_name="results_samples_prev", **FAST)
    listen(ctx, next_page.click, on_next, [*filters, page_no], page_outputs, api_name="results_samples_next", **FAST)
    detail_outputs = [header, media, prompt, raw, trace, key, manifest]
    listen(ctx, pick.input, on_pick, [run, pick], detail_outputs, api_name="results_samples_item", **FAST)
    listen(
        ctx,
        compare.click,
        on_compare,
        [run, other],
        [vs_counts, vs_table, vs_pairs, vs_pick],
        api_name="results_samples_compare",
        **FAST,
    )
    listen(
        ctx,
        vs_pick.input,
        on_compare_pick,
        [vs_pairs, vs_pick],
        [side_a, raw_a, side_b, raw_b],
        api_name="results_samples_compare_item",
        **FAST,
    )
    return SamplesPanel(run=run, other=other)


def _register_api(ctx: AppContext) -> None:
    @ui_errors
    def results_sample_runs(model: str, benchmark: str, request: gr.Request) -> list:
        """The stored runs (optionally of one model and benchmark), newest first (reviewers)."""
        return samples_api.runs(ctx, caller(ctx, request), model or None, benchmark or None)

    @ui_errors
    def results_samples(
        run_id: str,
        model: str,
        benchmark: str,
        filter: str,  # noqa: A002 (the endpoint's parameter name)
        category: str,
        search: str,
        page: int,
        page_size: int,
        request: gr.Request,
    ) -> dict:
        """One page of a run's samples (a run id, or a model and benchmark: their newest finished run), with
        every filter's count and how people answered each item (``people``: counts per option; reviewers, never
        for the items they wrote or verified). Filters: all, wrong, right, unparsed, refused, failed, missing,
        inconsistent, people_split, people_agree_model_wrong."""
        return samples_api.samples_page(
            ctx, caller(ctx, request), run_id or None, model=model or None, benchmark=benchmark or None,
            filter=filter or "all", category=category or "", search=search or "", page=int(page or 1),
            page_size=int(page_size or 50),
        )  # fmt: skip

    @ui_errors
    def results_sample(run_id: str, item_id: str, request: gr.Request) -> dict:
        """One sample as the model saw it: prompt, media, raw output, parse trace, key, manifest (reviewers)."""
        return samples_api.sample(ctx, caller(ctx, request), run_id, item_id)

    @ui_errors
    def results_samples_vs(run_id: str, other_run_id: str, vs_model: str, page: int, request: gr.Request) -> dict:
        """Two runs item by item: the items only one got right, and the discordant counts (reviewers)."""
        return samples_api.samples_vs(
            ctx, caller(ctx, request), run_id, other_run_id or None, vs_model=vs_model or None, page=int(page or 1)
        )

    endpoint(ctx, results_sample_runs, api_name="results_sample_runs", queue=False)
    endpoint(ctx, results_samples, api_name="results_samples", queue=False)
    endpoint(ctx, results_sample, api_name="results_sample", queue=False)
    endpoint(ctx, results_samples_vs, api_name="results_samples_vs", queue=False)
