"""The In-context examples tab (CoFe): pick a test case, a selector, its weights and which sides of equation 2
it matches; see the chosen examples in prompt order with their scores and what each newly covered, what nothing
covers, the Table 2 statistics (for the case, or for the whole test set with the count a variant keeps), the
prompt; compare two selectors side by side; ask a text model; reviewers and admins upload banks and test sets.

A mistake in the inputs (a bad weight, no test case, a bad file) is answered in the message line under the
buttons: nothing is raised into Gradio's status tracker, so no "Error" badge covers the page and every input
keeps its value (docs/decisions.md, "In-context tab: messages instead of raised errors").
"""

from __future__ import annotations

import functools
import html
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import gradio as gr
import pandas as pd

from backend.context import AppContext
from backend.errors import CompStudioError, PermissionDenied, ValidationError
from backend.icl import service
from backend.icl.evaluation import BENCHMARK, eval_item
from backend.icl.matching import MATCHING, MATCHING_HELP
from backend.icl.prompts import ORDERS
from backend.icl.selection import PRESET_HELP, PRESETS
from backend.icl.selectors import SETTINGS_HELP, setting_names
from backend.inference.benchmarks import EvalItem
from components.access import endpoint, listen
from components.common import EventOptions, TabHandle, caller, esc, ui_errors
from components.model_choices import offer_models_on_open
from components.models import build_ask_model

ROW_COLUMNS = [
    "position",
    "line",
    "input",
    "output",
    "primitive_coverage",
    "structural_similarity",
    "new_primitives",
    "new_structures",
]
HELP = {**PRESET_HELP, **SETTINGS_HELP}
log = logging.getLogger(__name__)


def _code(key: str) -> str:
    return f"<code>{html.escape(key)}</code>"


def case_markdown(view: service.CaseView, embedding_model: str | None = None) -> str:
    test, stats = view.result.test, view.result.stats
    aiming = ", ".join(_code(k) for k in view.aiming) or "none recognised for this category"
    missing_p = ", ".join(esc(k) for k in view.uncovered_primitives) or "none"
    lines = [
        f"**Input:** {esc(test.input)}  \n**Output:** {esc(test.output)}  \n**Category:** {esc(test.category) or '-'}",
        f"**Aiming combination (never in a chosen example):** {aiming}",
        f"**Coverage:** T_L {stats['T_L']:.0%} · T_N {stats['T_N']:.0%} · T_S^1 {stats['T_S1']:.0%} · "
        f"T_S^>1 {stats['T_S2']:.0%}",
        f"**Context length:** {int(stats['context_length'])} whitespace tokens (Table 2: the chosen examples' "
        "inputs and outputs)",
        f"**Primitives nothing covers:** {missing_p}",
        f"**Structures nothing covers ({len(view.uncovered_structures)}):** "
        + (", ".join(_code(k) for k in view.uncovered_structures[:30]) or "none")
        + (" ..." if len(view.uncovered_structures) > 30 else ""),
    ]
    return "\n\n".join([*lines, *_variant_lines(view, embedding_model)])


def _variant_lines(view: service.CaseView, embedding_model: str | None) -> list[str]:
    result, lines = view.result, []
    if result.matching != "both":
        rules = ", ".join(_code(k) for k in result.covered_sentence_rules)
        verdict = (
            f"**filtered out**: a chosen example covers its sentence rule {rules}"
            if not result.kept
            else "kept"
            if result.matching == "target_only"
            else "kept (only target_only filters)"
        )
        lines.append(
            f"**Matching:** {esc(result.matching)} ({esc(MATCHING_HELP[result.matching])}); this test case is {verdict}"
        )
    if embedding_model:
        lines.append(f"**Sentence embeddings:** {_code(embedding_model)}")
    return lines


SELECTION_FIELDS = (
    "bank",
    "tests",
    "line",
    "setting",
    "order",
    "n",
    "seed",
    "fictional",
    "w_p",
    "w_s",
    "w_c",
    "diversity",
    "primitive_once",
    "matching",
    "mmr_lambda",
    "mmr_pool",
)


@dataclass
class UploadPanel:
    """Reviewers and admins store a bank or test set from the browser (the backend checks the role)."""

    box: gr.Accordion
    file: gr.File
    name: gr.Textbox
    kind: gr.Radio
    replace: gr.Checkbox
    button: gr.Button


