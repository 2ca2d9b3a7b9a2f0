"""The review tab (reviewers and admins): the queue, the dashboard, quality inspection, agreement and
comparisons, and (admins) export and publishing. Handlers only call ``backend.review``; every backend
function checks the caller's role again. Named API endpoints: review_next, review_submit, review_dashboard,
dataset_publish."""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import auth
from backend.context import AppContext
from backend.review import agreement, dashboard, dataset, inspection, publish
from backend.review import service as review
from components.common import TabHandle, caller, esc, ui_errors

REASONABLE, NOT_REASONABLE = "reasonable", "not reasonable"
ROUND_COLUMNS = [
    "round",
    "sequences_reviewed",
    "sequences_accepted",
    "sequences_accepted_share",
    "sequences_returned",
    "sequences_discarded",
    "annotations_judged",
    "annotations_reasonable",
    "annotations_reasonable_share",
]
ANNOTATOR_COLUMNS = ["annotator", "submissions", "judged", "reasonable", "acceptance_rate", "median_seconds_per_task"]


def _item_markdown(item: dict[str, Any]) -> str:
    lines = [
        f"### Sequence {esc(item['sequence_id'])} · round {item['round']} of {item['max_rounds']} · "
        f"{esc(item['scene'] or 'scene unknown')}"
    ]
    if item["video_missing"]:
        lines.append("> No video file for this sequence: judge from the action timeline.")
    if item.get("guidance"):
        lines.append("> **Guidance the annotators of this round saw:** " + esc(item["guidance"]).replace("\n", " "))
    lines += ["", "**Actions** (start–end in seconds):"]
    lines += [f"{i}. {esc(line)}" for i, line in enumerate(item["timeline"], start=1)]
    return "\n".join(lines)


def _intent_markdown(annotation: dict[str, Any]) -> str:
    return (
        f"**{esc(annotation['label'])}**\n\nConcrete: {esc(annotation['concrete_intent'])}\n\n"
        f"High-level: {esc(annotation['high_level_intent'])}"
    )


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


