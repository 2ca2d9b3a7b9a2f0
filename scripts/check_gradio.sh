#!/usr/bin/env bash
# Run the web-shell, access and sign-in tests against another Gradio 6 release, in a throwaway venv.
#   bash scripts/check_gradio.sh VERSION [PYTEST ARGS]     e.g. bash scripts/check_gradio.sh 6.30.0
# The venv is /tmp/gradio-VERSION (override: CHECK_GRADIO_VENV=DIR): requirements.txt with the gradio pin
# replaced by VERSION (5 to 9 minutes on 2 busy cores, 6.8 GB). It is kept and reused while it holds that Gradio
# (and brought up to date when requirements.txt changed); delete the folder to start clean.
# Prints, last, one line: "gradio VERSION: N passed, M failed". Extra arguments go to pytest (e.g. -x, -k NAME).
# Exit status: 0 when nothing failed.
set -euo pipefail
if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  echo "usage: bash scripts/check_gradio.sh VERSION [PYTEST ARGS]   (VERSION: a Gradio 6 release, e.g. 6.30.0)" >&2
  exit 2
fi
version="$1"
shift
if ! [[ "$version" =~ ^6\.[0-9]+\.[0-9]+$ ]]; then
  echo "check_gradio: $version is not a Gradio 6 release number (6.MINOR.PATCH, e.g. 6.30.0)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
root="$PWD"
venv="${CHECK_GRADIO_VENV:-/tmp/gradio-$version}"
python="${PYTHON:-python3}"

installed() { "$venv/bin/python" -c "import gradio, sys; sys.exit(gradio.__version__ != '$version')" 2>/dev/null; }

# requirements.txt with the gradio pin swapped (the line is "gradio[oauth]==X": keep the extra)
wanted="$(mktemp)"
trap 'rm -f "$wanted"' EXIT
sed -E "s/^gradio(\[[a-z,]+\])?==[0-9.]+/gradio\1==$version/" requirements.txt >"$wanted"
grep -qE "^gradio(\[[a-z,]+\])?==$version\$" "$wanted" || {
  echo "check_gradio: no gradio pin found in requirements.txt to replace" >&2
  exit 2
}
requirements="$venv/requirements-gradio.txt"  # what the venv was last installed from
if ! installed; then
  echo "check_gradio: installing Gradio $version and the project's requirements into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
if ! cmp -s "$wanted" "$requirements"; then  # a new venv, or requirements.txt changed since: (re)install
  "$venv/bin/python" -m pip install --quiet -r "$wanted"
  cp "$wanted" "$requirements"
fi
installed || {
  echo "check_gradio: $venv does not hold Gradio $version after the install" >&2
  exit 2
}

# The web-shell, access and sign-in tests; globs, so files added later are picked up
# (tests/test_web.py and tests/test_web_*.py: the web shell's; not tests/test_webhooks*.py).
shopt -s nullglob
files=(tests/test_app_http.py tests/test_access_table.py tests/test_access_guard.py tests/test_caller.py tests/test_signin*.py tests/e2e/test_signin.py tests/test_lazy_tabs.py tests/e2e/test_tabs.py
  tests/e2e/test_space.py tests/test_web.py tests/test_web_*.py)
shopt -u nullglob
existing=()
for f in "${files[@]}"; do
  [ -f "$f" ] && existing+=("$f")
done
mapfile -t existing < <(printf '%s\n' "${existing[@]}" | sort -u)
echo "check_gradio: $("$venv/bin/python" -c 'import gradio; print("gradio", gradio.__version__)'), ${#existing[@]} files: ${existing[*]}" >&2

export PYTHONPATH="$root" HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False
export TOKENIZERS_PARALLELISM=false
report="$venv/junit-$(date +%s).xml"
status=0
"$venv/bin/python" -m pytest -p no:randomly -n 0 --junitxml="$report" "$@" "${existing[@]}" || status=$?
[ -f "$report" ] || { echo "gradio $version: pytest wrote no report (exit $status)"; exit 2; }
"$venv/bin/python" - "$report" "$version" <<'EOF'
import sys
import xml.etree.ElementTree as ET

suites = ET.parse(sys.argv[1]).getroot()
suites = [suites] if suites.tag == "testsuite" else list(suites)
total = sum(int(s.get("tests", 0)) for s in suites)
failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
line = f"gradio {sys.argv[2]}: {total - failed - skipped} passed, {failed} failed"
print(line + (f", {skipped} skipped" if skipped else ""))
EOF
exit "$status"