@dataclass
class IclView:
    """The tab's components: ``selection`` holds the inputs of one selection by CaseRequest field name."""

    bank: gr.Dropdown
    tests: gr.Dropdown
    category: gr.Dropdown
    query: gr.Textbox
    cases: gr.Dropdown
    setting: gr.Dropdown
    setting_b: gr.Dropdown
    setting_help: gr.Markdown
    selection: dict[str, Any]
    run: gr.Button
    set_table: gr.Button
    message: gr.Markdown
    set_summary: gr.Markdown
    results: dict[str, Any]
    item: gr.State
    models: gr.Dropdown
    upload: UploadPanel


def _selector_inputs(selection: dict[str, Any]) -> tuple[gr.Dropdown, gr.Dropdown]:
    with gr.Row():
        selection["setting"] = gr.Dropdown(
            setting_names(), value="full_similarity", label="Selector", elem_id="icl_setting"
        )
        setting_b = gr.Dropdown(["", *setting_names()], value="", label="Compare with", elem_id="icl_setting_b")
        selection["matching"] = gr.Dropdown(
            list(MATCHING), value="both", label="Matching (equation 2)", elem_id="icl_matching"
        )
        selection["order"] = gr.Dropdown(list(ORDERS), value="structure_closer", label="Prompt order")
        selection["n"] = gr.Number(10, label="Examples", precision=0, minimum=1, maximum=50)
        selection["seed"] = gr.Number(0, label="Seed", precision=0)
        selection["fictional"] = gr.Checkbox(False, label="Fictional words (C.7)")
    with gr.Accordion("CoFe weights (filled from the preset) and MMR", open=False):
        with gr.Row():  # a gr.Number cannot stay blank (it sends 0), so the preset's values are shown and sent
            for name in ("w_p", "w_s", "w_c"):
                selection[name] = gr.Number(
                    getattr(PRESETS["full_similarity"], name), label=name, elem_id=f"icl_{name}"
                )
            selection["diversity"] = gr.Dropdown(["preset", "on", "off"], value="preset", label="S(C) term (diversity)")
            selection["primitive_once"] = gr.Dropdown(
                ["preset", "on", "off"], value="preset", label="Count a primitive once"
            )
        with gr.Row():
            selection["mmr_lambda"] = gr.Number(
                0.5, label="MMR λ (1: relevance only, 0: diversity only)", elem_id="icl_mmr_lambda"
            )
            selection["mmr_pool"] = gr.Number(
                100, label="MMR pool (most similar examples considered)", precision=0, elem_id="icl_mmr_pool"
            )
    return selection["setting"], setting_b


def _result_columns() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with gr.Row():
        with gr.Column():
            out["summary"] = gr.Markdown(elem_id="icl_summary")
            out["table"] = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True, elem_id="icl_table")
            out["prompt"] = gr.Textbox(label="Prompt", lines=12, elem_id="icl_prompt", buttons=["copy"])
        with gr.Column(visible=False) as out["column_b"]:
            out["summary_b"] = gr.Markdown(elem_id="icl_summary_b")
            out["table_b"] = gr.Dataframe(headers=ROW_COLUMNS, interactive=False, wrap=True)
            out["prompt_b"] = gr.Textbox(label="Prompt", lines=12)
    return out


def _upload_panel() -> UploadPanel:
    with gr.Accordion("Add an example bank or test set (reviewers and admins)", open=False, visible=False) as box:
        gr.Markdown(
            f'JSON Lines, one `{{"input", "output", "category"?}}` object a line, at most '
            f"{service.UPLOAD_MAX_BYTES // 10**6} MB. Every line is checked before anything is stored."
        )
        with gr.Row():
            file = gr.File(label="JSONL file", file_types=[".jsonl", ".json"], elem_id="icl_upload_file")
            with gr.Column():
                name = gr.Textbox(label="Name (blank: the file name)", elem_id="icl_upload_name")
                kind = gr.Radio(["bank", "tests"], value="tests", label="Kind", elem_id="icl_upload_kind")
                replace = gr.Checkbox(False, label="Replace a set with the same name")
                button = gr.Button("Store the set", elem_id="icl_upload")
    return UploadPanel(box, file, name, kind, replace, button)


