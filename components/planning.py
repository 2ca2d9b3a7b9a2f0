"""The planning tab (ViLPAct): browse a question (observed-window clip or text only, intent, six candidate
futures with their STRIPS checks), check questions as an annotator, ask a model live or run a batch, and
the results (leaderboard with intervals and McNemar, human accuracy, disagreement queue).

Handlers only read inputs, call ``backend.planning.service`` / ``.validation`` (which check the caller's
role) and format outputs.
"""

from __future__ import annotations

import time
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import CompStudioError
from backend.inference.comparison import COMPARISON_COLUMNS, comparison_rows
from backend.planning import service, validation
from backend.planning.authoring import author_question
from components.common import TabHandle, caller, esc, ui_errors

LETTERS = "ABCDEF"
NONE_LABEL = "None is plausible"
CHECK_HELP = (
    "Watch the first 20% of the video (or read the observed actions), read the intent, then mark the **one** "
    "future sequence that is plausible, or **None is plausible**."
)


def question_markdown(view: service.QuestionView, show_key: bool) -> str:
    q = view.question
    lines = [f"### Question {esc(q.id)}  ·  scene: {esc(q.scene or '?')}  ·  status: {esc(q.status)}"]
    if view.text_only_reason:
        lines.append(f"> **Text only.** {esc(view.text_only_reason)}")
    observed = "; ".join(esc(n) for n in view.observed_names) or "(no action yet)"
    lines += [f"**Observed actions (first 20%):** {observed}", f"**Intent:** {esc(q.intent)}", ""]
    for index, (names, check) in enumerate(zip(view.choice_names, view.checks, strict=True)):
        key = " ✅ key" if show_key and index == q.answer_index else ""
        lines.append(f"**{LETTERS[index]}.** {esc(', '.join(names))}  \n  _STRIPS: {esc(check)}_{key}")
    return "\n\n".join(lines)


