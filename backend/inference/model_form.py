"""The Models tab's form (issue 44 §11): a registry entry as the fields a researcher fills in, and back.

:class:`ModelForm` holds the common fields of a :class:`~backend.inference.registry.ModelSpec` with the openai
backend's two options (``base_url``, one or several replicas, and ``api_key_env``) as fields of their own; every
other option rides along unchanged in ``other_options`` (the JSON view shows and edits them). The form is checked
as the registry checks an entry (:func:`backend.inference.registry.spec_from_dict`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from backend.inference.registry import ModelSpec

FORM_OPTIONS = ("base_url", "api_key_env")


@dataclass
class ModelForm:
    """What the form shows; ``base_urls``: one URL per line or separated by commas (several: replicas)."""

    name: str
    backend: str
    path: str = ""
    base_urls: str = ""
    api_key_env: str = ""
    batch_size: int = 1
    concurrency: int = 1
    max_new_tokens: int = 32
    dtype: str = "auto"
    device: str = "auto"
    prompt_style: str = "chat"
    scoring: str = "generate"
    frames_per_video: int = 8
    max_image_side: int = 768
    description: str = ""
    other_options: dict[str, Any] = field(default_factory=dict)


def split_urls(text: str) -> list[str]:
    """The URLs of a text field: one per line or separated by commas or spaces.

    >>> split_urls(" http://a:8000/v1,\\nhttp://b:8000/v1 ")
    ['http://a:8000/v1', 'http://b:8000/v1']
    """
    return [url for url in re.split(r"[\s,]+", text or "") if url]


def entry_from_form(form: ModelForm) -> dict[str, Any]:
    """The registry entry (JSON object) the form describes; empty fields are left out of ``options``.

    >>> entry = entry_from_form(ModelForm("m", "openai", "Qwen/Qwen2-VL-7B-Instruct", "http://h:8000/v1", "KEY"))
    >>> entry["options"], entry["path"]
    ({'base_url': 'http://h:8000/v1', 'api_key_env': 'KEY'}, 'Qwen/Qwen2-VL-7B-Instruct')
    >>> entry_from_form(ModelForm("m", "openai", "x", "http://a/v1\\nhttp://b/v1"))["options"]["base_url"]
    ['http://a/v1', 'http://b/v1']
    """
    urls = split_urls(form.base_urls)
    options = {k: v for k, v in form.other_options.items() if k not in FORM_OPTIONS}
    if urls:
        options["base_url"] = urls[0] if len(urls) == 1 else urls
    if form.api_key_env.strip():
        options["api_key_env"] = form.api_key_env.strip()
    return {
        "name": form.name.strip(),
        "backend": form.backend,
        "path": form.path.strip(),
        "dtype": form.dtype.strip() or "auto",
        "device": form.device.strip() or "auto",
        "batch_size": int(form.batch_size),
        "max_new_tokens": int(form.max_new_tokens),
        "frames_per_video": int(form.frames_per_video),
        "max_image_side": int(form.max_image_side),
        "prompt_style": form.prompt_style,
        "scoring": form.scoring,
        "concurrency": int(form.concurrency),
        "description": form.description.strip(),
        "options": options,
    }


def form_from_entry(entry: dict[str, Any] | ModelSpec) -> ModelForm:
    """The form's fields for an entry (a registered spec, or a JSON object from the advanced view).

    >>> form = form_from_entry({"name": "m", "backend": "openai", "options": {"base_url": ["http://a", "http://b"]}})
    >>> form.base_urls, form.batch_size
    ('http://a\\nhttp://b', 1)
    """
    data = entry.as_dict() if isinstance(entry, ModelSpec) else dict(entry)
    defaults = ModelSpec(name=str(data.get("name", "")), backend=str(data.get("backend", ""))).as_dict()
    data = {**defaults, **data}
    options = dict(data.get("options") or {})
    urls = options.get("base_url") or []
    return ModelForm(
        name=str(data["name"]),
        backend=str(data["backend"]),
        path=str(data["path"] or ""),
        base_urls="\n".join(urls) if isinstance(urls, list | tuple) else str(urls),
        api_key_env=str(options.get("api_key_env") or ""),
        batch_size=int(data["batch_size"]),
        concurrency=int(data["concurrency"]),
        max_new_tokens=int(data["max_new_tokens"]),
        dtype=str(data["dtype"]),
        device=str(data["device"]),
        prompt_style=str(data["prompt_style"]),
        scoring=str(data["scoring"]),
        frames_per_video=int(data["frames_per_video"]),
        max_image_side=int(data["max_image_side"]),
        description=str(data["description"] or ""),
        other_options={k: v for k, v in options.items() if k not in FORM_OPTIONS},
    )