def _layout(ctx: AppContext) -> IclView:
    gr.Markdown(
        "Choose in-context examples for a test case as CoFe does (structural similarity, "
        "diversity, complexity) or with a baseline, and inspect what each choice covers."
    )
    with gr.Row():
        bank = gr.Dropdown([], label="Example bank", elem_id="icl_bank", allow_custom_value=True)
        tests = gr.Dropdown([], label="Test set", elem_id="icl_tests", allow_custom_value=True)
        category = gr.Dropdown([""], value="", label="Category", elem_id="icl_category")
        query = gr.Textbox(label="Search inputs", elem_id="icl_query")
    cases = gr.Dropdown([], label="Test case", elem_id="icl_case", allow_custom_value=True)
    selection: dict[str, Any] = {"bank": bank, "tests": tests, "line": cases}
    setting, setting_b = _selector_inputs(selection)
    setting_help = gr.Markdown(HELP["full_similarity"])
    with gr.Row():
        run = gr.Button("Select examples", variant="primary", elem_id="icl_run")
        set_table = gr.Button("Table 2 over the test set", elem_id="icl_set_table")
    message = gr.Markdown(elem_id="icl_message")
    set_summary = gr.Markdown(elem_id="icl_set_summary")
    results = _result_columns()
    item = gr.State(None)
    gr.Markdown("### Ask a model")
    models = build_ask_model(ctx, BENCHMARK, _item_of, item, api_name="icl_ask", elem_id="icl-ask-model")
    upload = _upload_panel()
    return IclView(
        bank,
        tests,
        category,
        query,
        cases,
        setting,
        setting_b,
        setting_help,
        selection,
        run,
        set_table,
        message,
        set_summary,
        results,
        item,
        models,
        upload,
    )


def case_request(values: dict[str, Any], setting: str, weights: bool = True) -> service.CaseRequest:
    """A CaseRequest from the tab's inputs (by field name); ``weights=False`` keeps the preset's weights (the
    matching variant, when the second selector is a CoFe preset, carries over)."""
    if not values["bank"] or not values["tests"] or values["line"] is None:
        raise ValidationError("Choose an example bank, a test set and a test case.")
    switch = {"on": True, "off": False}
    matching = values.get("matching") or "both"
    return service.CaseRequest(
        bank=values["bank"],
        tests=values["tests"],
        line=int(values["line"]),
        setting=setting,
        n=int(values["n"] or 10),
        order=values["order"],
        seed=int(values["seed"] or 0),
        fictional=bool(values["fictional"]),
        w_p=values["w_p"] if weights else None,
        w_s=values["w_s"] if weights else None,
        w_c=values["w_c"] if weights else None,
        diversity=switch.get(values["diversity"]),
        primitive_once=switch.get(values["primitive_once"]) if weights else None,
        matching=matching if setting in PRESET_HELP else None,
        mmr_lambda=_number(values.get("mmr_lambda"), 0.5),
        mmr_pool=int(_number(values.get("mmr_pool"), 100)),
    )


def _number(value: Any, default: float) -> float:
    return default if value is None else float(value)


def _embedding_model(ctx: AppContext, setting: str) -> str | None:
    return ctx.settings.embedding_model if setting in {"embedding", "mmr"} else None


def _select(ctx: AppContext, v: IclView, data: dict, user: str | None) -> dict:
    values = {name: data[component] for name, component in v.selection.items()}
    request = case_request(values, values["setting"])
    view = service.select_case(ctx, user, request)
    r, name_b = v.results, data[v.setting_b]
    out: dict[Any, Any] = {
        v.message: "",
        r["summary"]: case_markdown(view, _embedding_model(ctx, values["setting"])),
        r["table"]: pd.DataFrame(view.rows(), columns=ROW_COLUMNS),
        r["prompt"]: view.result.prompt,
        v.item: {
            "tests": values["tests"],
            "line": int(values["line"]),
            "setting": request.variant,
            "prompt": view.result.prompt,
            "truth": view.result.ground_truth,
            "category": view.result.test.category,
        },
        r["column_b"]: gr.update(visible=bool(name_b)),
        r["summary_b"]: "",
        r["table_b"]: pd.DataFrame(columns=ROW_COLUMNS),
        r["prompt_b"]: "",
    }
    if name_b:  # the second selector runs with its preset's weights and diversity "preset"
        view_b = service.select_case(ctx, user, case_request({**values, "diversity": "preset"}, name_b, False))
        out[r["summary_b"]] = f"#### {esc(name_b)}\n\n" + case_markdown(view_b, _embedding_model(ctx, name_b))
        out[r["table_b"]] = pd.DataFrame(view_b.rows(), columns=ROW_COLUMNS)
        out[r["prompt_b"]] = view_b.result.prompt
    return out


def _messages(message: gr.Markdown) -> Callable[[Callable[..., dict]], Callable[..., dict]]:
    """Answer a person's mistake in ``message`` instead of raising: the outputs they were looking at stay as they
    were, no status badge covers anything, and the server log gets one line, not a traceback."""

    def decorate(fn: Callable[..., dict]) -> Callable[..., dict]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> dict:
            try:
                return fn(*args, **kwargs)
            except CompStudioError as exc:
                log.info("in-context tab: %s", exc)
                return {message: f"**Not done:** {esc(exc)}"}

        return wrapper

    return decorate


