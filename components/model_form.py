"""The Models tab's registry editor (issue 44 §11): a form for an entry (backend, path or Hub id, base URLs, batch
size and concurrency, the common options), **Test** (what ``compstudio models test`` does:
:func:`backend.inference.service.probe_entry`), and the entry as JSON as an advanced view.

Handlers read the fields, call ``backend.inference`` (which checks the caller's role) and format the outcome."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from backend.context import AppContext
from backend.inference import service
from backend.inference.model_form import ModelForm, entry_from_form, form_from_entry
from backend.inference.registry import PROMPT_STYLES, SCORING
from components.access import listen
from components.common import EventOptions, caller, esc
from components.feedback import QUIET, Mistake, shown_in

#: the form starts empty (an openai entry), with an example in each field's placeholder
BLANK = ModelForm("", "openai")
PRIVATE_FAST: EventOptions = {"api_visibility": "private", "queue": False}


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


@dataclass
class ModelFormPanel:
    start_from: gr.Dropdown
    fields: dict[str, Any]  # ModelForm field name -> component
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


def _number(value: int, label: str, elem_id: str) -> gr.Number:
    return gr.Number(value, label=label, elem_id=elem_id, precision=0, minimum=1, min_width=110)


def _layout(ctx: AppContext) -> ModelFormPanel:
    backends = sorted(ctx.models.backends)
    with gr.Accordion("Add, edit or test a model", open=False, elem_id="model-form"):
        gr.Markdown("Fill in the form, **Test** it (one short question to the model), then **Save** it (admins).")
        start_from = gr.Dropdown([], label="Start from a registered model", elem_id="model-form-from")
        with gr.Row():
            name = gr.Textbox(label="Name", placeholder="my-vllm", elem_id="model-form-name")
            backend = gr.Dropdown(backends, value=BLANK.backend, label="Backend", elem_id="model-form-backend")
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
    fields = {
        "name": name,
        "backend": backend,
        "path": path,
        "base_urls": urls,
        "api_key_env": key,
        "batch_size": batch,
        "concurrency": concurrency,
        "max_new_tokens": tokens,
        "frames_per_video": frames,
        "max_image_side": side,
        "prompt_style": prompt,
        "scoring": scoring,
        "dtype": dtype,
        "device": device,
        "description": description,
    }
    return ModelFormPanel(
        start_from, fields, other_options, save, test, test_result, entry, save_json, json_to_form, delete_name,
        delete, message,
    )  # fmt: skip


def read_form(p: ModelFormPanel, data: dict) -> ModelForm:
    """The form's values (an emptied number field reads as the field's default)."""
    defaults = ModelForm("", "")
    values = {k: data[c] for k, c in p.fields.items()}
    for k, v in values.items():
        if v is None or v == "":
            values[k] = getattr(defaults, k)
    return ModelForm(**values, other_options=data[p.other_options] or {})


def fill_form(p: ModelFormPanel, form: ModelForm) -> dict:
    out: dict[Any, Any] = {c: getattr(form, k) for k, c in p.fields.items()}
    out[p.other_options] = form.other_options
    out[p.entry] = json.dumps(entry_from_form(form), indent=2)
    return out


def layout_model_form(ctx: AppContext) -> ModelFormPanel:
    """The editor's components (wired by :func:`wire_model_form` once the tab knows what a save refreshes)."""
    return _layout(ctx)


def wire_model_form(
    ctx: AppContext,
    p: ModelFormPanel,
    view: Callable[[str | None, str | None], dict],
    view_outputs: list[Any],
    zone: gr.Textbox,
) -> None:
    """The editor's events; ``view(name, zone)`` refreshes the tab's tables (``view_outputs``) after a save or a
    delete (``zone``: the browser's time zone, components/readable.py)."""
    form_inputs = {*p.fields.values(), p.other_options, zone}

    @shown_in(p.message)
    def on_start_from(chosen: str | None, request: gr.Request) -> dict:
        rows = {row["name"]: row for row in service.model_table(ctx, caller(ctx, request))}
        if not chosen or chosen not in rows:
            return {p.message: ""}
        return {**fill_form(p, form_from_entry(rows[chosen])), p.message: "", p.test_result: ""}

    def on_form_edit(data: dict) -> Any:
        try:
            return json.dumps(entry_from_form(read_form(p, data)), indent=2)
        except (TypeError, ValueError):  # a number being typed
            return gr.update()

    @shown_in(p.message)
    def on_json_to_form(text: str) -> dict:
        return {**fill_form(p, form_from_entry(_parse(text))), p.message: "The form now shows the JSON's entry."}

    @shown_in(p.message)
    def on_save(data: dict, request: gr.Request) -> dict:
        name = caller(ctx, request)
        spec = service.save_model(ctx, name, entry_from_form(read_form(p, data)))
        return {p.message: f"Saved **{esc(spec.name)}**.", **view(name, data[zone])}

    @shown_in(p.test_result)
    def on_test(data: dict, request: gr.Request) -> dict:
        result = service.probe_entry(ctx, caller(ctx, request), entry_from_form(read_form(p, data)))
        return {p.test_result: probe_markdown(result)}

    @shown_in(p.message)
    def on_save_json(text: str, where: str | None, request: gr.Request) -> dict:
        spec = service.save_model(ctx, caller(ctx, request), _parse(text))
        return {p.message: f"Saved **{esc(spec.name)}**.", **view(caller(ctx, request), where)}

    @shown_in(p.message)
    def on_delete(name_to_delete: str, where: str | None, request: gr.Request) -> dict:
        if not name_to_delete.strip():
            raise Mistake("Enter the name of the model to delete.")
        service.delete_model(ctx, caller(ctx, request), name_to_delete.strip())
        return {p.message: f"Deleted **{esc(name_to_delete.strip())}**.", **view(caller(ctx, request), where)}

    filled = [*p.fields.values(), p.other_options, p.entry, p.message, p.test_result]
    private: EventOptions = {"api_visibility": "private"}
    listen(ctx, p.start_from.change, on_start_from, [p.start_from], filled, **QUIET, **PRIVATE_FAST,
           api_name="models_ui_form_from")  # fmt: skip
    listen(ctx, [c.input for c in p.fields.values()], on_form_edit, form_inputs, p.entry, show_progress="hidden",
           **PRIVATE_FAST, api_name="models_ui_form_edit")  # fmt: skip
    listen(ctx, p.json_to_form.click, on_json_to_form, [p.entry], filled, **QUIET, **PRIVATE_FAST,
           api_name="models_ui_json_to_form")  # fmt: skip
    listen(ctx, p.save.click, on_save, form_inputs, [p.message, *view_outputs], **QUIET, **private,
           api_name="models_ui_form_save")  # fmt: skip
    listen(ctx, p.test.click, on_test, form_inputs, [p.test_result], **QUIET, **private,
           concurrency_id="models", concurrency_limit=1, api_name="models_ui_test")  # fmt: skip
    listen(ctx, p.save_json.click, on_save_json, [p.entry, zone], [p.message, *view_outputs], **QUIET, **private,
           api_name="models_ui_save")  # fmt: skip
    listen(ctx, p.delete.click, on_delete, [p.delete_name, zone], [p.message, *view_outputs], **QUIET, **private,
           api_name="models_ui_delete")  # fmt: skip


def _parse(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Mistake(f"The entry is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Mistake('The entry must be one JSON object, e.g. {"name": "m", "backend": "random"}.')
    return data
