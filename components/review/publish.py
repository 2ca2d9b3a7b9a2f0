"""The publish panel (admins): export the final dataset with its card, or push it to a Hugging Face
dataset repo."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.review import dataset, publish
from components.access import listen
from components.common import caller, ui_errors


@dataclass
class PublishPanel:
    """``tab`` is shown to admins only (the tab's page-load handler sets its visibility)."""

    tab: gr.Tab


def build_publish_panel(ctx: AppContext) -> PublishPanel:
    with gr.Tab("Publish", id="review-publish", visible=False) as tab:
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

    def on_export(fmt: str, request: gr.Request) -> list[str]:
        result = publish.export_for_download(ctx.database, ctx.settings, caller(ctx, request), fmt)
        return [result["path"], result["card"]]

    def on_publish(repo_id: str, is_private: bool, request: gr.Request, token: gr.OAuthToken | None = None) -> dict:
        return publish.publish_dataset(
            ctx.database, ctx.settings, caller(ctx, request), repo_id, is_private, token=token.token if token else None
        )

    # uploads to the Hub stay queued
    listen(
        ctx,
        export_button.click,
        ui_errors(on_export),
        [export_format],
        export_files,
        api_visibility="private",
        api_name="review_ui_export",
    )
    listen(
        ctx,
        publish_button.click,
        ui_errors(on_publish),
        [repo, private],
        publish_result,
        api_visibility="private",
        api_name="review_ui_publish",
    )
    return PublishPanel(tab)
