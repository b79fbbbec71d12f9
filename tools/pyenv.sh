#!/usr/bin/env bash
# tools/pyenv.sh — creates or updates the repo's Python environment (.venv) with the exact
# packages of tools/requirements.txt: numpy, onnx (whose wheel carries the ONNX backend test
# data), onnxruntime (the reference for tools/compare_ort.py) and pytest.
#
# Idempotent and silent when .venv already matches requirements.txt; otherwise it needs PyPI
# once, and reports progress on stderr. polyinfer itself never needs the network.
#
#   tools/pyenv.sh                  # then: .venv/bin/python tools/compare_ort.py ...
#   PYTHON=python3.11 tools/pyenv.sh
#   POLYINFER_VENV=/elsewhere tools/pyenv.sh
#   POLYINFER_VENV=.venv-openvino POLYINFER_REQUIREMENTS=bench/requirements-openvino.txt \
#     tools/pyenv.sh                # another pinned venv (bench/run.sh --corpus makes this one)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="${POLYINFER_REQUIREMENTS:-$root/tools/requirements.txt}"
venv="${POLYINFER_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
stamp="$venv/.polyinfer-requirements.sha256"

want="$(sha256sum "$req" | cut -d' ' -f1)"
up_to_date() {
  [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] &&
    "$venv/bin/python" -c '' 2>/dev/null
}
up_to_date && exit 0

mkdir -p "$(dirname "$venv")"
# Two callers at once (parallel tests) must not install into the same venv together; the lock
# lives outside the repo so that it never shows up in git status.
exec 9>"${TMPDIR:-/tmp}/polyinfer-venv-$(echo "$venv" | sha256sum | cut -c1-16).lock"
if command -v flock >/dev/null; then flock 9; fi
up_to_date && exit 0

if ! command -v "$python" >/dev/null; then
  echo "pyenv: error: $python not found; install Python 3.11 or set PYTHON=/path/to/python3" >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))'; then
  echo "pyenv: error: $("$python" -V 2>&1) is too old: the pinned wheels need Python 3.11 or" \
       "later; set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c '' 2>/dev/null; then
  echo "pyenv: creating $venv with $("$python" -V 2>&1)" >&2
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >&2; then
    echo "pyenv: error: '$python -m venv' failed; on Debian install python3-venv" >&2
    exit 1
  fi
fi
echo "pyenv: installing $req into $venv" >&2
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    -r "$req" >&2; then
  echo "pyenv: error: pip could not install $req (is PyPI reachable?)" >&2
  exit 1
fi
echo "$want" >"$stamp"
echo "pyenv: ready: $venv" >&2
