#!/usr/bin/env bash
# The test command: lint, format check, type check, then every test (unit, doctests, real app over HTTP, real
# browser, load, crash), with pytest-xdist: one worker per core and one more (each test file stays on one worker;
# the tests spend much of their time waiting on app servers, browsers and subprocesses, so a third worker on two
# cores finished the full run in 9 min 53 s to 11 min 1 s against 10 min 57 s with two and 11 min 9 s with four;
# since issue 44's changes it takes 7 min 29 s to 8 min 8 s:
# docs/architecture.md, "Tests").
#   bash scripts/test.sh            everything (what CI runs)
#   bash scripts/test.sh --quick    lint, types and every test but the browser, load, crash and slow ones (the quick loop)
#   bash scripts/test.sh [--quick] ARGS   extra pytest arguments, e.g. tests/test_storage.py -x
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False TOKENIZERS_PARALLELISM=false
select=()
if [ "${1:-}" = "--quick" ]; then
  shift
  select=(-m "not browser and not load and not crash and not slow")
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy (configured in pyproject.toml, [tool.mypy]: backend/, components/, web/, app.py) runs beside the tests: it
# takes ~40 s of one core, and its report comes after theirs; either failing fails the command
mypy_log=$(mktemp)
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
status=0
workers=${COMPSTUDIO_TEST_WORKERS:-$(( $(nproc) + 1 ))}
.venv/bin/python -m pytest -n "$workers" --dist loadfile "${select[@]}" "$@" || status=$?
wait "$mypy_pid" || status=1
cat "$mypy_log"
rm -f "$mypy_log"
exit "$status"
