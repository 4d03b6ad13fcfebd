#!/usr/bin/env bash
# Install the pinned Node tools the end-to-end tests drive (Claude Code CLI, ccusage) into .tools/.
# Skips quietly when npm is missing; the tests that need a tool skip with a reason then.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v npm >/dev/null 2>&1 || { echo "npm not found: e2e tests will skip" >&2; exit 0; }
mkdir -p .tools
[ -f .tools/package.json ] || echo '{"name":"total-recall-tools","private":true}' > .tools/package.json
want=(@anthropic-ai/claude-code@2.1.332 ccusage@20.0.24)
have=$(cd .tools && npm ls --depth=0 2>/dev/null || true)
missing=()
for p in "${want[@]}"; do
  name=${p%@*}; ver=${p##*@}
  grep -q "${name}@${ver}" <<<"$have" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  (cd .tools && npm install --no-audit --no-fund --silent "${missing[@]}") || echo "npm install failed: e2e tests will skip" >&2
fi
