"""The Models tab's registry editor (issue 44 §11): a form for an entry (backend, path or Hub id, base URLs, batch
size and concurrency, the common options), **Test** (what ``compstudio models test`` does:
:func:`backend.inference.service.probe_entry`), and the entry as JSON as an advanced view.

Handlers read the fields, call ``backend.inference`` (which checks the caller's role) and format the outcome; a
save or a delete refreshes the registry's tables (components/models/registry.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference import service
from backend.inference.model_form import ModelForm, entry_from_form, form_from_entry
from backend.inference.registry import PROMPT_STYLES, SCORING
from components.common import caller, esc
from components.events import FAST, Event, bind
from components.feedback import QUIET, Mistake, shown_in
from components.models.registry import ModelsView, view

#: the form starts empty (an openai entry); each empty field shows an example, greyed, until typed over
BLANK = ModelForm("", "openai")
QUICK = {**FAST, **QUIET}


def probe_markdown(result: dict[str, Any]) -> str:
    """A test's outcome as a person reads it: answered or not, in how long, the reply, the revision, what each
    replica serves, and the warnings first (model text escaped).

    >>> print(probe_markdown({"model": "m", "ok": True, "reply": "ready", "latency_ms": 12.0, "load_ms": 1.0,
    ...     "revision": "local:abc", "warnings": []}))
    ✅ **m answered** in 12 ms (loading: 1 ms): «ready»
    <BLANKLINE>
    Revision its answers are stored under: local:abc
    """
    lines = [f"> ⚠️ **Warning:** {esc(w)}" for w in result.get("warnings", [])]
    if result.get("ok"):
        head = f"✅ **{esc(result['model'])} answered** in {result.get('latency_ms', 0):.0f} ms"
        head += f" (loading: {result.get('load_ms', 0):.0f} ms): «{esc(result.get('reply'))}»"
    else:
        head = f"❌ **{esc(result['model'])} did not answer:** {esc(result.get('error'))}"
    lines.append(head)
    if result.get("revision"):
        lines.append(f"Revision its answers are stored under: {esc(result['revision'])}")
    replicas = result.get("replicas") or []
    if replicas:
        rows = ["| Replica | HTTP status | Serves | Server version |", "|---|---|---|---|"]
        for replica in replicas:
            served = ", ".join(esc(m.get("id")) for m in replica.get("served", [])) or "—"
            answer = replica.get("error") or replica.get("status")
            rows.append(f"| {esc(replica['url'])} | {esc(answer)} | {served} | {esc(replica.get('version') or '—')} |")
        lines.append("\n".join(rows))
    return "\n\n".join(lines)


@dataclass(frozen=True)
class FormFields:
    """The form's fields, each named as the :class:`ModelForm` field it shows."""

    name: gr.Textbox
    backend: gr.Dropdown
    path: gr.Textbox
    base_urls: gr.Textbox
    api_key_env: gr.Textbox
    batch_size: gr.Number
    concurrency: gr.Number
    max_new_tokens: gr.Number
    frames_per_video: gr.Number
    max_image_side: gr.Number
    prompt_style: gr.Dropdown
    scoring: gr.Dropdown
    dtype: gr.Textbox
    device: gr.Textbox
    description: gr.Textbox

    def named(self) -> list[tuple[str, Any]]:
        """(ModelForm field name, component), in the form's order."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]

    @property
    def components(self) -> list[Any]:
        return [component for _, component in self.named()]


@dataclass(frozen=True)
class ModelFormPanel:
    start_from: gr.Dropdown
    fields: FormFields
    other_options: gr.State
    save: gr.Button
    test: gr.Button
    test_result: gr.Markdown
    entry: gr.Code
    save_json: gr.Button
    json_to_form: gr.Button
    delete_name: gr.Textbox
    delete: gr.Button
    message: gr.Markdown

    @property
    def filled(self) -> list[Any]:
        """What filling the form from an entry changes."""
        return [*self.fields.components, self.other_options, self.entry, self.message, self.test_result]


def _number(value: int, label: str, elem_id: str) -> gr.Number:
    return gr.Number(value, label=label, elem_id=elem_id, precision=0, minimum=1, min_width=110)


def _where_fields(ctx: AppContext) -> tuple[Any, ...]:
    """The first two rows: name, backend, path; base URLs and the API key's variable."""
    with gr.Row():
        name = gr.Textbox(label="Name", placeholder="my-vllm", elem_id="model-form-name")
        backend = gr.Dropdown(
            sorted(ctx.models.backends), value=BLANK.backend, label="Backend", elem_id="model-form-backend"
        )
        path = gr.Textbox(
            label="Path or Hub id (openai: the served model's name)",
            placeholder="Qwen/Qwen2-VL-7B-Instruct",
            elem_id="model-form-path",
            scale=2,
        )
    with gr.Row():
        urls = gr.Textbox(
            label="Base URLs (openai; one per line: replicas)",
            placeholder="http://127.0.0.1:8000/v1",
            lines=2,
            elem_id="model-form-urls",
            scale=2,
        )
        key = gr.Textbox(
            label="API key from the environment variable", placeholder="OPENAI_API_KEY", elem_id="model-form-key"
        )
    return name, backend, path, urls, key


