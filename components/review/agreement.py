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
from components.common import caller, esc
from components.events import FAST, Event, bind, wire
from components.feedback import shown_in

MODES = ["two reviewer groups", "two rounds", "two uploaded columns"]


@dataclass(frozen=True)
class CompareFields:
    """What to compare: two reviewer groups, two rounds, or two columns of an uploaded CSV."""

    mode: gr.Radio
    group_a: gr.Textbox
    group_b: gr.Textbox
    round_a: gr.Number
    round_b: gr.Number
    upload: gr.File
    column_a: gr.Textbox
    column_b: gr.Textbox

    @property
    def inputs(self) -> set[Any]:
        return {self.mode, self.group_a, self.group_b, self.round_a, self.round_b, self.upload, self.column_a,
                self.column_b}  # fmt: skip


@dataclass(frozen=True)
class AgreementPanel:
    semantic: gr.Button
    reviewers: gr.Button
    result: gr.Markdown
    table: gr.Dataframe
    fields: CompareFields
    compare: gr.Button
    compare_result: gr.Markdown


def wilcoxon_markdown(result: dict[str, Any]) -> str:
    return (
        f"**Wilcoxon signed-rank** (paired by {result['unit']}): statistic {result['statistic']:g}, "
        f"p = {result['p_value']:.4g}, n = {result['n']} non-zero pairs of {result['n_pairs']}, "
        f"{result['n_zero']} zero differences ({result['method']}).\n\n{esc(result['reading'])}"
    )


def _names(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def _compare(ctx: AppContext, name: str | None, data: dict, f: CompareFields) -> dict[str, Any]:
    how = data[f.mode]
    if how == "two reviewer groups":
        return agreement.compare_reviewer_groups(ctx.database, name, _names(data[f.group_a]), _names(data[f.group_b]))
    if how == "two rounds":
        return agreement.compare_rounds(ctx.database, name, int(data[f.round_a]), int(data[f.round_b]))
    if not data[f.upload]:
        raise ValidationError("Upload a CSV with two columns of paired scores.")
    column_a, column_b = ((data[c] or "").strip() or None for c in (f.column_a, f.column_b))
    return agreement.compare_columns(ctx.database, name, data[f.upload], column_a, column_b)


def _compare_inputs() -> CompareFields:
    mode = gr.Radio(MODES, value="two uploaded columns", label="Compare", elem_id="compare-mode")
    with gr.Row():
        group_a = gr.Textbox(label="Group A reviewers (comma-separated)")
        group_b = gr.Textbox(label="Group B reviewers (comma-separated)")
    with gr.Row():
        round_a = gr.Number(value=1, precision=0, label="Round A")
        round_b = gr.Number(value=2, precision=0, label="Round B")
    with gr.Row():
        upload = gr.File(label="CSV with paired scores", file_types=[".csv"], type="binary", elem_id="compare-upload")
        column_a = gr.Textbox(label="Column A (empty: first)")
        column_b = gr.Textbox(label="Column B (empty: second)")
    return CompareFields(mode, group_a, group_b, round_a, round_b, upload, column_a, column_b)


def layout() -> AgreementPanel:
    with gr.Row():
        semantic = gr.Button("Annotators: semantic similarity", elem_id="agreement-semantic")
        reviewers = gr.Button("Reviewers: Krippendorff's alpha and Cohen's kappa", elem_id="agreement-reviewers")
    result = gr.Markdown(elem_id="agreement-result")
    table = gr.Dataframe(interactive=False, label="Details")
    gr.Markdown("### Compare two groups (Wilcoxon signed-rank)")
    fields = _compare_inputs()
    compare = gr.Button("Compare", elem_id="compare-run")
    compare_result = gr.Markdown(elem_id="compare-result")
    return AgreementPanel(semantic, reviewers, result, table, fields, compare, compare_result)


def on_semantic(ctx: AppContext, p: AgreementPanel, request: gr.Request) -> dict:
    found = agreement.semantic_agreement(ctx.database, ctx.settings, caller(ctx, request), embed=ctx.embeddings.embed)
    text = (
        f"**Mean pairwise cosine similarity** over {len(found['sequences'])} sequence "
        f"rounds: concrete {found['mean_concrete']}, high-level {found['mean_high_level']} "
        f"(model {esc(ctx.settings.embedding_model)})."
    )
    return {p.result: text, p.table: pd.DataFrame(found["sequences"])}


def on_reviewers(ctx: AppContext, p: AgreementPanel, request: gr.Request) -> dict:
    found = agreement.reviewer_agreement(ctx.database, caller(ctx, request))
    text = (
        f"**Krippendorff's alpha** (nominal) over {found['items']} annotations judged by two or more "
        f"reviewers: {found['krippendorff_alpha']}"
    )
    if found.get("note"):
        text += f"\n\n{esc(found['note'])}"
    return {p.result: text, p.table: pd.DataFrame(found["pairs"])}


def on_compare(ctx: AppContext, p: AgreementPanel, data: dict, request: gr.Request) -> dict:
    return {p.compare_result: wilcoxon_markdown(_compare(ctx, caller(ctx, request), data, p.fields))}


def events(ctx: AppContext, p: AgreementPanel) -> list[Event]:
    """A mistake (no file, too few pairs) is said where the result goes; the inputs stay as they are. The
    similarity embeds every intent: on the shared model queue."""
    return [
        Event("review_ui_agreement_semantic", "reviewer", shown_in(p.result)(bind(on_semantic, ctx, p)),
              p.semantic.click, None, [p.result, p.table], model=True),
        Event("review_ui_agreement_reviewers", "reviewer", shown_in(p.result)(bind(on_reviewers, ctx, p)),
              p.reviewers.click, None, [p.result, p.table], FAST),
        Event("review_ui_agreement_compare", "reviewer", shown_in(p.compare_result)(bind(on_compare, ctx, p)),
              p.compare.click, p.fields.inputs, [p.compare_result], FAST),
    ]  # fmt: skip


def build_agreement_panel(ctx: AppContext) -> AgreementPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
