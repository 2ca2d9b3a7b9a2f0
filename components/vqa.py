"""The compositional VQA tab (MMComposition): answer, author, verify, models, leaderboard, admin.

Handlers only read inputs, call ``backend.vqa`` (which checks every caller's rights) and format outputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from backend.campaigns.instructions import VQA as VQA_INSTRUCTIONS
from backend.context import AppContext
from backend.errors import CompStudioError
from backend.humans.paired import people_rows
from backend.inference.registry import model_names
from backend.inference.runner import status_label
from backend.reporting import leaderboards
from backend.reporting.below_chance import below_chance_export
from backend.reporting.exports import write_report
from backend.vqa import compose, io, models, runs, service
from backend.vqa.difficulty import LEVELS
from backend.vqa.permissions import set_permission
from components.access import listen
from components.common import TabHandle, caller, esc, ui_errors
from components.feedback import refusal
from components.model_choices import offer_models_on_open
from components.results import charts_html
from components.study_status import study_end, study_line
from components.vqa_authoring import author_panel, item_image, letter_choices, question_md
from components.vqa_chart import category_chart_html
from components.vqa_verify import verify_counts, verify_panel

ANSWER_HELP = VQA_INSTRUCTIONS.markdown()  # the text a study qualification shows too (backend/campaigns)


def build_vqa_tab(ctx: AppContext) -> TabHandle:
    db = ctx.database
    with gr.Tab("Compositional VQA", id="vqa") as tab:
        gr.Markdown(
            "Author, verify, answer and rank compositional VQA items (MMComposition). "
            "Scores use partial credit: 1 for the exact set, |P|/|A| for a correct subset, else 0."
        )
        with gr.Tabs():
            with gr.Tab("Answer", id="vqa-answer") as answer_tab:
                answer = _answer_panel(ctx)
            with gr.Tab("Author", id="vqa-author", visible=False) as author_tab:
                author_panel(ctx)
            with gr.Tab("Verify", id="vqa-verify", visible=False) as verify_tab:
                verify = verify_panel(ctx)
            with gr.Tab("Models", id="vqa-models", visible=False) as models_tab:
                pickers = _models_panel(ctx)
            with gr.Tab("Leaderboard", id="vqa-leaderboard") as board_tab:
                board = _leaderboard_panel(ctx)
            with gr.Tab("Admin", id="vqa-admin", visible=False) as admin_tab:
                _admin_panel(ctx)
    offer_models_on_open(ctx, models_tab, pickers, "vqa_models_open")
    # the leaderboard, its comparison and chart are filled when the tab opens: no Refresh needed
    listen(
        ctx,
        board_tab.select,
        board["refresh"],
        None,
        board["outputs"],
        api_name="vqa_leaderboard_open",
        api_visibility="private",
    )
    # an item is handed out (leased) only when the person opens the Answer panel to work, not on page load
    open_answer, answer_outputs = answer["open"]
    for api_name, opened in (("vqa_ui_open", tab), ("vqa_ui_answer_open", answer_tab)):
        listen(
            ctx,
            opened.select,
            open_answer,
            None,
            answer_outputs,
            api_visibility="private",
            api_name=api_name,
        )

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        name = caller(ctx, request)
        try:
            rights = service.author_status(db, name)
            counts = service.left_counts(db, name)
        except CompStudioError:  # not signed in or not an annotator: app.py hides the tab anyway
            return {author_tab: gr.Tab(visible=False)}  # an empty dict would read as one output value
        return {
            author_tab: gr.Tab(visible=rights["author"]),
            verify_tab: gr.Tab(visible=rights["author"]),
            models_tab: gr.Tab(visible=rights["reviewer"]),
            admin_tab: gr.Tab(visible=rights["admin"]),
            answer["progress"]: study_line(counts["study"])
            if counts["study"]
            else answer_counts(counts["answer"] or {}),
            verify.progress: verify_counts(counts["verify"]) if counts["verify"] else "",
            **board["render"](runs.leaderboard(ctx, name)),
        }

    outputs = [author_tab, verify_tab, models_tab, admin_tab, answer["progress"], verify.progress, *board["outputs"]]
    inner = ((author_tab, "author"), (verify_tab, "author"), (models_tab, "reviewer"), (admin_tab, "admin"))
    return TabHandle(tab=tab, on_load=(on_load, outputs), inner_tabs=inner)


def answer_counts(done: dict[str, int]) -> str:
    if done["left_for_you"] == 0:
        return f"**Answered by you:** {done['mine_total']} · nothing left for you to answer"
    return f"**Answered by you:** {done['mine_total']} · **items left for you:** {done['left_for_you']}"


def _answer_panel(ctx: AppContext) -> dict[str, Any]:
    db, settings = ctx.database, ctx.settings
    gr.Markdown(ANSWER_HELP)
    current = gr.State(None)
    progress = gr.Markdown(elem_id="vqa-answer-progress")
    question = gr.Markdown(elem_id="vqa-answer-question")
    with gr.Row(visible=False) as form:
        image = gr.Image(
            label="Image",
            alt_text="The image the question is about",
            type="filepath",
            interactive=False,
            elem_id="vqa-answer-image",
            height=420,
        )
        with gr.Column():
            choices = gr.CheckboxGroup(label="Your answer", choices=[], elem_id="vqa-answer-choices")
            submit = gr.Button("Submit answer", variant="primary", elem_id="vqa-answer-submit")
    result = gr.Markdown(elem_id="vqa-answer-result")

    def render(payload: dict[str, Any]) -> dict:
        task, done, study = payload["task"], payload["progress"], payload.get("study")
        base = {progress: study_line(study) if study else answer_counts(done)}
        if task is None:  # nothing left: say so (a study worker: their code, or where to wait), no empty form
            return {
                **base,
                current: None,
                image: None,
                form: gr.update(visible=False),
                question: study_end(study, "vqa") if study else "### Nothing left for you to answer. Thank you!",
                choices: gr.update(choices=[], value=[]),
            }
        return {
            **base,
            current: task["id"],
            image: item_image(ctx, task),
            form: gr.update(visible=True),
            question: question_md(task),
            choices: gr.update(choices=letter_choices(list(task["options"].values())), value=[]),
        }

    def on_submit(item_id: str | None, letters: list[str], request: gr.Request) -> dict:
        name = caller(ctx, request)
        if not item_id:
            return {result: refusal("There is no item to answer.", name)}
        try:
            done = service.submit_answer(db, settings, name, item_id, letters)
            nxt = render(service.next_answer_task(db, settings, name))
        except CompStudioError as exc:  # e.g. two ticks on a single-choice item: the ticks stay for fixing
            return {result: refusal(str(exc), name)}
        feedback = (
            f"Your answer {', '.join(done['answer'])} for {esc(item_id)}: key {', '.join(done['key'])}, "
            f"score {done['score']:.2f}."
        )
        return {**nxt, result: feedback}

    @ui_errors
    def on_open(request: gr.Request) -> dict:
        """The person is on the Answer panel to work: hand them their current or next item."""
        return render(service.next_answer_task(db, settings, caller(ctx, request)))

    outputs = [current, progress, image, form, question, choices]
    # show_progress="minimal": no overlay (nor "Error" badge) over the image and the ticks being made
    listen(
        ctx,
        submit.click,
        on_submit,
        [current, choices],
        [*outputs, result],
        api_visibility="private",
        show_progress="minimal",
        api_name="vqa_ui_submit_answer",
    )
    return {"render": render, "outputs": outputs, "progress": progress, "open": (on_open, outputs)}


def _ask_section(ctx: AppContext, names: list[str]) -> gr.Dropdown:
    with gr.Row():
        model = gr.Dropdown(names, label="Model", value=names[0] if names else None, elem_id="vqa-model")
        mode = gr.Radio(list(models.IMAGE_MODES), value=ctx.settings.vqa_image_mode, label="Multi-image items as")
        blind = gr.Checkbox(False, label="Blind (question and options only, no image)")
    with gr.Row():
        item = gr.Dropdown([], label="Item", elem_id="vqa-model-item", allow_custom_value=True)
        refresh_items = gr.Button("Refresh the item list", size="sm")
        ask = gr.Button("Ask live", elem_id="vqa-model-ask")
        run_all = gr.Button("Run on all verified items", variant="primary")
    answer_md = gr.Markdown(elem_id="vqa-model-answer")

    @ui_errors
    def on_ask(name: str, item_id: str, image_mode: str, no_image: bool, request: gr.Request) -> str:
        if not (name and item_id):
            raise gr.Error("Choose a model and an item.")
        out = models.ask_model(ctx, caller(ctx, request), name, item_id, blind=no_image, image_mode=image_mode)
        if out["error"]:
            return f"**Error:** {esc(out['error'])}"
        return (
            f"**{esc(name)}** answered {esc(out['raw_output'])} → {_reading(out)}; "
            f"key {', '.join(out['key'])}; score {out['score'] if out['score'] is not None else 0:.2f}"
        )

    @ui_errors
    def on_run(
        name: str,
        image_mode: str,
        no_image: bool,
        request: gr.Request,
        progress: gr.Progress = gr.Progress(track_tqdm=True),
    ) -> str:
        out = models.run_model(
            ctx,
            caller(ctx, request),
            name,
            blind=no_image,
            image_mode=image_mode,
            progress=lambda done, n: progress((done, n)),
        )
        score = (
            f"mean partial credit {out['score']:.3f} over {out['scored']} answered items"
            if out["score"] is not None
            else "no item has an answer: no score, not ranked"
        )
        return (
            f"Run **{esc(out['run'])}** {status_label(out['status'], out['errors'])}: {out['items']} items, {score}, "
            f"{out['answered']} answered, {out['refusals']} refused, {out['parse_failures']} unparsed, "
            f"{out['errors']} errors, {out['newly_computed']} newly computed."
        )

    @ui_errors
    def on_items(request: gr.Request) -> Any:
        ids = [row["id"] for row in service.browse_items(ctx.database, caller(ctx, request), status="verified")]
        return gr.update(choices=ids, value=ids[0] if ids else None)

    listen(ctx, refresh_items.click, on_items, None, item, api_visibility="private", api_name="vqa_ui_items")
    listen(
        ctx,
        ask.click,
        on_ask,
        [model, item, mode, blind],
        answer_md,
        concurrency_id="models",
        api_visibility="private",
        api_name="vqa_ui_ask",
    )
    listen(
        ctx,
        run_all.click,
        on_run,
        [model, mode, blind],
        answer_md,
        concurrency_id="models",
        api_visibility="private",
        api_name="vqa_ui_run",
    )
    return model


def _dist_frame(counts: dict[str, int]) -> pd.DataFrame:
    return pd.DataFrame({"level": list(counts), "items": list(counts.values())})


def _voting_section(ctx: AppContext, names: list[str]) -> gr.Dropdown:
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

    @ui_errors
    def on_vote(
        members: list[str], request: gr.Request, progress: gr.Progress = gr.Progress(track_tqdm=True)
    ) -> pd.DataFrame:
        models.vote_difficulty(ctx, caller(ctx, request), members, progress=lambda d, n: progress((d, n)))
        return _dist_frame(compose.difficulty_overview(ctx.database, caller(ctx, request)))

    @ui_errors
    def on_show(request: gr.Request) -> pd.DataFrame:
        return _dist_frame(compose.difficulty_overview(ctx.database, caller(ctx, request)))

    listen(
        ctx,
        vote.click,
        on_vote,
        [panel],
        distribution,
        concurrency_id="models",
        api_visibility="private",
        api_name="vqa_ui_vote",
    )
    listen(ctx, show.click, on_show, None, distribution, api_visibility="private", api_name="vqa_ui_votes_show")
    return panel


def _compose_section(ctx: AppContext) -> None:
    with gr.Accordion("Compose a benchmark", open=False):
        total = gr.Number(20, precision=0, label="Items")
        weights = {level: gr.Number(1, label=f"Weight of {level.replace('_', ' ')}") for level in LEVELS}
        fmt = gr.Radio(["released", "jsonl"], value="released", label="Layout")
        make = gr.Button("Compose and export")
        bundle = gr.File(label="Benchmark")
        composed = gr.Markdown()

    @ui_errors
    def on_compose(data: dict, request: gr.Request) -> dict:
        out = compose.compose_and_export(
            ctx.database,
            ctx.settings,
            caller(ctx, request),
            Path(tempfile.mkdtemp(prefix="vqa-")),
            total=int(data[total] or 0),
            level_mix={level: data[box] for level, box in weights.items()},
            fmt=data[fmt],
        )
        note = f"{out['items']} items" + (
            f"; {out['shortfall']} missing (too few rated items)" if out["shortfall"] else ""
        )
        return {bundle: out["zip"], composed: note}

    listen(
        ctx,
        make.click,
        on_compose,
        {total, *weights.values(), fmt},
        [bundle, composed],
        api_visibility="private",
        api_name="vqa_ui_compose",
    )


def _reading(out: dict[str, Any]) -> str:
    """A live answer as read: its letters, or ``(refused)`` / ``(unparsed)``."""
    if out["status"] == "ok":
        return ", ".join(out["letters"])
    return "(refused)" if out["status"] == "refusal" else f"({out['status']})"


def _models_panel(ctx: AppContext) -> list[gr.Dropdown]:
    """The panel's model pickers (refilled from the registry when the tab opens)."""
    names = model_names(ctx)
    pickers = [_ask_section(ctx, names), _voting_section(ctx, names)]
    _compose_section(ctx)
    return pickers


