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
# rust-toolchain.toml pins the version. rustup would download it under that name, which machines
# without access to static.rust-lang.org cannot do; when the installed default toolchain is that
# very version, register it under the pinned name instead (nothing is downloaded or copied).
toolchain_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/rust-toolchain.toml"
pinned=$(sed -n 's/^channel = "\(.*\)"/\1/p' "$toolchain_file")
if [ -n "$pinned" ] && command -v rustup >/dev/null 2>&1 \
  && ! rustup toolchain list | grep -q "^$pinned"; then
  installed=$(cd / && rustc --version | awk '{print $2}')
  if [ "$installed" = "$pinned" ]; then
    # `rustup toolchain link` refuses release names, so the pinned name becomes a symlink to the
    # installed toolchain's directory, which rustup then treats as that release.
    host=$(cd / && rustc -vV | sed -n 's/^host: //p')
    echo "toolchain: registering the installed Rust $installed as the pinned $pinned"
    ln -sfn "$(cd / && rustc --print sysroot)" "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/$pinned-$host"
  else
    echo "toolchain: rust-toolchain.toml pins $pinned, the default is $installed; rustup fetches $pinned" >&2
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