def _fields(ctx: AppContext) -> FormFields:
    name, backend, path, urls, key = _where_fields(ctx)
    with gr.Row():
        batch = _number(1, "Batch size", "model-form-batch")
        concurrency = _number(1, "Concurrency", "model-form-concurrency")
        tokens = _number(32, "Max new tokens", "model-form-tokens")
        frames = _number(8, "Frames per video", "model-form-frames")
        side = _number(768, "Longest image side (px)", "model-form-side")
    with gr.Row():
        prompt = gr.Dropdown(
            list(PROMPT_STYLES), value="chat", label="Prompt style", elem_id="model-form-prompt", min_width=140
        )
        scoring = gr.Dropdown(
            list(SCORING), value="generate", label="Multiple choice by", elem_id="model-form-scoring", min_width=140
        )
        dtype = gr.Textbox("auto", label="Weights' dtype", elem_id="model-form-dtype", min_width=110)
        device = gr.Textbox("auto", label="Device", elem_id="model-form-device", min_width=110)
    description = gr.Textbox("", label="Description", elem_id="model-form-description")
    return FormFields(
        name, backend, path, urls, key, batch, concurrency, tokens, frames, side, prompt, scoring, dtype, device,
        description,
    )  # fmt: skip


def layout(ctx: AppContext) -> ModelFormPanel:
    with gr.Accordion("Add, edit or test a model", open=False, elem_id="model-form"):
        gr.Markdown("Fill in the form, **Test** it (one short question to the model), then **Save** it (admins).")
        start_from = gr.Dropdown([], label="Start from a registered model", elem_id="model-form-from")
        form_fields = _fields(ctx)
        other_options = gr.State({})
        with gr.Row():
            test = gr.Button("Test", elem_id="model-test")
            save = gr.Button("Save model", variant="primary", elem_id="model-form-save")
        test_result = gr.Markdown(elem_id="model-test-result")
        message = gr.Markdown(elem_id="model-edit-message")
        with gr.Accordion("Advanced: the entry as JSON", open=False, elem_id="model-json"):
            entry = gr.Code(json.dumps(entry_from_form(BLANK), indent=2), language="json", label="Model entry (JSON)")
            with gr.Row():
                json_to_form = gr.Button("Fill the form from the JSON", elem_id="model-json-to-form")
                save_json = gr.Button("Save the JSON", elem_id="model-save")
            with gr.Row():
                delete_name = gr.Textbox(label="Model name to delete", elem_id="model-delete-name")
                delete = gr.Button("Delete model", variant="stop", elem_id="model-delete")
    return ModelFormPanel(
        start_from, form_fields, other_options, save, test, test_result, entry, save_json, json_to_form, delete_name,
        delete, message,
    )  # fmt: skip


def read_form(p: ModelFormPanel, data: dict) -> ModelForm:
    """The form's values (an emptied number field reads as the field's default)."""
    defaults = ModelForm("", "")
    values = {k: data[c] for k, c in p.fields.named()}
    for k, v in values.items():
        if v is None or v == "":
            values[k] = getattr(defaults, k)
    return ModelForm(**values, other_options=data[p.other_options] or {})


def fill_form(p: ModelFormPanel, form: ModelForm) -> dict:
    out: dict[Any, Any] = {c: getattr(form, k) for k, c in p.fields.named()}
    out[p.other_options] = form.other_options
    out[p.entry] = json.dumps(entry_from_form(form), indent=2)
    return out