def _leaderboard_panel(ctx: AppContext) -> dict[str, Any]:
    table = gr.Dataframe(
        interactive=False,
        elem_id="vqa-leaderboard",
        label="Partial-credit score (%) on the verified items: people (their answers scored like a model's), "
        "random choice and every run, each over the items it covers, with its 95% bootstrap interval",
    )
    with gr.Row():
        refresh = gr.Button("Refresh")
        download = gr.DownloadButton("Download CSV", elem_id="vqa-leaderboard-csv")
    categories = gr.Dataframe(
        interactive=False,
        elem_id="vqa-paper-table",
        label="Per category (%), as MMComposition's Table 2 prints it: people, the models, Random Choice",
    )
    chart = gr.HTML(elem_id="vqa-category-chart")
    people = gr.Dataframe(
        interactive=False,
        elem_id="vqa-people-vs-models",
        label="Each model against people, on the items both answered (fully right or not): bootstrap 95% interval "
        "of the difference, exact McNemar on the items only one got right, Holm across these pairs",
    )
    compared = gr.Dataframe(
        interactive=False,
        elem_id="vqa-comparison",
        label="Every pair of runs on the items both answered (fully right or not; blind runs always in): "
        "bootstrap 95% interval of the difference, exact McNemar, Holm across all pairs",
    )
    with gr.Accordion("Questions where models score below chance (appendix A.4, reviewers)", open=False):
        analyse = gr.Button("Analyse")
        analysis_md = gr.Markdown()
        below_charts = gr.HTML(elem_id="vqa-below-chance-charts")
        below_download = gr.DownloadButton(
            "Download the tables and charts (CSV, PNG, SVG, ...)", elem_id="vqa-below-chance-download", visible=False
        )
        below = gr.Dataframe(interactive=False)

    def render(rows: list[dict[str, Any]], comparison: dict | None = None) -> dict:
        path = Path(tempfile.mkdtemp(prefix="vqa-board-")) / "vqa_leaderboard.csv"
        path.write_text(runs.leaderboard_csv(rows, runs.run_manifests(ctx)), encoding="utf-8")
        out = {
            table: pd.DataFrame(leaderboards.printed(leaderboards.vqa_board(rows))),
            categories: pd.DataFrame(leaderboards.printed(leaderboards.paper_table(rows))),
            chart: category_chart_html(rows),
            download: str(path),
        }
        if comparison is not None:
            pairs = leaderboards.printed(leaderboards.paired_rows(comparison["comparison"]))
            out[compared] = leaderboards.frame(pairs, "fewer than two runs of models: nothing to pair yet")
            against = leaderboards.printed(people_rows(comparison["people_vs_models"]))
            out[people] = leaderboards.frame(against, "no answers of people, or no model run, yet: nothing to pair")
        return out

    @ui_errors
    def on_refresh(request: gr.Request) -> dict:
        name = caller(ctx, request)
        return render(runs.leaderboard(ctx, name), runs.comparison(ctx, name, samples=ctx.settings.bootstrap_samples))

    @ui_errors
    def on_analyse(request: gr.Request) -> tuple:
        out = runs.low_cpv_analysis(ctx, caller(ctx, request))
        report = below_chance_export(out)  # appendix A.4's charts (issue 18), exported with the tables
        written = write_report(report, Path(tempfile.mkdtemp(prefix="vqa-below-chance-")))
        summary = (
            f"{len(out['below_chance'])} of {out['questions']} questions have a mean score across "
            f"{len(out['models'])} model runs below their category's random score. Option counts (all): "
            f"{out['option_counts']}; below chance: {out['option_counts_below']}. Difficulty (all): "
            f"{out['difficulty']}; below chance: {out['difficulty_below']}."
        )
        download = gr.DownloadButton(value=written["zip"], visible=True)
        return esc(summary), charts_html(report), download, pd.DataFrame(out["below_chance"])

    outputs = [table, categories, chart, download, compared, people]
    listen(
        ctx, refresh.click, on_refresh, None, outputs, api_visibility="private", api_name="vqa_ui_leaderboard_refresh"
    )
    listen(
        ctx,
        analyse.click,
        on_analyse,
        None,
        [analysis_md, below_charts, below_download, below],
        api_visibility="private",
        api_name="vqa_ui_analyse",
    )
    return {"render": render, "outputs": outputs, "refresh": on_refresh}


