"""The planning tab's "Results" panel: the leaderboard (intervals, McNemar against a baseline), human accuracy,
people against models, paired comparisons, accuracy by future length and by scene, and (reviewers) the
disagreement queue. Filled when the sub-tab is opened, and on Refresh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.humans.paired import people_rows
from backend.reporting import leaderboards
from backend.reporting.leaderboards import interval
from backend.reporting.tables import pct
from components.common import caller
from components.events import Event, bind, wire
from components.planning.views import human_markdown, results_json


@dataclass(frozen=True)
class ResultsPanel:
    opened: gr.Tab  # the Results sub-tab: selecting it fills the panel
    baseline: gr.Dropdown
    circular: gr.Checkbox
    refresh: gr.Button
    board: gr.Dataframe
    human: gr.Markdown
    people: gr.Dataframe
    compared: gr.Dataframe
    by_length: gr.Dataframe
    by_scene: gr.Dataframe
    queue: gr.Dataframe

    @property
    def shown(self) -> list[Any]:
        return [self.board, self.human, self.people, self.compared, self.by_length, self.by_scene, self.queue]


def _leaderboard_frames(board: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The leaderboard as a person reads it: chance, the runs of people, every model run; accuracy in percent
    with two decimals, headers in words, each row with the questions it covers."""
    rows, lengths, scenes = [{"Run": "chance (1/6)", "Who": "chance", "Accuracy (%)": pct(board["chance"])}], [], []
    noted = any(run.get("note") for run in board["runs"].values())  # a served model's server is down: say so
    ordered = sorted(board["runs"].items(), key=lambda kv: kv[1].get("kind") != "people")  # people first
    for name, run in ordered:
        mc = next((v for k, v in run.items() if k.startswith("mcnemar")), None)
        rows.append(
            {
                "Run": name,
                "Who": run.get("kind") or "model",
                "Accuracy (%)": pct(run["accuracy"]),
                "95% interval": interval(pct(run["ci95"][0]), pct(run["ci95"][1])),
                "Questions covered": run["run"],
                "Answered": run["answered"],
                "Refused": run.get("refusals"),
                "Unparsed": run.get("parse_failures"),
                "McNemar p vs baseline": mc["p_value"] if mc else None,
                **({"Consistent (%)": pct(run.get("consistency_rate"))} if board.get("circular") else {}),
                **({"Note": run.get("note") or ""} if noted else {}),
            }
        )
        lengths += [{"run": name, "future length": k, **v} for k, v in run["by_length"].items()]
        scenes += [
            {"run": name, "scene": k, "accuracy": v["accuracy"], "n": v["n"]} for k, v in run["by_scene"].items()
        ]
    for frame in (lengths,):
        for row in frame:
            row["ci95"] = f"{row['ci95'][0]:.3f}–{row['ci95'][1]:.3f}"
    return (
        pd.DataFrame(leaderboards.printed(rows, skip=("McNemar p vs baseline",))),
        pd.DataFrame(lengths),
        pd.DataFrame(scenes),
    )


def layout(opened: gr.Tab) -> ResultsPanel:
    with gr.Row():
        baseline = gr.Dropdown(
            label="McNemar baseline",
            choices=["bigram-prior", "random", "nsplan-lite"],
            value="bigram-prior",
            allow_custom_value=True,
        )
        circular = gr.Checkbox(label="Circular results", value=False)
        refresh = gr.Button("Refresh", elem_id="planning-results-refresh")
    board = gr.Dataframe(
        label="Leaderboard (accuracy, 95% bootstrap interval, exact McNemar p)", elem_id="planning-leaderboard"
    )
    human = gr.Markdown()
    people = gr.Dataframe(
        label="Each model against people, on the questions both answered (right or not): bootstrap 95% interval "
        "of the difference, exact McNemar on the questions only one got right, Holm across these pairs",
        elem_id="planning-people-vs-models",
    )
    compared = gr.Dataframe(
        label="Paired comparison of model runs on the questions all of them answered (bootstrap 95% interval "
        "of the difference, exact McNemar, Holm across all pairs, Cohen's h)",
        elem_id="planning-comparison",
    )
    by_length = gr.Dataframe(label="By future-sequence length")
    by_scene = gr.Dataframe(label="By scene")
    gr.Markdown("#### Disagreement queue (reviewers): most annotators reject the key")
    queue = gr.Dataframe(elem_id="planning-disagreements")
    return ResultsPanel(opened, baseline, circular, refresh, board, human, people, compared, by_length, by_scene, queue)


def on_refresh(ctx: AppContext, p: ResultsPanel, base: str, rotate: bool, request: gr.Request) -> dict:
    found = results_json(ctx, caller(ctx, request), base or None, rotate)
    main, lengths, scenes = _leaderboard_frames(found)
    rows = found["disagreements"]
    return {
        p.board: main,
        p.human: human_markdown(found["human_accuracy"]),
        p.people: leaderboards.frame(
            leaderboards.printed(people_rows(found["people_vs_models"])),
            "no checks by people, or no model run, yet: nothing to pair",
        ),
        p.compared: leaderboards.frame(
            leaderboards.printed(leaderboards.paired_rows(found["comparison"])),
            "fewer than two runs of models: nothing to pair yet",
        ),
        p.by_length: lengths,
        p.by_scene: scenes,
        p.queue: pd.DataFrame([{**r, "votes": ", ".join(f"{k}:{v}" for k, v in r["votes"].items())} for r in rows]),
    }


def events(ctx: AppContext, p: ResultsPanel) -> list[Event]:
    refresh, chosen = bind(on_refresh, ctx, p), [p.baseline, p.circular]
    return [
        Event("planning_ui_results_refresh", "annotator", refresh, p.refresh.click, chosen, p.shown),
        # opened with results: filled at once, no Refresh needed
        Event("planning_results_open", "annotator", refresh, p.opened.select, chosen, p.shown),
    ]


def build_results_panel(ctx: AppContext, opened: gr.Tab) -> ResultsPanel:
    p = layout(opened)
    wire(ctx, events(ctx, p))
    return p