def _leaderboard_frames(board: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rows, lengths, scenes = [{"run": "chance (1/6)", "accuracy": board["chance"]}], [], []
    for name, run in board["runs"].items():
        mc = next((v for k, v in run.items() if k.startswith("mcnemar")), None)
        rows.append(
            {
                "run": name,
                "accuracy": run["accuracy"],
                "ci95 low": run["ci95"][0],
                "ci95 high": run["ci95"][1],
                "questions run": run["run"],
                "n": run["n"],
                "answered": run["answered"],
                "refusals": run.get("refusals"),
                "refusal rate": run.get("refusal_rate"),
                "parse failures": run.get("parse_failures"),
                "parse failure rate": run.get("parse_failure_rate"),
                "McNemar p": mc["p_value"] if mc else None,
                **({"consistency": run.get("consistency_rate")} if board.get("circular") else {}),
            }
        )
        lengths += [{"run": name, "future length": k, **v} for k, v in run["by_length"].items()]
        scenes += [
            {"run": name, "scene": k, "accuracy": v["accuracy"], "n": v["n"]} for k, v in run["by_scene"].items()
        ]
    for frame in (lengths,):
        for row in frame:
            row["ci95"] = f"{row['ci95'][0]:.3f}–{row['ci95'][1]:.3f}"
    return pd.DataFrame(rows), pd.DataFrame(lengths), pd.DataFrame(scenes)


def _model_names(ctx: AppContext) -> list[str]:
    from backend.inference.registry import list_models

    try:
        return sorted(list_models(ctx.settings))
    except CompStudioError:
        return ["nsplan-lite", "bigram-prior", "random"]


def _browse_panel(ctx: AppContext) -> None:
    with gr.Row():
        qid = gr.Dropdown(label="Question", choices=[], allow_custom_value=True, elem_id="planning-question-id")
        show = gr.Button("Show", elem_id="planning-show")
    with gr.Row():
        clip = gr.Video(label="Observed window (first 20%)", interactive=False, elem_id="planning-clip")
        text = gr.Markdown(elem_id="planning-question")
    gr.Markdown("#### Ask a model (reviewers)")
    with gr.Row():
        model = gr.Dropdown(label="Model", choices=_model_names(ctx), value="nsplan-lite", elem_id="planning-model")
        mode = gr.Radio(
            ["frames", "text"],
            value="frames",
            label="Input",
            info="frames: sampled from the observed window; text: observed action names",
        )
        ask = gr.Button("Ask", variant="primary", elem_id="planning-ask")
    answer = gr.Markdown(elem_id="planning-answer")
    gr.Markdown("#### Batch run over all questions (reviewers)")
    with gr.Row():
        circular = gr.Checkbox(label="Circular (every rotation must be right)", value=False)
        limit = gr.Number(label="Limit (empty: all)", value=None, precision=0, elem_id="planning-limit")
        run = gr.Button("Run", elem_id="planning-run")
    summary = gr.JSON(label="Run summary", elem_id="planning-run-summary")
    gr.Markdown("#### Author a new question (reviewers): it goes to annotators before it counts")
    with gr.Row():
        sequence = gr.Textbox(label="Sequence id", elem_id="planning-author-sequence")
        intent = gr.Textbox(label="Intent (empty: the sequence's first high-level intent)")
        author = gr.Button("Author", elem_id="planning-author")
    authored = gr.Markdown(elem_id="planning-authored")

    @ui_errors
    def on_show(question_id: str, request: gr.Request):
        view = service.view_question(ctx, caller(ctx, request), question_id)
        return view.clip, question_markdown(view, show_key=True)

    @ui_errors
    def on_ask(question_id: str, model_name: str, input_mode: str, request: gr.Request) -> str:
        result = service.ask_model(ctx, caller(ctx, request), question_id, model_name, input_mode)
        verdict = "right" if result.score == 1.0 else "wrong"
        return (
            f"**{esc(model_name)}** answered **{esc(result.parsed)}** ({verdict}; key {esc(result.correct_answer)})"
            f" in {result.latency_ms or 0:.0f} ms{' (from the store)' if result.from_store else ''}.  \n"
            f"Raw output: `{esc(result.raw_output)}`"
        )

    @ui_errors
    def on_run(
        model_name: str, input_mode: str, rotate: bool, count, request: gr.Request, progress=gr.Progress(track_tqdm=True)
    ) -> dict:
        def report(done: int, total: int) -> None:
            progress(done / max(total, 1), desc=f"{done}/{total}")

        limit_n = int(count) if count else None
        return service.run_batch(ctx, caller(ctx, request), model_name, input_mode, rotate, limit_n, report)

    @ui_errors
    def on_author(sequence_id: str, intent_text: str, request: gr.Request) -> str:
        name = caller(ctx, request)
        question = author_question(
            ctx.database,
            name,
            (sequence_id or "").strip(),
            (intent_text or "").strip() or None,
            annotators_per_question=ctx.settings.planning_annotators_per_question,
        )
        view = service.build_view(ctx, question, with_clip=False)
        return question_markdown(view, show_key=True)

    show.click(on_show, [qid], [clip, text], api_name="planning_show")
    author.click(on_author, [sequence, intent], authored, api_name="planning_author")
    ask.click(on_ask, [qid, model, mode], answer, concurrency_id="models", api_name="planning_ask")
    run.click(on_run, [model, mode, circular, limit], summary, concurrency_id="models", api_visibility="private")
    return qid


def _check_panel(ctx: AppContext) -> dict[str, Any]:
    gr.Markdown(CHECK_HELP)
    current = gr.State(None)
    started = gr.State(0.0)
    with gr.Row():
        clip = gr.Video(label="Observed window", interactive=False, elem_id="planning-check-clip")
        text = gr.Markdown(elem_id="planning-check-question")
    choice = gr.Radio([*LETTERS, NONE_LABEL], label="The plausible future", elem_id="planning-check-choice")
    with gr.Row():
        fetch = gr.Button("Next question", elem_id="planning-check-next")
        submit = gr.Button("Submit", variant="primary", elem_id="planning-check-submit")
    status = gr.Markdown(elem_id="planning-check-status")

    def render(task) -> tuple:
        if task is None:
            return None, 0.0, None, "### Nothing left for you to check. Thank you!", gr.update(value=None)
        view = service.build_view(ctx, task.question)
        return task.question.id, time.time(), view.clip, question_markdown(view, show_key=False), gr.update(value=None)

    @ui_errors
    def on_next(request: gr.Request):
        return render(validation.next_question(ctx.database, caller(ctx, request), ctx.settings.lease_minutes))

    @ui_errors
    def on_submit(question_id: str | None, began: float, picked: str | None, request: gr.Request):
        if not question_id:
            raise gr.Error("Ask for a question first.")
        if not picked:
            raise gr.Error("Mark one choice as plausible, or choose 'None is plausible'.")
        name = caller(ctx, request)
        index = -1 if picked == NONE_LABEL else LETTERS.index(picked)
        validation.submit_check(
            ctx.database, name, question_id, index, round(time.time() - began, 1) if began else None
        )
        nxt = render(validation.next_question(ctx.database, name, ctx.settings.lease_minutes))
        return (*nxt, f"Saved your check of {esc(question_id)}.")

    outputs = [current, started, clip, text, choice]
    fetch.click(on_next, None, outputs, api_name="planning_next_check")
    submit.click(on_submit, [current, started, choice], [*outputs, status], api_name="planning_submit_check")
    return {"outputs": outputs}


def _results_panel(ctx: AppContext) -> None:
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
    compared = gr.Dataframe(
        label="Paired comparison of model runs on the questions all of them answered (bootstrap 95% interval "
        "of the difference, exact McNemar, Holm across all pairs, Cohen's h)",
        elem_id="planning-comparison",
    )
    by_length = gr.Dataframe(label="By future-sequence length")
    by_scene = gr.Dataframe(label="By scene")
    gr.Markdown("#### Disagreement queue (reviewers): most annotators reject the key")
    queue = gr.Dataframe(elem_id="planning-disagreements")

    @ui_errors
    def on_refresh(base: str, rotate: bool, request: gr.Request):
        name = caller(ctx, request)
        result = service.results(ctx, name, base or None, rotate)
        main, lengths, scenes = _leaderboard_frames(result)
        h = result["human_accuracy"]
        human_md = (
            f"**Human accuracy against the key:** per check {h['per_check']['accuracy']:.3f} "
            f"(n={h['per_check']['n']}), per question by majority {h['per_question_majority']['accuracy']:.3f} "
            f"(n={h['per_question_majority']['n']}); 'none is plausible' {h['none_plausible_share']:.1%}."
        )
        try:
            rows = validation.disagreement_queue(ctx.database, name)
        except CompStudioError:
            rows = []
        frame = pd.DataFrame([{**r, "votes": ", ".join(f"{k}:{v}" for k, v in r["votes"].items())} for r in rows])
        pairs = pd.DataFrame(comparison_rows(result["comparison"]), columns=COMPARISON_COLUMNS)
        return main, human_md, pairs, lengths, scenes, frame

    outputs = [board, human, compared, by_length, by_scene, queue]
    refresh.click(on_refresh, [baseline, circular], outputs, api_name="planning_results")


def build_planning_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Planning", id="planning") as tab:
        gr.Markdown(
            "ViLPAct multiple-choice planning: given the first 20% of a video and an intent, which of six "
            "future action sequences is the most plausible?"
        )
        with gr.Tabs():
            with gr.Tab("Check questions", id="planning-check"):
                _check_panel(ctx)
            with gr.Tab("Browse and ask a model", id="planning-browse"):
                qid = _browse_panel(ctx)
            with gr.Tab("Results", id="planning-results"):
                _results_panel(ctx)

    @ui_errors
    def on_load(request: gr.Request):
        try:
            ids = service.question_ids(ctx, caller(ctx, request))
        except CompStudioError:
            ids = []
        return gr.update(choices=ids, value=ids[0] if ids else None)

    return TabHandle(tab=tab, min_role="annotator", on_load=(on_load, [qid]))
