#!/usr/bin/env bash
# Runs inside `xvfb-run … dbus-run-session`: starts the fake provider, a Notify monitor and
# tauri-driver, then the e2e driver. Usage: in-session.sh <app> <fake-llm> <script.json> <artifacts>
set -euo pipefail
app=$1 fake=$2 script=$3 artifacts=$4
here=$(cd "$(dirname "$0")" && pwd)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The strict fake provider first: its first line is `listening on URL`.
"$fake" --script "$script" --when-empty error >"$artifacts/fake-llm.out" 2>"$artifacts/fake-llm.log" &
pids+=($!)
first=
for _ in $(seq 100); do
  first=$(head -n 1 "$artifacts/fake-llm.out" 2>/dev/null || true)
  [ -n "$first" ] && break
  sleep 0.1
done
case $first in
  "listening on "*) export SKALD_LLM_BASE_URL=${first#listening on } ;;
  *) echo "fake provider did not start: $first" >&2; exit 1 ;;
esac
export SKALD_LLM_MODEL=fake-model
echo "fake provider at $SKALD_LLM_BASE_URL"

export E2E_NOTIFY_LOG=$artifacts/notifications.log
dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
  >"$E2E_NOTIFY_LOG" 2>&1 &
pids+=($!)

port=$(free_port)
native_port=$(free_port)
tauri-driver --port "$port" --native-port "$native_port" --native-driver "$(command -v WebKitWebDriver)" \
  >"$artifacts/app.log" 2>&1 &
pids+=($!)

# The driver's pid: the e2e kills the app it launched (found under it) to test a restart.
export E2E_DRIVER_URL=http://127.0.0.1:$port E2E_DRIVER_PID=${pids[-1]} E2E_APP=$app E2E_ARTIFACTS=$artifacts
status=0
node "$here/e2e.mjs" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- app log (tail) ---" >&2
  tail -n 40 "$artifacts/app.log" >&2 || true
fi
exit "$status"