def build_review_tab(ctx: AppContext) -> TabHandle:
    db, settings = ctx.database, ctx.settings
    slots = max(settings.annotators_per_sequence, 1)

    with gr.Tab("Review", id="review", visible=False) as tab:
        with gr.Tabs():
            with gr.Tab("Queue", id="review-queue"):
                queue_status = gr.Markdown(elem_id="review-queue-status")
                with gr.Row():
                    next_button = gr.Button("Next item", variant="secondary", elem_id="review-next")
                    show_names = gr.Checkbox(label="Show annotator names", value=False, elem_id="review-show-names")
                current = gr.State(None)
                with gr.Row():
                    with gr.Column(scale=3):
                        video = gr.Video(label="Video", elem_id="review-video", interactive=False)
                    with gr.Column(scale=2):
                        details = gr.Markdown(elem_id="review-item")
                intent_views, verdicts, comments, columns = [], [], [], []
                with gr.Row():
                    for i in range(slots):
                        with gr.Column(visible=False, elem_id=f"review-slot-{i}") as column:
                            intent_views.append(gr.Markdown(elem_id=f"review-intent-{i}"))
                            verdicts.append(
                                gr.Radio([REASONABLE, NOT_REASONABLE], label="Judgment", elem_id=f"review-verdict-{i}")
                            )
                            comments.append(
                                gr.Textbox(
                                    label="Comment (shown to the next round's annotators)",
                                    elem_id=f"review-comment-{i}",
                                    max_length=2000,
                                )
                            )
                        columns.append(column)
                gr.Markdown("**Final intents** (from a reasonable annotation; edit if needed, the original is kept)")
                with gr.Row():
                    concrete_from = gr.Dropdown(label="Concrete intent from", elem_id="review-concrete-from")
                    high_from = gr.Dropdown(label="High-level intent from", elem_id="review-high-from")
                with gr.Row():
                    concrete_text = gr.Textbox(label="Final concrete intent", elem_id="review-concrete", max_length=500)
                    high_text = gr.Textbox(label="Final high-level intent", elem_id="review-high", max_length=500)
                note = gr.Textbox(
                    label="General note (shown to the next round's annotators when returned)",
                    elem_id="review-note",
                    max_length=2000,
                )
                submit = gr.Button("Submit review", variant="primary", elem_id="review-submit")
                with gr.Accordion("Skip this item", open=False):
                    skip_reason = gr.Textbox(label="Why do you skip it?", elem_id="review-skip-reason")
                    skip = gr.Button("Skip", elem_id="review-skip")

            with gr.Tab("Dashboard", id="review-dashboard"):
                refresh = gr.Button("Refresh", elem_id="review-refresh")
                totals_md = gr.Markdown(elem_id="review-totals")
                rounds_table = gr.Dataframe(
                    headers=ROUND_COLUMNS, interactive=False, label="Per round", elem_id="review-rounds"
                )
                rounds_plot = gr.BarPlot(
                    x="round", y="share", color="measure", label="Share judged reasonable", elem_id="review-rounds-plot"
                )
                annotators_table = gr.Dataframe(
                    headers=ANNOTATOR_COLUMNS, interactive=False, label="Per annotator", elem_id="review-annotators"
                )
                annotators_plot = gr.BarPlot(
                    x="annotator", y="acceptance_rate", label="Acceptance rate", elem_id="review-annotators-plot"
                )

            with gr.Tab("Inspection", id="review-inspection"):
                gr.Markdown(
                    "Check a random sample of action sequences on ViLPAct's three criteria "
                    "(the paper: 94 / 92 / 85 of 100 test videos)."
                )
                with gr.Row():
                    sample_size = gr.Number(value=settings.inspection_sample_size, precision=0, label="Sample size")
                    sample_split = gr.Textbox(value=settings.inspection_split, label="Split (empty: all)")
                    sample_seed = gr.Number(value=None, precision=0, label="Seed (empty: random)")
                start_button = gr.Button("Draw a new sample", elem_id="inspection-start")
                inspection_id = gr.Dropdown(label="Inspection", elem_id="inspection-id")
                inspection_item = gr.State(None)
                inspection_md = gr.Markdown(elem_id="inspection-item")
                inspection_video = gr.Video(label="Video", interactive=False)
                all_occur = gr.Checkbox(label=inspection.CRITERIA["all_occur"], elem_id="inspection-all-occur")
                in_order = gr.Checkbox(label=inspection.CRITERIA["in_order"], elem_id="inspection-in-order")
                none_missing = gr.Checkbox(label=inspection.CRITERIA["none_missing"], elem_id="inspection-none-missing")
                inspection_comment = gr.Textbox(label="Comment", max_length=2000)
                judge_button = gr.Button("Save and next", variant="primary", elem_id="inspection-judge")
                inspection_report = gr.Markdown(elem_id="inspection-report")

            with gr.Tab("Agreement", id="review-agreement"):
                with gr.Row():
                    semantic_button = gr.Button("Annotators: semantic similarity", elem_id="agreement-semantic")
                    reviewers_button = gr.Button(
                        "Reviewers: Krippendorff's alpha and Cohen's kappa", elem_id="agreement-reviewers"
                    )
                agreement_md = gr.Markdown(elem_id="agreement-result")
                agreement_table = gr.Dataframe(interactive=False, label="Details")
                gr.Markdown("### Compare two groups (Wilcoxon signed-rank)")
                mode = gr.Radio(
                    ["two reviewer groups", "two rounds", "two uploaded columns"],
                    value="two uploaded columns",
                    label="Compare",
                    elem_id="compare-mode",
                )
                with gr.Row():
                    group_a = gr.Textbox(label="Group A reviewers (comma-separated)")
                    group_b = gr.Textbox(label="Group B reviewers (comma-separated)")
                with gr.Row():
                    round_a = gr.Number(value=1, precision=0, label="Round A")
                    round_b = gr.Number(value=2, precision=0, label="Round B")
                with gr.Row():
                    upload = gr.File(
                        label="CSV with paired scores", file_types=[".csv"], type="binary", elem_id="compare-upload"
                    )
                    column_a = gr.Textbox(label="Column A (empty: first)")
                    column_b = gr.Textbox(label="Column B (empty: second)")
                compare_button = gr.Button("Compare", elem_id="compare-run")
                compare_md = gr.Markdown(elem_id="compare-result")

            with gr.Tab("Publish", id="review-publish", visible=False) as publish_tab:
                gr.Markdown(
                    "Export the final dataset (with a dataset card) or push it to a Hugging Face dataset "
                    "repo. The token is the signed-in admin's (Sign in with Hugging Face) or `HF_TOKEN`."
                )
                with gr.Row():
                    export_format = gr.Dropdown(list(dataset.FORMATS), value="jsonl", label="Format")
                    export_button = gr.Button("Export", elem_id="dataset-export")
                export_files = gr.File(label="Download", interactive=False, file_count="multiple")
                with gr.Row():
                    repo = gr.Textbox(label="Dataset repo (OWNER/NAME)", elem_id="publish-repo")
                    private = gr.Checkbox(label="Private", value=True)
                    publish_button = gr.Button("Publish", variant="primary", elem_id="publish-run")
                publish_result = gr.JSON(label="Published")
        _register_api(ctx)

    item_outputs = [
        current,
        queue_status,
        details,
        video,
        *columns,
        *intent_views,
        *verdicts,
        *comments,
        concrete_from,
        high_from,
        concrete_text,
        high_text,
        note,
    ]

    def render(payload: dict[str, Any]) -> dict:
        item = payload["item"]
        base = {queue_status: f"**Waiting for review:** {payload['queue']} sequence rounds"}
        if item is None:
            return {
                **base,
                current: None,
                details: "### The review queue is empty.",
                video: None,
                **{c: gr.update(visible=False) for c in columns},
                concrete_from: gr.update(choices=[], value=None),
                high_from: gr.update(choices=[], value=None),
                concrete_text: "",
                high_text: "",
                note: "",
            }
        choices = [(a["label"], str(a["annotation_id"])) for a in item["annotations"]]
        out = {
            **base,
            current: item,
            details: _item_markdown(item),
            video: item["video"],
            note: "",
            concrete_from: gr.update(choices=choices, value=None),
            high_from: gr.update(choices=choices, value=None),
            concrete_text: "",
            high_text: "",
        }
        for i in range(slots):
            present = i < len(item["annotations"])
            out[columns[i]] = gr.update(visible=present)
            out[intent_views[i]] = _intent_markdown(item["annotations"][i]) if present else ""
            out[verdicts[i]] = None
            out[comments[i]] = ""
        return out

    def names_toggle(item: dict | None, show: bool, request: gr.Request) -> list:
        if not item:
            return [gr.update() for _ in range(slots)]
        fresh = review.view_item(db, settings, caller(ctx, request), item["sequence_id"], item["round"], show)
        return [_intent_markdown(a) for a in fresh["annotations"]] + [""] * (slots - len(fresh["annotations"]))

    def on_next(show: bool, request: gr.Request) -> dict:
        return render(review.next_review(db, settings, caller(ctx, request), show_names=show))

    def pick_text(item: dict | None, annotation_id: str | None, field: str) -> str:
        found = [a for a in (item or {}).get("annotations", []) if str(a["annotation_id"]) == str(annotation_id)]
        return found[0][field] if found else ""

    def on_submit(data: dict, request: gr.Request) -> dict:
        item = data[current]
        if not item:
            raise gr.Error("There is no item to submit; press Next item.")
        annotations = item["annotations"]
        judged = [data[verdicts[i]] for i in range(len(annotations))]
        if any(v is None for v in judged):
            raise gr.Error("Judge every annotation: reasonable or not reasonable.")
        judgments = [
            review.Judgment(a["annotation_id"], judged[i] == REASONABLE, data[comments[i]] or "")
            for i, a in enumerate(annotations)
        ]
        final = None
        if data[concrete_from] and data[high_from]:
            final = review.FinalChoice(
                int(data[concrete_from]), int(data[high_from]), data[concrete_text] or None, data[high_text] or None
            )
        name = caller(ctx, request)
        result = review.submit_review(
            db, settings, name, item["sequence_id"], item["round"], judgments, final, data[note] or ""
        )
        outcome = result["review"]["outcome"] or "recorded (second review)"
        out = render(review.next_review(db, settings, name))
        out[queue_status] = (
            f"**Saved:** {esc(item['sequence_id'])} round {item['round']} {outcome} · {out[queue_status]}"
        )
        return out

    def on_skip(item: dict | None, why: str, request: gr.Request) -> dict:
        if not item:
            raise gr.Error("There is no item to skip.")
        return {
            **render(review.skip_review(db, settings, caller(ctx, request), item["sequence_id"], item["round"], why)),
            skip_reason: "",
        }

    def on_dashboard(request: gr.Request) -> dict:
        figures = dashboard.dashboard(db, caller(ctx, request))
        t = figures["totals"]
        long = [
            {"round": f"round {r['round']} · {measure}", "measure": measure, "share": r[key] or 0.0}
            for r in figures["rounds"]
            for measure, key in (
                ("annotations", "annotations_reasonable_share"),
                ("sequences", "sequences_accepted_share"),
            )
        ]
        return {
            totals_md: (
                f"**In annotation:** {t['in_annotation']} · **awaiting review:** {t['awaiting_review']} · "
                f"**accepted:** {t['accepted']} · **discarded:** {t['discarded']} · "
                f"**final sequences:** {t['final_sequences']} · **edited final intents:** "
                f"{t['edited_final_intents']}"
            ),
            rounds_table: _frame(figures["rounds"], ROUND_COLUMNS),
            rounds_plot: pd.DataFrame(long, columns=["round", "measure", "share"]),
            annotators_table: _frame(figures["annotators"], ANNOTATOR_COLUMNS),
            annotators_plot: _frame(figures["annotators"], ANNOTATOR_COLUMNS).fillna({"acceptance_rate": 0.0}),
        }

    def inspection_choices(name: str) -> list[tuple[str, str]]:
        return [
            (f"#{r['id']} · {r['size']} from {r['split'] or 'all'} · by {r['created_by']}", str(r["id"]))
            for r in inspection.list_inspections(db, name)
        ]

    def show_inspection(chosen: str | None, name: str) -> dict:
        if not chosen:
            return {
                inspection_item: None,
                inspection_md: "Draw a sample or choose an inspection.",
                inspection_video: None,
                inspection_report: "",
            }
        report = inspection.report(db, name, int(chosen))
        lines = [
            f"- **{esc(r['reviewer'])}**: {r['paper_form']} (all occur / in order / none missing)"
            for r in report["reviewers"]
        ]
        nxt = inspection.next_item(db, name, int(chosen))
        if nxt is None:
            body, clip = "### You have judged every sequence of this sample.", None
        else:
            item = review.view_item(db, settings, name, nxt["sequence_id"], 1)
            timeline = "\n".join(f"{i}. {esc(line)}" for i, line in enumerate(item["timeline"], start=1))
            body = (
                f"### Sample item {nxt['position']} · sequence {esc(item['sequence_id'])} · "
                f"{esc(item['scene'] or 'scene unknown')}\n\n**Actions** (start–end in seconds):\n{timeline}"
            )
            clip = item["video"]
        return {
            inspection_item: nxt,
            inspection_md: body,
            inspection_video: clip,
            inspection_report: "\n".join(lines) or "No judgments yet.",
            all_occur: False,
            in_order: False,
            none_missing: False,
            inspection_comment: "",
        }

    def on_start(size: float, split: str, seed: float | None, request: gr.Request) -> dict:
        name = caller(ctx, request)
        started = inspection.start_inspection(
            db, settings, name, int(size), (split or "").strip(), None if seed is None else int(seed)
        )
        chosen = str(started["inspection_id"])
        return {
            inspection_id: gr.update(choices=inspection_choices(name), value=chosen),
            **show_inspection(chosen, name),
        }

    def on_choose(chosen: str | None, request: gr.Request) -> dict:
        return show_inspection(chosen, caller(ctx, request))

    def on_judge(
        chosen: str | None, nxt: dict | None, a: bool, b: bool, c: bool, comment: str, request: gr.Request
    ) -> dict:
        if not chosen or not nxt:
            raise gr.Error("Nothing to judge: choose an inspection with sequences left.")
        name = caller(ctx, request)
        inspection.judge(
            db, name, int(chosen), nxt["sequence_id"], inspection.InspectionJudgment(a, b, c, comment or "")
        )
        return show_inspection(chosen, name)

    def on_semantic(request: gr.Request) -> dict:
        result = agreement.semantic_agreement(db, settings, caller(ctx, request))
        return {
            agreement_md: (
                f"**Mean pairwise cosine similarity** over {len(result['sequences'])} sequence "
                f"rounds: concrete {result['mean_concrete']}, high-level {result['mean_high_level']} "
                f"(model `{esc(settings.embedding_model)}`)."
            ),
            agreement_table: pd.DataFrame(result["sequences"]),
        }

    def on_reviewers(request: gr.Request) -> dict:
        result = agreement.reviewer_agreement(db, caller(ctx, request))
        text = (
            f"**Krippendorff's alpha** (nominal) over {result['items']} annotations judged by two or more "
            f"reviewers: {result['krippendorff_alpha']}"
        )
        if result.get("note"):
            text += f"\n\n{esc(result['note'])}"
        return {agreement_md: text, agreement_table: pd.DataFrame(result["pairs"])}

    def on_compare(
        how: str, ga: str, gb: str, ra: float, rb: float, data: bytes | None, ca: str, cb: str, request: gr.Request
    ) -> str:
        name = caller(ctx, request)
        if how == "two reviewer groups":
            split = lambda text: [x.strip() for x in (text or "").split(",") if x.strip()]  # noqa: E731
            result = agreement.compare_reviewer_groups(db, name, split(ga), split(gb))
        elif how == "two rounds":
            result = agreement.compare_rounds(db, name, int(ra), int(rb))
        else:
            if not data:
                raise gr.Error("Upload a CSV with two columns of paired scores.")
            result = agreement.compare_columns(db, name, data, (ca or "").strip() or None, (cb or "").strip() or None)
        return (
            f"**Wilcoxon signed-rank** (paired by {result['unit']}): statistic {result['statistic']:g}, "
            f"p = {result['p_value']:.4g}, n = {result['n']} non-zero pairs of {result['n_pairs']}, "
            f"{result['n_zero']} zero differences ({result['method']}).\n\n{esc(result['reading'])}"
        )

    def on_export(fmt: str, request: gr.Request) -> list[str]:
        result = publish.export_for_download(db, settings, caller(ctx, request), fmt)
        return [result["path"], result["card"]]

    def on_publish(repo_id: str, is_private: bool, request: gr.Request, token: gr.OAuthToken | None = None) -> dict:
        return publish.publish_dataset(
            db, settings, caller(ctx, request), repo_id, is_private, token=token.token if token else None
        )

    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        user = auth.get_user(db, name) if name else None
        if user is None or not user.has_role("reviewer"):
            return {publish_tab: gr.Tab(visible=False)}
        return {
            publish_tab: gr.Tab(visible=user.has_role("admin")),
            inspection_id: gr.update(choices=inspection_choices(name)),
            queue_status: f"**Waiting for review:** {review.queue_size(db)} sequence rounds",
        }

    # Database-only handlers skip the queue (milliseconds each); model calls and uploads to the Hub stay queued.
    private_api = {"api_visibility": "private", "queue": False}
    queued = {"api_visibility": "private"}
    next_button.click(ui_errors(on_next), [show_names], item_outputs, **private_api)
    show_names.change(ui_errors(names_toggle), [current, show_names], intent_views, **private_api)
    concrete_from.change(
        lambda item, a: pick_text(item, a, "concrete_intent"), [current, concrete_from], concrete_text, **private_api
    )
    high_from.change(
        lambda item, a: pick_text(item, a, "high_level_intent"), [current, high_from], high_text, **private_api
    )
    submit.click(
        ui_errors(on_submit),
        {current, *verdicts, *comments, concrete_from, high_from, concrete_text, high_text, note},
        item_outputs,
        **private_api,
    )
    skip.click(ui_errors(on_skip), [current, skip_reason], [*item_outputs, skip_reason], **private_api)
    dashboard_outputs = [totals_md, rounds_table, rounds_plot, annotators_table, annotators_plot]
    refresh.click(ui_errors(on_dashboard), None, dashboard_outputs, **private_api)
    inspection_outputs = [
        inspection_item,
        inspection_md,
        inspection_video,
        inspection_report,
        all_occur,
        in_order,
        none_missing,
        inspection_comment,
    ]
    start_button.click(
        ui_errors(on_start),
        [sample_size, sample_split, sample_seed],
        [inspection_id, *inspection_outputs],
        **private_api,
    )
    inspection_id.input(ui_errors(on_choose), [inspection_id], inspection_outputs, **private_api)
    judge_button.click(
        ui_errors(on_judge),
        [inspection_id, inspection_item, all_occur, in_order, none_missing, inspection_comment],
        inspection_outputs,
        **private_api,
    )
    semantic_button.click(
        ui_errors(on_semantic), None, [agreement_md, agreement_table], concurrency_id="models", **queued
    )
    reviewers_button.click(ui_errors(on_reviewers), None, [agreement_md, agreement_table], **private_api)
    compare_button.click(
        ui_errors(on_compare),
        [mode, group_a, group_b, round_a, round_b, upload, column_a, column_b],
        compare_md,
        **private_api,
    )
    export_button.click(ui_errors(on_export), [export_format], export_files, **queued)
    publish_button.click(ui_errors(on_publish), [repo, private], publish_result, **queued)
    return TabHandle(
        tab=tab, min_role="reviewer", on_load=(ui_errors(on_load), [publish_tab, inspection_id, queue_status])
    )


