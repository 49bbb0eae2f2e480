#!/usr/bin/env bash
# The whole test suite: formatting, lints, Rust tests, UI tests, the desktop tests and the small UI
# scale run.
# Installs what it needs on a Debian/Ubuntu machine. Usage: scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
start=$(date +%s)
step() { echo; echo "=== $* ($(( $(date +%s) - start ))s)"; }

step "system packages"
scripts/install-system-deps.sh all
source scripts/ensure-toolchain.sh
# Built from crates.io (prebuilt downloads are not reachable everywhere the suite runs).
for tool in cargo-nextest cargo-machete cargo-deny; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    step "installing $tool"
    cargo install "$tool" --locked
  fi
done

step "ui: install"
npm --prefix ui ci --no-audit --no-fund

step "rust: fmt"
cargo fmt --all -- --check

step "rust: unused dependencies (cargo machete, then the workspace's own list)"
cargo machete
scripts/unused-workspace-deps.sh

step "rust: licenses and sources of the dependency tree (cargo deny, deny.toml)"
cargo deny --locked check licenses bans sources

step "ui: build (embedded by the desktop crate and by skald, so before any Rust build)"
npm --prefix ui run build

# The LiteLLM proxy (pip) and the MCP peers (npm) install while the Rust build runs: both
# mostly wait on the network, and in sequence they added about a minute to the run.
litellm_out=$(mktemp); litellm_log=$(mktemp); peers_out=$(mktemp); peers_log=$(mktemp)
scripts/independent-llm/start.sh >"$litellm_out" 2>"$litellm_log" &
litellm_job=$!
scripts/mcp-peers/install.sh >"$peers_out" 2>"$peers_log" &
peers_job=$!
trap 'kill "$(cat .cache/independent-llm/proxy.pid 2>/dev/null)" 2>/dev/null || true' EXIT

step "rust: clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "rust: build tests"
cargo nextest run --workspace --locked --no-run

# Started before the build (above); a test that finds it gone restarts it
# (scripts/independent-llm/start.sh --ensure) and says so.
step "independent LLM server (LiteLLM proxy)"
if ! wait "$litellm_job"; then
  cat "$litellm_log" >&2
  exit 1
fi
cat "$litellm_log" >&2
SKALD_LITELLM_URL=$(cat "$litellm_out")
export SKALD_LITELLM_URL
SKALD_LITELLM_API_KEY=$(cat .cache/independent-llm/api_key)
export SKALD_LITELLM_API_KEY

step "real MCP servers (npm, pinned in scripts/mcp-peers)"
if ! wait "$peers_job"; then
  cat "$peers_log" >&2
  exit 1
fi
cat "$peers_log" >&2
SKALD_MCP_EVERYTHING=$(cat "$peers_out")
export SKALD_MCP_EVERYTHING

# `--run-ignored all`: tests that need an external server are #[ignore]d so that a plain run
# reports them as skipped; here their servers run, so they run too (and fail without them). The
# local llama.cpp suite is the exception: building its server takes longer than CI allows, so it
# is run by hand (crates/skald-core/tests/suite/local_llm.rs says how).
# The reliability matrix's row tests run here with the rest and record their rows; the committed
# docs/reliability.md must be what this run recorded (scripts/reliability.sh rewrites it).
# SKALD_REQUIRE_EMBEDDED_UI: the UI was built above, so a skald without it embedded is a failure.
# SKALD_REQUIRE_RG: ripgrep is installed (system packages), so the search parity test must run.
step "rust: tests"
matrix_rows=$(mktemp)
SKALD_MATRIX_OUT="$matrix_rows" SKALD_REQUIRE_EMBEDDED_UI=1 SKALD_REQUIRE_RG=1 \
  cargo nextest run --workspace --locked --no-fail-fast --run-ignored all \
  -E 'not test(/local_llm/) and not test(/kill_harness/)'

# Its own step, so its report (each kill point and `kill points: N, recovered: N`) is shown.
step "crash: kill harness (a turn SIGKILLed at every persisted step, then resumed)"
cargo nextest run -p skald-cli --locked --run-ignored only kill_harness --no-capture

step "reliability matrix: docs/reliability.md is current and every row holds"
cargo run --locked -q -p skald-testkit --bin skald-matrix -- --input "$matrix_rows" --check docs/reliability.md
rm -f "$matrix_rows"

step "ui: lint (ESLint with every React hooks rule as an error)"
npm --prefix ui run lint

step "ui: typecheck and tests"
npm --prefix ui run typecheck
npm --prefix ui test

step "browser: Playwright against skald serve"
scripts/e2e-browser.sh

step "desktop: smoke test under Xvfb"
scripts/desktop-smoke.sh

step "desktop: AppImage (built offline, run through FUSE and with the host's WebKitGTK hidden)"
scripts/appimage-smoke.sh

step "desktop: end-to-end under Xvfb (chat, approval, notification, deep links)"
scripts/desktop-e2e.sh

step "desktop: UI scale, small size (a long session's chat and debug tree paint their newest answer, bounded DOM)"
scripts/ui-scale.sh --small

step "all passed in $(( $(date +%s) - start ))s"
