"""The planning tab (ViLPAct): browse a question (observed-window clip or text only, intent, six candidate
futures with their STRIPS checks), check questions as an annotator, ask a model live or run a batch, and
the results (leaderboard with intervals and McNemar, human accuracy, disagreement queue).

Handlers only read inputs, call ``backend.planning.service`` / ``.validation`` (which check the caller's
role) and format outputs.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

import gradio as gr
import pandas as pd

from backend.accounts import auth
from backend.campaigns.instructions import PLANNING as PLANNING_INSTRUCTIONS
from backend.context import AppContext
from backend.errors import CompStudioError
from backend.humans.paired import people_rows
from backend.inference.registry import model_names
from backend.planning import service, validation
from backend.planning.authoring import author_question
from backend.planning.questions import CHOICE_LETTERS
from backend.reporting import leaderboards
from backend.reporting.leaderboards import interval
from backend.reporting.tables import pct
from components.access import endpoint, listen
from components.common import TabHandle, caller, esc, ui_errors
from components.feedback import refusal
from components.model_choices import offer_models_on_open
from components.models import run_summary_markdown
from components.player import build_player, empty_value, player_value
from components.study_status import study_end, study_line

NONE_LABEL = "None is plausible"
CHECK_HELP = PLANNING_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)


def question_markdown(view: service.QuestionView, show_key: bool) -> str:
    """The question; ``show_key`` (reviewers) adds the key and each choice's STRIPS verdict, which annotators
    checking the question must not see (they would bias the human check)."""
    q = view.question
    lines = [f"### Question {esc(q.id)}  ·  scene: {esc(q.scene or '?')}  ·  status: {esc(q.status)}"]
    if view.text_only_reason:
        lines.append(f"> **Text only.** {esc(view.text_only_reason)}")
    observed = "; ".join(esc(n) for n in view.observed_names) or "(no action yet)"
    lines += [f"**Observed actions (first 20%):** {observed}", f"**Intent:** {esc(q.intent)}", ""]
    for index, (names, check) in enumerate(zip(view.choice_names, view.checks, strict=True)):
        line = f"**{CHOICE_LETTERS[index]}.** {esc(', '.join(names))}"
        if show_key:
            key = " ✅ key" if index == q.answer_index else ""
            line += f"  \n  _STRIPS: {esc(check)}_{key}"
        lines.append(line)
    return "\n\n".join(lines)


def is_reviewer(ctx: AppContext, name: str | None) -> bool:
    user = auth.get_user(ctx.database, name) if name else None
    return bool(user and not user.disabled and user.has_role("reviewer"))


def clip_update(view: service.QuestionView, username: str | None = None, submit: str | None = None) -> Any:
    """The observed-window player (components/player.py), hidden for a text-only question (the question says
    why): it plays the window's clip, cannot go past its end, and its timeline shows only the observed actions."""
    if view.clip is None:
        return gr.update(value=empty_value(), visible=False)
    value = player_value(
        view.clip, view.actions, user=username, window=view.window, submit=submit, key=view.question.id
    )
    return gr.update(value=value, visible=True)


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


def _browse_panel(ctx: AppContext) -> tuple[gr.Dropdown, gr.Column, gr.Dropdown]:
    with gr.Row():
        qid = gr.Dropdown(label="Question", choices=[], allow_custom_value=True, elem_id="planning-question-id")
        show = gr.Button("Show", elem_id="planning-show")
    with gr.Row():
        clip = build_player("planning-clip", visible=False)  # the observed window (first 20%)
        text = gr.Markdown(elem_id="planning-question")
    with gr.Column(visible=False, elem_id="planning-reviewer-tools") as tools:
        picker = reviewer_tools(ctx, qid)

    @ui_errors
    def on_show(question_id: str, request: gr.Request) -> dict:
        name = caller(ctx, request)
        view = service.view_question(ctx, name, question_id)
        return {clip: clip_update(view, name), text: question_markdown(view, show_key=is_reviewer(ctx, name))}

    listen(ctx, show.click, on_show, [qid], [clip, text], api_visibility="private", api_name="planning_ui_show")
    return qid, tools, picker


