#!/usr/bin/env bash
# Set up and run the main job: index your Claude Code transcripts (or a generated demo corpus
# when there are none) and show what total-recall found.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
exec .venv/bin/total-recall demo "$@"
