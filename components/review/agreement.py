"""The agreement panel: annotators' semantic similarity, reviewers' Krippendorff's alpha and Cohen's kappa,
and a Wilcoxon signed-rank comparison of two reviewer groups, two rounds or two uploaded columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import ValidationError
from backend.review import agreement
from components.access import listen
from components.common import caller, esc
from components.feedback import shown_in
from components.review.queue import PRIVATE_FAST

MODES = ["two reviewer groups", "two rounds", "two uploaded columns"]


@dataclass
class AgreementPanel:
    result: gr.Markdown
    compare_result: gr.Markdown


def wilcoxon_markdown(result: dict[str, Any]) -> str:
    return (
        f"**Wilcoxon signed-rank** (paired by {result['unit']}): statistic {result['statistic']:g}, "
        f"p = {result['p_value']:.4g}, n = {result['n']} non-zero pairs of {result['n_pairs']}, "
        f"{result['n_zero']} zero differences ({result['method']}).\n\n{esc(result['reading'])}"
    )


def _names(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def _compare(ctx: AppContext, name: str | None, data: dict, fields: dict[str, Any]) -> dict[str, Any]:
    how = data[fields["mode"]]
    if how == "two reviewer groups":
        return agreement.compare_reviewer_groups(
            ctx.database, name, _names(data[fields["group_a"]]), _names(data[fields["group_b"]])
        )
    if how == "two rounds":
        return agreement.compare_rounds(ctx.database, name, int(data[fields["round_a"]]), int(data[fields["round_b"]]))
    if not data[fields["upload"]]:
        raise ValidationError("Upload a CSV with two columns of paired scores.")
    column_a, column_b = ((data[fields[k]] or "").strip() or None for k in ("column_a", "column_b"))
    return agreement.compare_columns(ctx.database, name, data[fields["upload"]], column_a, column_b)


def _compare_inputs() -> dict[str, Any]:
    fields: dict[str, Any] = {
        "mode": gr.Radio(MODES, value="two uploaded columns", label="Compare", elem_id="compare-mode")
    }
    with gr.Row():
        fields["group_a"] = gr.Textbox(label="Group A reviewers (comma-separated)")
        fields["group_b"] = gr.Textbox(label="Group B reviewers (comma-separated)")
    with gr.Row():
        fields["round_a"] = gr.Number(value=1, precision=0, label="Round A")
        fields["round_b"] = gr.Number(value=2, precision=0, label="Round B")
    with gr.Row():
        fields["upload"] = gr.File(
            label="CSV with paired scores", file_types=[".csv"], type="binary", elem_id="compare-upload"
        )
        fields["column_a"] = gr.Textbox(label="Column A (empty: first)")
        fields["column_b"] = gr.Textbox(label="Column B (empty: second)")
    return fields


def build_agreement_panel(ctx: AppContext) -> AgreementPanel:
    with gr.Row():
        semantic = gr.Button("Annotators: semantic similarity", elem_id="agreement-semantic")
        reviewers = gr.Button("Reviewers: Krippendorff's alpha and Cohen's kappa", elem_id="agreement-reviewers")
    result = gr.Markdown(elem_id="agreement-result")
    table = gr.Dataframe(interactive=False, label="Details")
    gr.Markdown("### Compare two groups (Wilcoxon signed-rank)")
    fields = _compare_inputs()
    compare = gr.Button("Compare", elem_id="compare-run")
    compare_result = gr.Markdown(elem_id="compare-result")

    def on_semantic(request: gr.Request) -> dict:
        found = agreement.semantic_agreement(
            ctx.database, ctx.settings, caller(ctx, request), embed=ctx.embeddings.embed
        )
        text = (
            f"**Mean pairwise cosine similarity** over {len(found['sequences'])} sequence "
            f"rounds: concrete {found['mean_concrete']}, high-level {found['mean_high_level']} "
            f"(model {esc(ctx.settings.embedding_model)})."
        )
        return {result: text, table: pd.DataFrame(found["sequences"])}

    def on_reviewers(request: gr.Request) -> dict:
        found = agreement.reviewer_agreement(ctx.database, caller(ctx, request))
        text = (
            f"**Krippendorff's alpha** (nominal) over {found['items']} annotations judged by two or more "
            f"reviewers: {found['krippendorff_alpha']}"
        )
        if found.get("note"):
            text += f"\n\n{esc(found['note'])}"
        return {result: text, table: pd.DataFrame(found["pairs"])}

    def on_compare(data: dict, request: gr.Request) -> dict:
        return {compare_result: wilcoxon_markdown(_compare(ctx, caller(ctx, request), data, fields))}

    # a mistake (no file, too few pairs) is said where the result goes; the inputs stay as they are
    listen(
        ctx,
        semantic.click,
        shown_in(result)(on_semantic),
        None,
        [result, table],
        concurrency_id="models",
        api_visibility="private",
        api_name="review_ui_agreement_semantic",
    )
    listen(
        ctx,
        reviewers.click,
        shown_in(result)(on_reviewers),
        None,
        [result, table],
        **PRIVATE_FAST,
        api_name="review_ui_agreement_reviewers",
    )
    listen(
        ctx,
        compare.click,
        shown_in(compare_result)(on_compare),
        set(fields.values()),
        [compare_result],
        **PRIVATE_FAST,
        api_name="review_ui_agreement_compare",
    )
    return AgreementPanel(result, compare_result)