def build_icl_tab(ctx: AppContext) -> TabHandle:
    with gr.Tab("In-context examples", id="icl", visible=False) as tab:
        v = _layout(ctx)
    shown = _messages(v.message)

    def cases_of(tests_name: str | None, cat: str, text_query: str, user: str | None) -> dict:
        """The category and test-case choices of one test set (filled with the set, never by a second call)."""
        if not tests_name:
            return {v.category: gr.update(choices=[""], value=""), v.cases: gr.update(choices=[], value=None)}
        cats = service.categories(ctx, user, tests_name)
        cat = cat if cat in cats else ""
        rows = service.search_cases(ctx, user, tests_name, cat, text_query or "")
        choices = [(f"{r['line']}: [{r['category']}] {r['input']}", r["line"]) for r in rows]
        return {
            v.category: gr.update(choices=["", *cats], value=cat),
            v.cases: gr.update(choices=choices, value=choices[0][1] if choices else None),
        }

    @ui_errors
    def on_load(request: gr.Request) -> dict:
        user = caller(ctx, request)
        found = service.sets(ctx, user)
        banks, test_sets = found["bank"], found["tests"]
        try:
            names = service.answer_models(ctx, user)
        except PermissionDenied:  # annotators may browse selections; asking a model needs a reviewer
            names = []
        first_tests = test_sets[0] if test_sets else None
        return {
            v.bank: gr.update(choices=banks, value=banks[0] if banks else None),
            v.tests: gr.update(choices=test_sets, value=first_tests),
            v.models: gr.update(choices=names, value=names[0] if names else None),
            v.upload.box: gr.update(visible=service.can_upload(ctx, user)),
            **cases_of(first_tests, "", "", user),
        }

    @ui_errors
    def on_tests(tests_name: str | None, cat: str, text_query: str, request: gr.Request) -> dict:
        return cases_of(tests_name, cat, text_query, caller(ctx, request))

    @shown
    def on_run(data: dict, request: gr.Request) -> dict:
        return _select(ctx, v, data, caller(ctx, request))

    @shown
    def on_set_table(data: dict, request: gr.Request) -> dict:
        values = {name: data[component] for name, component in v.selection.items()}
        table = service.set_table(ctx, caller(ctx, request), case_request({**values, "line": 0}, values["setting"]))
        return {
            v.message: "",
            v.set_summary: f"#### {esc(values['setting'])} over {esc(values['tests'])}\n\n" + table["markdown"],
        }

    @shown
    def on_upload(path: str | None, name: str, kind: str, replace: bool, request: gr.Request) -> dict:
        user = caller(ctx, request)
        stored = service.upload_set(ctx, user, path, name, kind, replace)
        found = service.sets(ctx, user)
        target = v.bank if stored["kind"] == "bank" else v.tests
        return {
            v.message: f"Stored the {esc(stored['kind'])} set **{esc(stored['name'])}** ({stored['items']:,} lines).",
            v.bank: gr.update(choices=found["bank"]),
            v.tests: gr.update(choices=found["tests"]),
            target: gr.update(value=stored["name"]),
            **(cases_of(stored["name"], "", "", user) if stored["kind"] == "tests" else {}),
        }

    _wire(ctx, v, on_tests, on_run, on_set_table, on_upload)
    # a model saved in the Models tab is offered when the tab is next opened, as in Planning and VQA (issue 44 §7)
    offer_models_on_open(ctx, tab, [v.models], "icl_models_open", names_of=service.answer_models)
    outputs = [v.bank, v.tests, v.models, v.upload.box, v.category, v.cases]
    return TabHandle(tab, on_load=(on_load, outputs))


