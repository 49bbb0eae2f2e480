#!/usr/bin/env bash
# The reliability matrix: runs the row tests (provider faults and bad inputs, issue 11; MCP
# server faults; a model that tries to get past the person approving, issue 21), which record
# what they observed, and writes docs/reliability.md from those rows.
# Usage: scripts/reliability.sh            rewrite docs/reliability.md (commit the result)
#        scripts/reliability.sh --check    fail when the committed file differs from a fresh run
# scripts/test.sh does not call this: it records the rows during its full test run and checks
# them with skald-matrix directly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
# The MCP rows run against the real server-everything (npm), like scripts/test.sh's.
if [[ -z ${SKALD_MCP_EVERYTHING:-} ]]; then
  SKALD_MCP_EVERYTHING=$(scripts/mcp-peers/install.sh)
  export SKALD_MCP_EVERYTHING
fi
# A row test that does not hold fails, but its row is recorded first: run them all, then render.
SKALD_MATRIX_OUT="$rows" cargo nextest run --locked --no-fail-fast --run-ignored all \
  -p skald-core -p skald-cli -p skald-links -E 'test(/^suite::matrix::/) + test(/^suite::attacker::/)' || true
if [[ "${1:-}" == "--check" ]]; then
  cargo run --locked -q -p skald-testkit --bin skald-matrix -- --input "$rows" --check docs/reliability.md
else
  cargo run --locked -q -p skald-testkit --bin skald-matrix -- --input "$rows" --output docs/reliability.md
fi
