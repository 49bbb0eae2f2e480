#!/usr/bin/env bash
# Starts a LiteLLM proxy (the independent OpenAI-compatible server of the turn tests) on
# 127.0.0.1 with the scripted provider, installing it into .cache/independent-llm/venv first.
#
#   scripts/independent-llm/start.sh [PORT]            # (a free port by default) prints the base URL (http://127.0.0.1:PORT/v1)
#   scripts/independent-llm/start.sh --ensure [PORT]   # reuses the running proxy when it answers
#
# --ensure is what a test calls when the proxy it was given does not answer: under a lock (tests
# run in parallel processes) it prints the URL of the proxy that is alive, starting a new one only
# when none is. The URL of the current proxy is also in .cache/independent-llm/url.
#
# The proxy keeps running in the background; its PID is in .cache/independent-llm/proxy.pid and
# its log in .cache/independent-llm/proxy.log. LiteLLM refuses to start without a master key, so
# a fresh random one is written to .cache/independent-llm/api_key (send it as the bearer token). Stop it with `kill "$(cat .../proxy.pid)"`.
# Exit status 1 (with the log tail on stderr) when it cannot be installed or is not ready in 60 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.cache/independent-llm"
venv="$cache/venv"
ensure=0
if [[ "${1:-}" == "--ensure" ]]; then ensure=1; shift; fi
# A free port unless one is asked for: a fixed one collides with another checkout's proxy.
port="${1:-${SKALD_LITELLM_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}}"
mkdir -p "$cache"

answers() { # URL KEY: the proxy lists the scripted model
  curl -fsS --max-time 2 -H "Authorization: Bearer $2" "$1/models" 2>/dev/null | grep -q scripted-model
}

# One starter at a time: parallel test processes may all find the proxy gone at once.
exec 9>"$cache/lock"
flock 9
if [[ $ensure == 1 && -f "$cache/url" && -f "$cache/api_key" ]] \
  && answers "$(cat "$cache/url")" "$(cat "$cache/api_key")"; then
  cat "$cache/url"
  exit 0
fi
if [[ $ensure == 1 && -f "$cache/proxy.log" ]]; then
  # Keep the reason the last proxy went away for whoever reads the logs later.
  cp "$cache/proxy.log" "$cache/proxy.previous.log"
fi

stamp="$venv/.requirements"
if [[ ! -x "$venv/bin/litellm" ]] || ! cmp -s "$here/requirements.txt" "$stamp"; then
  echo "installing LiteLLM into $venv ..." >&2
  python3 -m venv "$venv"
  if ! "$venv/bin/pip" install -q -r "$here/requirements.txt" >"$cache/install.log" 2>&1; then
    echo "LiteLLM could not be installed; see $cache/install.log:" >&2
    tail -n 20 "$cache/install.log" >&2
    exit 1
  fi
  cp "$here/requirements.txt" "$stamp"
fi

# A proxy from an earlier run of this script is replaced.
if [[ -f "$cache/proxy.pid" ]]; then
  old="$(cat "$cache/proxy.pid")"
  if kill -0 "$old" 2>/dev/null; then kill "$old" 2>/dev/null || true; sleep 1; fi
  rm -f "$cache/proxy.pid"
fi

key="sk-$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
(umask 077 && printf '%s' "$key" >"$cache/api_key")

# The custom handler is imported relative to the config file's directory.
cd "$here"
LITELLM_MASTER_KEY="$key" LITELLM_TELEMETRY=False LITELLM_LOG=ERROR NO_DOCS=True \
  setsid nohup "$venv/bin/litellm" --config "$here/config.yaml" --host 127.0.0.1 --port "$port" \
  >"$cache/proxy.log" 2>&1 9>&- &
pid=$!
echo "$pid" >"$cache/proxy.pid"

url="http://127.0.0.1:$port/v1"
for _ in $(seq 1 120); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "the LiteLLM proxy exited during start-up; log tail:" >&2
    tail -n 30 "$cache/proxy.log" >&2
    exit 1
  fi
  # Ready means a model list naming the scripted model, not merely an open port.
  if answers "$url" "$key"; then
    echo "$url" >"$cache/url"
    echo "$url"
    exit 0
  fi
  sleep 0.5
done
echo "the LiteLLM proxy was not ready within 60 s; log tail:" >&2
tail -n 30 "$cache/proxy.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