def reviewer_tools(ctx: AppContext, qid: gr.Dropdown) -> gr.Dropdown:
    """Ask a model, run a batch, author a question: reviewers only (hidden for others; the backend refuses
    them too). Returns the model picker."""
    gr.Markdown("#### Ask a model")
    with gr.Row():
        model = gr.Dropdown(label="Model", choices=model_names(ctx), value="nsplan-lite", elem_id="planning-model")
        mode = gr.Radio(
            ["frames", "text"],
            value="frames",
            label="Input",
            info="frames: sampled from the observed window; text: observed action names",
        )
        ask = gr.Button("Ask", variant="primary", elem_id="planning-ask")
    answer = gr.Markdown(elem_id="planning-answer")
    gr.Markdown("#### Batch run over all questions")
    with gr.Row():
        circular = gr.Checkbox(label="Circular (every rotation must be right)", value=False)
        limit = gr.Number(label="Limit (empty: all)", value=None, precision=0, elem_id="planning-limit")
        run = gr.Button("Run", elem_id="planning-run")
    summary = gr.Markdown(elem_id="planning-run-summary")  # readable: a status line and a table (issue 44 §11)
    gr.Markdown("#### Author a new question: it goes to annotators before it counts")
    with gr.Row():
        sequence = gr.Textbox(label="Sequence id", elem_id="planning-author-sequence")
        intent = gr.Textbox(label="Intent (empty: the sequence's first high-level intent)")
        author = gr.Button("Author", elem_id="planning-author")
    authored = gr.Markdown(elem_id="planning-authored")

    @ui_errors
    def on_ask(question_id: str, model_name: str, input_mode: str, request: gr.Request) -> str:
        result = service.ask_model(ctx, caller(ctx, request), question_id, model_name, input_mode)
        verdict = "right" if result.score == 1.0 else "wrong"
        return (
            f"**{esc(model_name)}** answered **{esc(result.parsed)}** ({verdict}; key {esc(result.correct_answer)})"
            f" in {result.latency_ms or 0:.0f} ms{' (from the store)' if result.from_store else ''}.  \n"
            f"Raw output: {esc(result.raw_output)}"
        )

    @ui_errors
    def on_run(
        model_name: str,
        input_mode: str,
        rotate: bool,
        count,
        request: gr.Request,
        progress=gr.Progress(track_tqdm=True),
    ) -> str:
        def report(done: int, total: int) -> None:
            progress(done / max(total, 1), desc=f"{done}/{total}")

        limit_n = int(count) if count else None
        done = service.run_batch(ctx, caller(ctx, request), model_name, input_mode, rotate, limit_n, report)
        return run_summary_markdown(done)

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

    listen(
        ctx,
        author.click,
        on_author,
        [sequence, intent],
        authored,
        api_visibility="private",
        api_name="planning_ui_author",
    )
    listen(
        ctx,
        ask.click,
        on_ask,
        [qid, model, mode],
        answer,
        concurrency_id="models",
        api_visibility="private",
        api_name="planning_ui_ask",
    )
    listen(
        ctx,
        run.click,
        on_run,
        [model, mode, circular, limit],
        summary,
        concurrency_id="models",
        api_visibility="private",
        api_name="planning_ui_run",
    )
    return model


def counts_markdown(counts: dict[str, int]) -> str:
    if counts["left_for_you"] == 0:
        return f"**Checked by you:** {counts['mine_total']} · nothing left for you to check"
    return f"**Checked by you:** {counts['mine_total']} · **questions left for you:** {counts['left_for_you']}"


