#!/usr/bin/env bash
# Runs inside `xvfb-run … dbus-run-session`: starts the app with nothing driving it and waits up to
# 30 s for the X display to show the rendered UI, saving that frame.
# Usage: paint-only.sh <app-binary> <screen.png>
set -euo pipefail
app=$1 png=$2
"$app" >"${png%.png}.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  kill -0 "$pid" 2>/dev/null || { echo "the app exited; log:" >&2; tail -n 20 "${png%.png}.log" >&2; exit 1; }
  if import -window root "$png" 2>/dev/null && [ "$(identify -format '%k' "$png")" -ge 64 ]; then
    exit 0
  fi
  sleep 0.25
done
exit 1
