#!/usr/bin/env bash
# UI scale benchmark: a long session in the real desktop app under Xvfb (tauri-driver +
# WebKitWebDriver). For each size it builds a session of TURNS turns × ROUNDS tool rounds (per turn
# a question, ROUNDS `read_file` rounds and an answer: 250 × 20 = 5,500 messages, 5,000 calls) and
# measures, on a fresh launch of the app:
#   - the time from opening the chat page, and then the session's debug tree, until the newest
#     answer is painted (set location.hash, poll the DOM every frame, two frames after it shows);
#   - the DOM node count then;
#   - the resident memory (RSS) of the app and its WebKit web process after each page;
# and the same app showing an empty session, as the memory baseline.
#
# Sessions are built by `crates/skald-core/examples/seed_long_session.rs`: through the real engine
# against the strict fake provider (each round a real model request, context build and tool run)
# up to SKALD_UI_SCALE_ENGINE_MAX messages (default 6,000), through the store API above that (the
# same rows, written directly: the engine would take hours for the 100x session).
#
# Usage:
#   scripts/ui-scale.sh            by hand: release build, sizes 1x 10x 100x of 250 × 20; prints the
#                                  figures and rewrites the "## UI scale" section of docs/benchmarks.md
#   scripts/ui-scale.sh --small    the test suite's run: debug build, one 12 × 5 session; fails when a
#                                  page does not paint its newest answer or holds >= 3,000 DOM nodes
#   Options: --sizes "1 10 100" --turns N --rounds N --debug --app BIN
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

small=0 sizes="1 10 100" turns=250 rounds=20 profile=release app=
while [ $# -gt 0 ]; do
  case $1 in
    --small) small=1 sizes=1 turns=12 rounds=5 profile=debug ;;
    --sizes) sizes=$2; shift ;;
    --turns) turns=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --debug) profile=debug ;;
    --app) app=$2; shift ;;
    *) echo "ui-scale: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
engine_max=${SKALD_UI_SCALE_ENGINE_MAX:-6000}
max_nodes=3000

fail() {
  echo "ui-scale: FAIL: $*" >&2
  exit 1
}
for tool in xvfb-run dbus-run-session WebKitWebDriver node python3; do
  command -v "$tool" >/dev/null || fail "'$tool' is missing (run scripts/install-system-deps.sh desktop)"
done
command -v tauri-driver >/dev/null || cargo install tauri-driver --locked

if [[ ! -f ui/dist/index.html || -n $(find ui/src ui/index.html -newer ui/dist/index.html -print -quit) ]]; then
  echo "ui-scale: ui/dist is missing or older than ui/src: building the UI"
  [ -d ui/node_modules ] || npm --prefix ui ci --no-audit --no-fund
  npm --prefix ui run build
fi
release=()
[ "$profile" = release ] && release=(--release)
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ -z "$app" ]; then
  echo "ui-scale: building skald-desktop ($profile)"
  cargo build "${release[@]}" -p skald-desktop --bin skald-desktop
  app=$target_dir/$profile/skald-desktop
fi
echo "ui-scale: building the session seeder ($profile)"
cargo build "${release[@]}" -p skald-core --example seed_long_session
seeder=$target_dir/$profile/examples/seed_long_session

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
artifacts=$root/artifacts/desktop/ui-scale
mkdir -p "$artifacts"

# Seeds a data dir; prints "<session-id> <seconds> <engine|store>".
seed() {
  local dir=$1 t=$2 via=engine
  [ $(( t * (rounds + 2) )) -gt "$engine_max" ] && via=store
  local out
  out=$("$seeder" --data-dir "$dir" --turns "$t" --rounds "$rounds" --via "$via")
  # "session <id> messages <n> calls <m> seconds <s>"
  read -r _ id _ _ _ _ _ secs <<<"$out"
  echo "$id $secs $via"
}

# Measures one data dir in a fresh app; prints the JSON line of measure.mjs.
measure() {
  local name=$1 dir=$2 session=$3 answer=$4 home=$tmp/home-$1
  mkdir -p "$home"
  # The app's own WebKit settings (no screenshots are taken, so compositing may stay as it chooses).
  env HOME="$home" XDG_DATA_HOME="$home/.local/share" \
    XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" SKALD_DATA_DIR="$dir" \
    SKALD_LLM_BASE_URL=http://127.0.0.1:9/v1 SKALD_LLM_MODEL=fake-model \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- \
    "$root/scripts/ui-scale/in-session.sh" "$app" "$session" "$answer" "$artifacts/$name.log" | tail -n 1
}