def _register_api(ctx: AppContext) -> None:
    db, settings = ctx.database, ctx.settings

    @ui_errors
    def review_next(request: gr.Request) -> dict:
        """Your current review item (annotator names hidden) or a new one; item is null when the queue is empty."""
        return review.next_review(db, settings, caller(ctx, request))

    @ui_errors
    def review_submit(
        sequence_id: str, round: int, judgments: list[dict], final: dict | None, note: str, request: gr.Request
    ) -> dict:
        """judgments: [{annotation_id, reasonable, comment}]; final: {concrete_from, high_level_from,
        concrete_intent?, high_level_intent?} when any annotation is reasonable."""
        parsed = [
            review.Judgment(int(j["annotation_id"]), bool(j["reasonable"]), j.get("comment") or "") for j in judgments
        ]
        choice = review.FinalChoice(**final) if final else None
        return review.submit_review(
            db, settings, caller(ctx, request), sequence_id, int(round), parsed, choice, note or ""
        )

    @ui_errors
    def review_dashboard(request: gr.Request) -> dict:
        """Per-round and per-annotator review figures."""
        return dashboard.dashboard(db, caller(ctx, request))

    @ui_errors
    def dataset_publish(repo_id: str, private: bool, request: gr.Request) -> dict:
        """Push the final dataset to a Hugging Face dataset repo (admins)."""
        return publish.publish_dataset(db, settings, caller(ctx, request), repo_id, bool(private))

    for fn in (review_next, review_submit, review_dashboard, dataset_publish):
        gr.api(fn, api_name=fn.__name__, queue=False)