def _check_panel(ctx: AppContext) -> dict[str, Any]:
    gr.Markdown(CHECK_HELP)
    current = gr.State(None)
    started = gr.State(0.0)
    progress = gr.Markdown(elem_id="planning-check-progress")
    fetch = gr.Button("Next question", elem_id="planning-check-next")
    with gr.Row():
        clip = build_player("planning-check-clip", visible=False)  # the observed window
        text = gr.Markdown(elem_id="planning-check-question")
    with gr.Group(visible=False) as form:
        choice = gr.Radio([*CHOICE_LETTERS, NONE_LABEL], label="The plausible future", elem_id="planning-check-choice")
        submit = gr.Button("Submit", variant="primary", elem_id="planning-check-submit")
    status = gr.Markdown(elem_id="planning-check-status")

    def render(task, name: str | None) -> dict:
        study = validation.study_of(ctx.database, name)  # a crowd-study worker: their quota, then their code
        line = study_line(study) if study else counts_markdown(validation.check_counts(ctx.database, name))
        counts = {progress: line}
        if task is None:  # nothing left: say so (a study worker: their code, or where to wait), no empty form
            return {
                **counts,
                current: None,
                started: 0.0,
                clip: gr.update(value=empty_value(), visible=False),
                form: gr.update(visible=False),
                fetch: gr.update(visible=False),
                text: study_end(study, "planning") if study else "### Nothing left for you to check. Thank you!",
            }
        view = service.build_view(ctx, task.question)
        return {
            **counts,
            current: task.question.id,
            started: time.time(),
            clip: clip_update(view, name, "#planning-check-submit"),
            form: gr.update(visible=True),
            fetch: gr.update(visible=False),
            text: question_markdown(view, show_key=is_reviewer(ctx, name)),
            choice: gr.update(value=None),
        }

    @ui_errors
    def on_next(request: gr.Request) -> dict:
        name = caller(ctx, request)
        return {
            **render(validation.next_question(ctx.database, name, ctx.settings.lease_minutes, ctx.settings), name),
            status: "",
        }

    def on_submit(question_id: str | None, began: float, picked: str | None, request: gr.Request) -> dict:
        name = caller(ctx, request)
        if not question_id:
            return {status: refusal("Ask for a question first: press Next question.", name)}
        if not picked:  # the person's choice, clip and question stay as they are
            return {status: refusal("Mark one choice as plausible, or choose 'None is plausible'.", name)}
        index = -1 if picked == NONE_LABEL else CHOICE_LETTERS.index(picked)
        try:
            validation.submit_check(
                ctx.database, name, question_id, index, round(time.time() - began, 1) if began else None, ctx.settings
            )
            nxt = render(validation.next_question(ctx.database, name, ctx.settings.lease_minutes, ctx.settings), name)
        except CompStudioError as exc:
            return {status: refusal(str(exc), name)}
        return {**nxt, status: f"Saved your check of {esc(question_id)}."}

    outputs = [current, started, progress, fetch, clip, text, form, choice]
    listen(
        ctx, fetch.click, on_next, None, [*outputs, status], api_visibility="private", api_name="planning_ui_next_check"
    )
    # show_progress="minimal": no overlay (nor "Error" badge) over the clip, question or choice being made
    listen(
        ctx,
        submit.click,
        on_submit,
        [current, started, choice],
        [*outputs, status],
        api_visibility="private",
        show_progress="minimal",
        api_name="planning_ui_submit_check",
    )
    return {"progress": progress, "fetch": fetch}