field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }

echo "ui-scale: baseline (empty session)"
base_dir=$tmp/empty
read -r base_session _ _ < <(seed "$base_dir" 0)
base=$(measure empty "$base_dir" "$base_session" -) || fail "the empty session did not open"
base_rss=$(field "$base" "max(chat['rss']['app'] + chat['rss']['web'], tree['rss']['app'] + tree['rss']['web'])")
echo "ui-scale: empty session: RSS $(( base_rss / 1024 )) MB (app + web process)"

rows=()
for m in $sizes; do
  t=$(( turns * m ))
  messages=$(( t * (rounds + 2) )) calls=$(( t * rounds ))
  dir=$tmp/size$m
  echo "ui-scale: ${m}x: seeding $t turns × $rounds rounds ($messages messages, $calls calls)"
  read -r session secs via < <(seed "$dir" "$t")
  echo "ui-scale: ${m}x: seeded through the $via in ${secs} s; measuring"
  r=$(measure "size$m" "$dir" "$session" "Answer $t: I read the notes") || fail "${m}x: a page did not paint its newest answer"
  for page in chat tree; do
    ms=$(field "$r" "round($page['ms'])")
    nodes=$(field "$r" "$page['nodes']")
    rss=$(field "$r" "$page['rss']['app'] + $page['rss']['web']")
    ratio=$(python3 -c "print(f'{$rss / $base_rss:.2f}')")
    echo "ui-scale: ${m}x $page: painted in ${ms} ms, ${nodes} DOM nodes, RSS $(( rss / 1024 )) MB (${ratio}x the empty session)"
    [ "$nodes" -lt "$max_nodes" ] || fail "${m}x $page: $nodes DOM nodes (the bound is $max_nodes)"
    rows+=("$m|$messages|$calls|$page|$ms|$nodes|$(( rss / 1024 ))|$ratio|$via|$secs")
  done
done
[ "$small" = 1 ] && { echo "ui-scale: PASS (small run: $turns × $rounds, $profile build)"; exit 0; }

verdict() { python3 -c "import sys; print('met' if float(sys.argv[1]) < float(sys.argv[2]) else '**missed**')" "$1" "$2"; }
table=$(for row in "${rows[@]}"; do
  IFS='|' read -r m messages calls page ms nodes rss ratio via secs <<<"$row"
  label=$([ "$page" = chat ] && echo "chat page" || echo "debug tree")
  printf '| %sx (%s messages, %s calls) | %s | %s ms (%s) | %s (%s) | %s MB, %sx (%s) | %s, %s s |\n' \
    "$m" "$(printf "%'d" "$messages")" "$(printf "%'d" "$calls")" "$label" "$ms" "$(verdict "$ms" 500)" \
    "$nodes" "$(verdict "$nodes" 3000)" "$rss" "$ratio" "$(verdict "$ratio" 1.3)" "$via" "$secs"
done)
section=$(cat <<MD
## UI scale

Measured by \`scripts/ui-scale.sh --sizes "$sizes" --turns $turns --rounds $rounds\` on $(date -u +%Y-%m-%d)
($profile build, Xvfb 1280x800, software rendering, 2 cores, load average $(cut -d' ' -f1-3 /proc/loadavg)
from other builds). Base size: $turns turns × $rounds tool rounds. Each size is a fresh launch of the
app on its own data dir; the chat page and then the debug tree are opened from the Settings page and
timed until the newest answer is painted. RSS is the app plus its WebKit web process, after the page,
against the same app on an empty session: $(( base_rss / 1024 )) MB. Targets from DESIGN.md: painted in
< 500 ms, < 3,000 DOM nodes, RSS < 1.3x the empty session.

| Session | Page | Painted | DOM nodes | RSS (vs empty) | Built through, in |
|---|---|---|---|---|---|
$table

Sessions up to $engine_max messages are built by the real engine against the fake provider; larger
ones are written through the store API with the same shape (the engine spends a full model round, a
context build and a tool run per row).
MD
)
doc=docs/benchmarks.md
SECTION=$section python3 scripts/bench-section.py "$doc" "## UI scale"
echo "ui-scale: wrote the UI scale section of $doc"