def _admin_panel(ctx: AppContext) -> None:
    db = ctx.database
    gr.Markdown("The **author** permission lets an annotator write VQA items and verify others' items.")
    user = gr.Textbox(label="User name", elem_id="vqa-admin-user")
    with gr.Row():
        grant = gr.Button("Grant author", elem_id="vqa-admin-grant")
        revoke = gr.Button("Revoke author")
    done = gr.Markdown(elem_id="vqa-admin-done")

    def change(granted: bool):
        @ui_errors
        def handler(name: str, request: gr.Request) -> str:
            set_permission(db, caller(ctx, request), (name or "").strip(), "author", granted)
            return f"{esc(name)} {'now has' if granted else 'no longer has'} the author permission."

        return handler

    listen(ctx, grant.click, change(True), [user], done, api_visibility="private", api_name="vqa_ui_author_grant")
    listen(ctx, revoke.click, change(False), [user], done, api_visibility="private", api_name="vqa_ui_author_revoke")

    gr.Markdown(
        "**Import** a `.zip` of `questions.json` + `images/` (the released layout, with `answer` and "
        "`category`) or an items `.jsonl`; a file with any problem imports nothing. **Export** the "
        "verified items in either layout."
    )
    with gr.Row():
        upload = gr.File(label="Items file", file_types=[".zip", ".jsonl"], elem_id="vqa-admin-upload")
        with gr.Column():
            do_import = gr.Button("Import", elem_id="vqa-admin-import")
            layout = gr.Radio(["released", "jsonl"], value="released", label="Export layout")
            do_export = gr.Button("Export verified items")
            bundle = gr.File(label="Export")
    imported = gr.Markdown(elem_id="vqa-admin-imported")

    @ui_errors
    def on_import(path: str | None, request: gr.Request) -> str:
        if not path:
            raise gr.Error("Choose a file to import.")
        out = io.import_upload(db, ctx.settings, caller(ctx, request), path)
        return f"Imported {out['imported']} items; {out['to_verify']} wait for verification."

    @ui_errors
    def on_export(fmt: str, request: gr.Request) -> str:
        out_dir = Path(tempfile.mkdtemp(prefix="vqa-export-"))
        return io.export_download(db, ctx.settings, caller(ctx, request), out_dir, fmt)

    listen(ctx, do_import.click, on_import, [upload], imported, api_visibility="private", api_name="vqa_ui_import")
    listen(ctx, do_export.click, on_export, [layout], bundle, api_visibility="private", api_name="vqa_ui_export")