def _wire(ctx: AppContext, v: IclView, on_tests: Any, on_run: Any, on_set_table: Any, on_upload: Any) -> None:
    private: EventOptions = {"api_visibility": "private", "queue": False}
    case_inputs, case_outputs = [v.tests, v.category, v.query], [v.category, v.cases]
    # a person's choice (.input): a set filled by the page load or an upload comes with its cases already,
    # so no second call follows it (issue 17: the load's change used to cost every page a round trip)
    listen(ctx, v.tests.input, on_tests, case_inputs, case_outputs, **private, api_name="icl_ui_tests")
    listen(ctx, v.category.input, on_tests, case_inputs, case_outputs, **private, api_name="icl_ui_tests_category")
    listen(ctx, v.query.submit, on_tests, case_inputs, case_outputs, **private, api_name="icl_ui_tests_query")
    weights = [v.selection[name] for name in ("w_p", "w_s", "w_c")]
    listen(
        ctx,
        v.setting.change,
        _preset_fields,
        [v.setting],
        [v.setting_help, *weights],
        **private,
        api_name="icl_ui_setting",
    )
    listen(
        ctx,
        v.run.click,
        on_run,
        {*v.selection.values(), v.setting_b},
        [v.message, *v.results.values(), v.item],
        api_visibility="private",
        concurrency_limit=2,
        show_progress="minimal",
        api_name="icl_ui_run",
    )
    listen(
        ctx,
        v.set_table.click,
        on_set_table,
        set(v.selection.values()),
        [v.message, v.set_summary],
        api_visibility="private",
        concurrency_limit=1,
        show_progress="minimal",
        api_name="icl_ui_set_table",
    )
    up = v.upload
    listen(
        ctx,
        up.button.click,
        on_upload,
        [up.file, up.name, up.kind, up.replace],
        [v.message, v.bank, v.tests, v.category, v.cases],
        api_visibility="private",
        concurrency_limit=1,
        show_progress="minimal",
        api_name="icl_ui_upload",
    )


def _preset_fields(setting: str) -> list[Any]:
    """The selector's help and, for a CoFe preset, its w_p, w_s, w_c in the weight fields (baselines leave them)."""
    preset = PRESETS.get(setting)
    if preset is None:
        return [HELP.get(setting, ""), gr.skip(), gr.skip(), gr.skip()]
    return [HELP.get(setting, ""), preset.w_p, preset.w_s, preset.w_c]


def _register_api(ctx: AppContext) -> None:
    """Named JSON endpoints: icl_sets, icl_cases, icl_select, icl_table, icl_answer."""

    @ui_errors
    def icl_sets(request: gr.Request) -> dict:
        """The stored example banks and test sets: {"bank": [...], "tests": [...]}."""
        return service.sets(ctx, caller(ctx, request))

    @ui_errors
    def icl_cases(tests: str, category: str, query: str, request: gr.Request) -> list[dict]:
        """Test cases of a test set (``line``, ``category``, ``input``), filtered by category and text."""
        return service.search_cases(ctx, caller(ctx, request), tests, category or "", query or "")

    @ui_errors
    def icl_select(selection: dict, request: gr.Request) -> dict:
        """One selection: {bank, tests, line, setting?, n?, order?, seed?, fictional?, w_p?, w_s?, w_c?,
        diversity?, primitive_once?, matching?, mmr_lambda?, mmr_pool?}; returns the chosen examples,
        statistics, prompt, ground truth, and whether the matching variant keeps the test case."""
        return service.select_case_json(ctx, caller(ctx, request), selection)

    @ui_errors
    def icl_table(selection: dict, request: gr.Request) -> dict:
        """Table 2 over a whole test set: the fields of icl_select without ``line``; returns the table per
        category, its Markdown, and how many test cases the matching variant keeps."""
        return service.set_table_json(ctx, caller(ctx, request), selection)

    @ui_errors
    def icl_answer(selection: dict, model: str, request: gr.Request) -> dict:
        """A text model's live answer to the prompt of one selection (reviewers): exact match per the paper."""
        from backend.inference import service as inference

        user = caller(ctx, request)
        service.check_answer_model(ctx, user, model)
        chosen = service.select_case_json(ctx, user, selection)
        variant = service.CaseRequest(**{**selection, "line": int(selection["line"])}).variant
        value = {
            "tests": selection["tests"],
            "line": int(selection["line"]),
            "setting": variant,
            "prompt": chosen["prompt"],
            "truth": chosen["ground_truth"],
            "category": chosen["test"]["category"],
        }
        return asdict(inference.ask_model(ctx, user, BENCHMARK, model, _item_of(value)))

    for name, fn in {"icl_sets": icl_sets, "icl_cases": icl_cases, "icl_select": icl_select}.items():
        endpoint(ctx, fn, api_name=name, concurrency_limit=2)
    endpoint(ctx, icl_table, api_name="icl_table", concurrency_limit=1)
    endpoint(ctx, icl_answer, api_name="icl_answer", concurrency_id="models", concurrency_limit=1)


def _item_of(value: dict[str, Any] | None) -> EvalItem:
    if not value:
        raise gr.Error("Select examples for a test case first.")
    return eval_item(
        value["tests"], value["line"], value["setting"], value["prompt"], value["truth"], value.get("category", "")
    )