def _results_panel(ctx: AppContext, results_tab: gr.Tab) -> None:
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

    @ui_errors
    def on_refresh(base: str, rotate: bool, request: gr.Request) -> dict:
        found = results_json(ctx, caller(ctx, request), base or None, rotate)
        main, lengths, scenes = _leaderboard_frames(found)
        rows = found["disagreements"]
        return {
            board: main,
            human: human_markdown(found["human_accuracy"]),
            people: leaderboards.frame(
                leaderboards.printed(people_rows(found["people_vs_models"])),
                "no checks by people, or no model run, yet: nothing to pair",
            ),
            compared: leaderboards.frame(
                leaderboards.printed(leaderboards.paired_rows(found["comparison"])),
                "fewer than two runs of models: nothing to pair yet",
            ),
            by_length: lengths,
            by_scene: scenes,
            queue: pd.DataFrame([{**r, "votes": ", ".join(f"{k}:{v}" for k, v in r["votes"].items())} for r in rows]),
        }

    shown = [board, human, people, compared, by_length, by_scene, queue]
    listen(
        ctx,
        refresh.click,
        on_refresh,
        [baseline, circular],
        shown,
        api_visibility="private",
        api_name="planning_ui_results_refresh",
    )
    # opened with results: filled at once, no Refresh needed
    listen(
        ctx,
        results_tab.select,
        on_refresh,
        [baseline, circular],
        shown,
        api_name="planning_results_open",
        api_visibility="private",
    )


def human_markdown(h: dict) -> str:
    return (
        f"**Human accuracy against the key:** per check {h['per_check']['accuracy']:.3f} "
        f"(n={h['per_check']['n']}), per question by majority {h['per_question_majority']['accuracy']:.3f} "
        f"(n={h['per_question_majority']['n']}); 'none is plausible' {h['none_plausible_share']:.1%}."
    )


def results_json(ctx: AppContext, name: str | None, baseline: str | None, circular: bool) -> dict:
    """The leaderboard with human accuracy, and (reviewers; empty for others) the disagreement queue."""
    found = service.results(ctx, name, baseline, circular)
    try:
        found["disagreements"] = validation.disagreement_queue(ctx.database, name)
    except CompStudioError:
        found["disagreements"] = []
    return found


def question_json(view: service.QuestionView, show_key: bool) -> dict:
    """The question as JSON; the key and the STRIPS verdicts only with ``show_key`` (reviewers)."""
    q = view.question
    return {
        "id": q.id,
        "scene": q.scene,
        "status": q.status,
        "intent": q.intent,
        "observed": view.observed_names,
        "choices": view.choice_names,
        "strips_checks": view.checks if show_key else None,
        "clip": view.clip,
        "text_only_reason": view.text_only_reason,
        "answer_index": q.answer_index if show_key else None,
    }


