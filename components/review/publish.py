"""The publish panel (admins): export the final dataset with its card, or push it to a Hugging Face
dataset repo. Its sub-tab is on admins' pages only (``TabHandle.inner_tabs``); both events need ``admin``."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from backend.context import AppContext
from backend.review import dataset, publish
from components.common import caller
from components.events import Event, bind, wire


@dataclass(frozen=True)
class PublishPanel:
    tab: gr.Tab
    export_format: gr.Dropdown
    export_button: gr.Button
    export_files: gr.File
    repo: gr.Textbox
    private: gr.Checkbox
    publish_button: gr.Button
    publish_result: gr.JSON


def layout() -> PublishPanel:
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
    return PublishPanel(tab, export_format, export_button, export_files, repo, private, publish_button, publish_result)


def on_export(ctx: AppContext, fmt: str, request: gr.Request) -> list[str]:
    result = publish.export_for_download(ctx.database, ctx.settings, caller(ctx, request), fmt)
    return [result["path"], result["card"]]


def on_publish(
    ctx: AppContext, repo_id: str, is_private: bool, request: gr.Request, token: gr.OAuthToken | None = None
) -> dict:
    name = caller(ctx, request)
    return publish.publish_dataset(
        ctx.database, ctx.settings, name, repo_id, is_private, token=token.token if token else None
    )


def events(ctx: AppContext, p: PublishPanel) -> list[Event]:
    """Uploads to the Hub stay queued."""
    return [
        Event("review_ui_export", "admin", bind(on_export, ctx), p.export_button.click, [p.export_format],
              p.export_files),
        Event("review_ui_publish", "admin", bind(on_publish, ctx), p.publish_button.click, [p.repo, p.private],
              p.publish_result),
    ]  # fmt: skip


def build_publish_panel(ctx: AppContext) -> PublishPanel:
    p = layout()
    wire(ctx, events(ctx, p))
    return p
