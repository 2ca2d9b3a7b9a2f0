"""README.md's YAML front matter makes the repository a valid Gradio Space.

The accepted fields and values are those documented by Hugging Face:
https://huggingface.co/docs/hub/spaces-config-reference (fields, colours, SDKs) and
https://huggingface.co/docs/hub/spaces-oauth (OAuth scopes, expiry limits, organisation restriction).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gradio
import yaml

ROOT = Path(__file__).resolve().parent.parent

DOCUMENTED_FIELDS = {
    "title", "emoji", "colorFrom", "colorTo", "sdk", "python_version", "sdk_version", "suggested_hardware",
    "suggested_storage", "app_file", "app_build_command", "app_port", "base_path", "fullWidth", "header",
    "short_description", "models", "datasets", "tags", "thumbnail", "pinned", "hf_oauth", "hf_oauth_scopes",
    "hf_oauth_expiration_minutes", "hf_oauth_authorized_org", "disable_embedding", "startup_duration_timeout",
    "custom_headers", "preload_from_hub", "license",
}  # fmt: skip
COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
SDKS = {"gradio", "docker", "static", "streamlit"}
OAUTH_SCOPES = {
    "openid", "profile", "email", "read-billing", "read-repos", "write-repos", "manage-repos", "inference-api",
    "write-discussions",
}  # fmt: skip
MAX_OAUTH_MINUTES = 43200  # 30 days
MAX_SHORT_DESCRIPTION = 60


def front_matter(text: str) -> dict[str, Any] | None:
    match = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    return yaml.safe_load(match.group(1)) if match else None


def front_matter_problems(text: str, root: Path = ROOT) -> list[str]:
    """Every way ``text`` (a README) fails to be a valid Gradio Space configuration for this repo."""
    meta = front_matter(text)
    if not isinstance(meta, dict):
        return ["README.md must start with a YAML block between two '---' lines"]
    problems = [f"undocumented field {key!r}" for key in meta if key not in DOCUMENTED_FIELDS]

    def check(ok: bool, message: str) -> None:
        if not ok:
            problems.append(message)

    check(meta.get("sdk") in SDKS and meta.get("sdk") == "gradio", f"sdk must be gradio, not {meta.get('sdk')!r}")
    check(str(meta.get("sdk_version")) == gradio.__version__, f"sdk_version must be {gradio.__version__}")
    requirements = (root / "requirements.txt").read_text(encoding="utf-8")
    check(f"gradio[oauth]=={meta.get('sdk_version')}" in requirements, "sdk_version must match requirements.txt")
    app_file = meta.get("app_file")
    check(isinstance(app_file, str) and (root / app_file).is_file(), f"app_file {app_file!r} is not a file")
    check(bool(re.fullmatch(r"3\.\d+(\.\d+)?", str(meta.get("python_version", "")))), "python_version must be 3.x")
    check(isinstance(meta.get("title"), str) and bool(meta["title"].strip()), "title is required")
    emoji = str(meta.get("emoji", ""))
    check(0 < len(emoji) <= 2 and not emoji.isascii(), f"emoji must be one emoji, not {emoji!r}")
    for key in ("colorFrom", "colorTo"):
        check(meta.get(key) in COLOURS, f"{key} must be one of {sorted(COLOURS)}")
    short = meta.get("short_description", "")
    check(isinstance(short, str) and len(short) <= MAX_SHORT_DESCRIPTION, "short_description: at most 60 characters")
    check(meta.get("hf_oauth") is True, "hf_oauth must be true (Sign in with Hugging Face)")
    scopes = meta.get("hf_oauth_scopes", [])
    check(isinstance(scopes, list) and set(scopes) <= OAUTH_SCOPES, f"hf_oauth_scopes must be among {OAUTH_SCOPES}")
    minutes = meta.get("hf_oauth_expiration_minutes", 480)
    check(isinstance(minutes, int) and 0 < minutes <= MAX_OAUTH_MINUTES, "hf_oauth_expiration_minutes: 1..43200")
    orgs = meta.get("hf_oauth_authorized_org", [])
    check(isinstance(orgs, str) or all(isinstance(o, str) for o in orgs), "hf_oauth_authorized_org: name(s)")
    for key in ("pinned", "fullWidth", "disable_embedding"):
        check(key not in meta or isinstance(meta[key], bool), f"{key} must be true or false")
    return problems


def test_readme_front_matter_is_a_valid_gradio_space():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert front_matter_problems(text) == []
    assert "## Deploy on Hugging Face Spaces" in text


def test_the_validator_catches_mistakes(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / "requirements.txt").write_text(f"gradio[oauth]=={gradio.__version__}\n")
    good = (
        f"---\ntitle: X\nemoji: 🧩\ncolorFrom: indigo\ncolorTo: green\nsdk: gradio\nsdk_version: {gradio.__version__}\n"
        "python_version: '3.11'\napp_file: app.py\nhf_oauth: true\nhf_oauth_scopes: [openid, profile]\n"
        "hf_oauth_expiration_minutes: 480\n---\n# X\n"
    )
    assert front_matter_problems(good, tmp_path) == []
    bad = (
        good.replace("colorTo: green", "colorTo: teal")
        .replace("480", "50000")
        .replace("[openid, profile]", "[admin]")
        .replace("app_file: app.py", "app_file: main.py\nsdk_versoin: 1")
    )
    problems = front_matter_problems(bad, tmp_path)
    assert len(problems) == 5, problems
    assert front_matter_problems("# no front matter\n", tmp_path) != []
