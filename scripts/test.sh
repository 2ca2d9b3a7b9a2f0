#!/usr/bin/env bash
# The test command: lint, format check, type check, then every test (unit, doctests, real app over HTTP, real browser, load, crash).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy  # configured in pyproject.toml ([tool.mypy]): backend/, components/, app.py
.venv/bin/python -m pytest "$@"
