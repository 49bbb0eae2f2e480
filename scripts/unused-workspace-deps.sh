#!/usr/bin/env bash
# Fails when a crates.io dependency of [workspace.dependencies] is used by no member crate: cargo
# machete checks each member's own list, not the workspace's. Usage: scripts/unused-workspace-deps.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
manifests=$(cargo metadata --no-deps --format-version 1 --locked \
  | python3 -c 'import json,sys; print("\n".join(p["manifest_path"] for p in json.load(sys.stdin)["packages"]))')
unused=0
# Registry entries only: a path entry names a member, which is built whether or not one uses it.
for dep in $(sed -n '/^\[workspace.dependencies\]/,/^\[/p' Cargo.toml \
  | grep -E '^[A-Za-z0-9_-]+ *=' | grep -v 'path *=' | sed -E 's/^([A-Za-z0-9_-]+).*/\1/'); do
  # shellcheck disable=SC2086 # one manifest path per word
  if ! grep -qE "^${dep}(\.workspace)? *=" $manifests; then
    echo "unused workspace dependency: $dep (remove it from Cargo.toml)" >&2
    unused=1
  fi
done
exit "$unused"