def _register_api(ctx: AppContext) -> None:
    """Named JSON endpoints: planning_questions, planning_question, planning_next_check, planning_submit_check,
    planning_author, planning_ask, planning_run, planning_results."""

    @ui_errors
    def planning_questions(request: gr.Request) -> list[str]:
        """The ids of the questions that count or wait for checks."""
        return service.question_ids(ctx, caller(ctx, request))

    @ui_errors
    def planning_question(question_id: str, request: gr.Request) -> dict:
        """A question, text only (no clip); for reviewers with its choices' STRIPS checks and the key
        (answer_index), which annotators do not see (null)."""
        name = caller(ctx, request)
        return question_json(service.view_question(ctx, name, question_id, with_clip=False), is_reviewer(ctx, name))

    @ui_errors
    def planning_next_check(request: gr.Request) -> dict:
        """Your current or next question to check (no key, no STRIPS verdicts), or {"question": null} when
        none is left; ``left_for_you`` counts the questions left for you, this one included; a crowd-study
        worker also gets ``study`` (tasks done of the quota and, once done, the completion code)."""
        name = caller(ctx, request)
        task = validation.next_question(ctx.database, name, ctx.settings.lease_minutes, ctx.settings)
        left = validation.check_counts(ctx.database, name)["left_for_you"]
        study = validation.study_of(ctx.database, name)  # a crowd-study worker: quota and, once done, the code
        extra = {"study": study} if study else {}
        if task is None:
            return {"question": None, "left_for_you": left, **extra}
        view = service.build_view(ctx, task.question, with_clip=False)
        return {"question": question_json(view, False), "expires_at": task.expires_at, "left_for_you": left, **extra}

    @ui_errors
    def planning_submit_check(
        question_id: str, plausible_choice: int, seconds_spent: float | None, request: gr.Request
    ) -> dict:
        """Store your check: plausible_choice 0-5, or -1 for "none is plausible"."""
        return validation.submit_check(
            ctx.database, caller(ctx, request), question_id, int(plausible_choice), seconds_spent, ctx.settings
        )

    @ui_errors
    def planning_ask(question_id: str, model: str, mode: str, request: gr.Request) -> dict:
        """One model's live answer to one question (mode "frames" or "text"; reviewers)."""
        return asdict(service.ask_model(ctx, caller(ctx, request), question_id, model, mode or "frames"))

    @ui_errors
    def planning_run(model: str, mode: str, circular: bool, limit: int | None, request: gr.Request) -> dict:
        """A batch run over the questions that count (reviewers); resumes from the prediction store."""
        return service.run_batch(
            ctx, caller(ctx, request), model, mode or "frames", bool(circular), int(limit) if limit else None
        )

    @ui_errors
    def planning_results(baseline: str | None, circular: bool, request: gr.Request) -> dict:
        """The leaderboard (intervals, McNemar against baseline), human accuracy, the disagreement queue."""
        return results_json(ctx, caller(ctx, request), baseline or None, bool(circular))

    @ui_errors
    def planning_author(sequence_id: str, intent: str | None, request: gr.Request) -> dict:
        """Author a new question from a sequence (reviewers; intent null: the sequence's first high-level
        intent); it goes to annotators' checks before it counts."""
        question = author_question(
            ctx.database,
            caller(ctx, request),
            (sequence_id or "").strip(),
            (intent or "").strip() or None,
            annotators_per_question=ctx.settings.planning_annotators_per_question,
        )
        return question_json(service.build_view(ctx, question, with_clip=False), True)

    for name, fn in {
        "planning_questions": planning_questions,
        "planning_question": planning_question,
        "planning_next_check": planning_next_check,
        "planning_submit_check": planning_submit_check,
        "planning_author": planning_author,
    }.items():
        endpoint(ctx, fn, api_name=name, queue=False)
    for name, fn in {"planning_ask": planning_ask, "planning_run": planning_run}.items():
        endpoint(ctx, fn, api_name=name, concurrency_id="models")
    endpoint(ctx, planning_results, api_name="planning_results")


def build_planning_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("Planning", id="planning") as tab:
        gr.Markdown(
            "ViLPAct multiple-choice planning: given the first 20% of a video and an intent, which of six "
            "future action sequences is the most plausible?"
        )
        with gr.Tabs():
            with gr.Tab("Check questions", id="planning-check"):
                check = _check_panel(ctx)
            with gr.Tab("Browse and ask a model", id="planning-browse"):
                qid, tools, picker = _browse_panel(ctx)
            with gr.Tab("Results", id="planning-results") as results_tab:
                _results_panel(ctx, results_tab)
    offer_models_on_open(ctx, tab, [picker], "planning_models_open")

    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        try:
            ids = service.question_ids(ctx, name)
            counts = validation.check_counts(ctx.database, name)
            study = validation.study_of(ctx.database, name)
        except CompStudioError:  # not signed in or not an annotator: app.py hides the tab anyway
            return {tools: gr.update(visible=False)}  # an empty dict would read as one output value
        return {
            qid: gr.update(choices=ids, value=ids[0] if ids else None),
            tools: gr.update(visible=is_reviewer(ctx, name)),
            check["progress"]: study_line(study) if study else counts_markdown(counts),
            # a study worker always has the button: it hands the next question, or shows their code or the way to wait
            check["fetch"]: gr.update(visible=bool(study) or counts["left_for_you"] > 0),
        }

    return TabHandle(tab=tab, on_load=(on_load, [qid, tools, check["progress"], check["fetch"]]))
