#!/usr/bin/env bash
# Makes sure the Rust toolchain (with rustfmt and clippy) and Node.js >= 20 are present.
# Sourced by run-desktop.sh and test.sh; installs only what is missing.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "toolchain: installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
      --component rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi

node_major=$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/' || true)
if [ -z "$node_major" ] || [ "$node_major" -lt 20 ]; then
  echo "toolchain: Node.js >= 20 is required (found: ${node_major:-none}); installing from apt" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq nodejs npm
  node_major=$(node --version | sed -E 's/^v([0-9]+).*/\1/')
  [ "$node_major" -ge 20 ] || { echo "toolchain: Node.js $node_major is too old; install Node 20+" >&2; exit 1; }
fi
