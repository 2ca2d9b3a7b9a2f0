"""The Models panel's difficulty vote (reviewers; paper section 3.1): each panel model answers every verified item
and the number answering fully correctly sets the item's level."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.vqa import compose, models
from components.common import caller
from components.events import Event, bind, wire


@dataclass(frozen=True)
class VotingPanel:
    panel: gr.Dropdown
    vote: gr.Button
    show: gr.Button
    distribution: gr.BarPlot


def layout(ctx: AppContext, names: list[str]) -> VotingPanel:
    gr.Markdown(
        "**Difficulty voting** (paper section 3.1): each panel model answers every verified item; the "
        "number answering fully correctly sets the level (six models: 0 super hard, 1-2 hard, 3-4 medium, "
        "5-6 easy; other panel sizes scale by the fraction correct)."
    )
    panel = gr.Dropdown(
        names,
        value=[m for m in ctx.settings.vqa_panel if m in names],
        multiselect=True,
        max_choices=12,
        label="Voting panel (six slots by default)",
    )
    with gr.Row():
        vote = gr.Button("Run the voting panel")
        show = gr.Button("Show the current levels")
    distribution = gr.BarPlot(x="level", y="items", title="Items per difficulty level", height=260)
    return VotingPanel(panel, vote, show, distribution)


def level_frame(counts: dict[str, int]) -> pd.DataFrame:
    """Items per difficulty level, as the bar plot reads them."""
    return pd.DataFrame({"level": list(counts), "items": list(counts.values())})


def on_vote(
    ctx: AppContext, members: list[str], request: gr.Request, progress: gr.Progress = gr.Progress(track_tqdm=True)
) -> pd.DataFrame:
    name = caller(ctx, request)
    models.vote_difficulty(ctx, name, members, progress=lambda d, n: progress((d, n)))
    return level_frame(compose.difficulty_overview(ctx.database, name))


def on_show(ctx: AppContext, request: gr.Request) -> pd.DataFrame:
    return level_frame(compose.difficulty_overview(ctx.database, caller(ctx, request)))


def events(ctx: AppContext, p: VotingPanel) -> list[Event]:
    return [
        Event("vqa_ui_vote", "reviewer", bind(on_vote, ctx), p.vote.click, [p.panel], p.distribution, model=True),
        Event("vqa_ui_votes_show", "reviewer", bind(on_show, ctx), p.show.click, None, p.distribution),
    ]


def build_voting_panel(ctx: AppContext, names: list[str]) -> VotingPanel:
    p = layout(ctx, names)
    wire(ctx, events(ctx, p))
    return p
