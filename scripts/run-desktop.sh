#!/usr/bin/env bash
# Builds and starts the Skald desktop app on a Debian/Ubuntu machine, installing what it needs.
# Usage: scripts/run-desktop.sh [--release]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/install-system-deps.sh build
source scripts/ensure-toolchain.sh

npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run build

profile=()
[ "${1:-}" = "--release" ] && profile=(--release)
cargo build -p skald-desktop "${profile[@]}"
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target_dir/$([ ${#profile[@]} -gt 0 ] && echo release || echo debug)/skald-desktop
echo "starting $bin"
exec "$bin"
