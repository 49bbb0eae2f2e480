#!/usr/bin/env bash
# Runs inside `xvfb-run … dbus-run-session`: starts tauri-driver on its own ports and measures one
# data dir (SKALD_DATA_DIR). Usage: in-session.sh <app> <session-id> <answer-text|-> <log>
set -euo pipefail
app=$1 session=$2 answer=$3 log=$4
here=$(cd "$(dirname "$0")" && pwd)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
native_port=$(free_port)
tauri-driver --port "$port" --native-port "$native_port" --native-driver "$(command -v WebKitWebDriver)" \
  >"$log" 2>&1 &
driver_pid=$!
cleanup() {
  kill "$driver_pid" 2>/dev/null || true
  wait "$driver_pid" 2>/dev/null || true
}
trap cleanup EXIT
status=0
node "$here/measure.mjs" "http://127.0.0.1:$port" "$app" "$driver_pid" "$session" "$answer" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- tauri-driver / app log ($log) ---" >&2
  tail -n 40 "$log" >&2 || true
fi
exit "$status"
