#!/usr/bin/env bash
# One command for a fresh machine: Debian's chromium (browser tests), a venv and every Python package.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
fi
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements.txt
.venv/bin/python -m pip install -q --no-deps -e .  # the `compstudio` command (pyproject.toml)
echo "installed: $(.venv/bin/python -c 'import gradio, torch, transformers; print("gradio", gradio.__version__, "torch", torch.__version__, "transformers", transformers.__version__)')"