def parse_entry(text: str) -> dict:
    """The JSON view's entry (a named mistake when it is not one JSON object)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Mistake(f"The entry is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Mistake('The entry must be one JSON object, e.g. {"name": "m", "backend": "random"}.')
    return data


def on_start_from(ctx: AppContext, p: ModelFormPanel, chosen: str | None, request: gr.Request) -> dict:
    rows = {row["name"]: row for row in service.model_table(ctx, caller(ctx, request))}
    if not chosen or chosen not in rows:
        return {p.message: ""}
    return {**fill_form(p, form_from_entry(rows[chosen])), p.message: "", p.test_result: ""}


def on_form_edit(ctx: AppContext, p: ModelFormPanel, data: dict) -> Any:
    """The JSON view follows the form as it is typed in."""
    del ctx
    try:
        return json.dumps(entry_from_form(read_form(p, data)), indent=2)
    except (TypeError, ValueError):  # a number being typed
        return gr.update()


def on_json_to_form(ctx: AppContext, p: ModelFormPanel, text: str) -> dict:
    del ctx
    return {**fill_form(p, form_from_entry(parse_entry(text))), p.message: "The form now shows the JSON's entry."}


def on_test(ctx: AppContext, p: ModelFormPanel, data: dict, request: gr.Request) -> dict:
    result = service.probe_entry(ctx, caller(ctx, request), entry_from_form(read_form(p, data)))
    return {p.test_result: probe_markdown(result)}


def on_save(ctx: AppContext, p: ModelFormPanel, v: ModelsView, data: dict, request: gr.Request) -> dict:
    name = caller(ctx, request)
    spec = service.save_model(ctx, name, entry_from_form(read_form(p, data)))
    return {p.message: f"Saved **{esc(spec.name)}**.", **view(ctx, v, name, data[v.zone])}


def on_save_json(
    ctx: AppContext, p: ModelFormPanel, v: ModelsView, text: str, where: str | None, request: gr.Request
) -> dict:
    spec = service.save_model(ctx, caller(ctx, request), parse_entry(text))
    return {p.message: f"Saved **{esc(spec.name)}**.", **view(ctx, v, caller(ctx, request), where)}


def on_delete(
    ctx: AppContext, p: ModelFormPanel, v: ModelsView, name_to_delete: str, where: str | None, request: gr.Request
) -> dict:
    if not name_to_delete.strip():
        raise Mistake("Enter the name of the model to delete.")
    service.delete_model(ctx, caller(ctx, request), name_to_delete.strip())
    return {p.message: f"Deleted **{esc(name_to_delete.strip())}**.", **view(ctx, v, caller(ctx, request), where)}


def events(ctx: AppContext, p: ModelFormPanel, v: ModelsView) -> list[Event]:
    """``v``: the registry's panel, whose tables a save or a delete refreshes (in the browser's time zone)."""
    said, tested = shown_in(p.message), shown_in(p.test_result)
    form_inputs = {*p.fields.components, p.other_options, v.zone}
    refreshed = [p.message, *v.view]
    edit = bind(on_form_edit, ctx, p)
    return [
        Event("models_ui_form_from", "reviewer", said(bind(on_start_from, ctx, p)), p.start_from.change,
              [p.start_from], p.filled, QUICK),
        Event("models_ui_form_edit", "reviewer", edit, [c.input for c in p.fields.components], form_inputs, p.entry,
              {"queue": False, "show_progress": "hidden"}),
        Event("models_ui_json_to_form", "reviewer", said(bind(on_json_to_form, ctx, p)), p.json_to_form.click,
              [p.entry], p.filled, QUICK),
        Event("models_ui_form_save", "admin", said(bind(on_save, ctx, p, v)), p.save.click, form_inputs, refreshed,
              QUIET),
        Event("models_ui_test", "reviewer", tested(bind(on_test, ctx, p)), p.test.click, form_inputs,
              [p.test_result], QUIET, model=True),
        Event("models_ui_save", "admin", said(bind(on_save_json, ctx, p, v)), p.save_json.click, [p.entry, v.zone],
              refreshed, QUIET),
        Event("models_ui_delete", "admin", said(bind(on_delete, ctx, p, v)), p.delete.click,
              [p.delete_name, v.zone], refreshed, QUIET),
    ]  # fmt: skip
