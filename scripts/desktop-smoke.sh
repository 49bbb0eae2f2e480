#!/usr/bin/env bash
# Desktop smoke test: builds the real app, starts it under Xvfb and proves the window rendered.
#
#   1. ui      — fresh data dir: the app frame, the five sidebar entries and the session list
#                (answered by the engine through the `list_sessions` command) must appear.
#   2. startup-error — SKALD_DATA_DIR is a regular file: the window must show the startup error
#                page instead of crashing or staying blank.
#
# Screenshots land in artifacts/desktop/ (smoke.png = the X display, i.e. what a user sees;
# smoke-webview.png = WebKit's own snapshot via WebDriver) and must not be blank. Exits non-zero with a message on any failure.
# Usage: scripts/desktop-smoke.sh        (system packages: scripts/install-system-deps.sh desktop)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
helpers=$root/scripts/desktop-smoke
artifacts=$root/artifacts/desktop
# A blank or single-colour window has a handful of colours; the real UI has hundreds (text AA).
export SKALD_SMOKE_MIN_COLOURS=${SKALD_SMOKE_MIN_COLOURS:-64}
min_colours=$SKALD_SMOKE_MIN_COLOURS

say() { echo "desktop-smoke: $*"; }
fail() {
  echo "desktop-smoke: FAIL: $*" >&2
  exit 1
}

for tool in xvfb-run dbus-run-session WebKitWebDriver node npm python3 identify import; do
  command -v "$tool" >/dev/null || fail "'$tool' is missing (run scripts/install-system-deps.sh desktop)"
done

if [ ! -f ui/dist/index.html ]; then
  say "ui/dist missing: building the UI"
  [ -d ui/node_modules ] || npm --prefix ui ci --no-audit --no-fund
  npm --prefix ui run build
fi
[ -f ui/dist/index.html ] || fail "the UI build produced no ui/dist/index.html"

# No devUrl in tauri.conf.json, so a plain debug build embeds ui/dist.
say "building skald-desktop (debug)"
cargo build -p skald-desktop
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
app=$target_dir/debug/skald-desktop
[ -x "$app" ] || fail "no binary at $app"

if ! command -v tauri-driver >/dev/null; then
  say "installing tauri-driver"
  cargo install tauri-driver --locked
fi

rm -rf "$artifacts"
mkdir -p "$artifacts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Non-blank: enough distinct colours and the size of a real window.
check_image() {
  local image=$1 what=$2 min_width=$3 min_height=$4 colours width height
  [ -s "$image" ] || fail "$what: no screenshot at $image"
  colours=$(identify -format '%k' "$image")
  width=$(identify -format '%w' "$image")
  height=$(identify -format '%h' "$image")
  say "$what: ${width}x${height}, $colours colours"
  [ "$width" -ge "$min_width" ] && [ "$height" -ge "$min_height" ] ||
    fail "$what: ${width}x${height} is smaller than the window (${min_width}x${min_height})"
  [ "$colours" -ge "$min_colours" ] ||
    fail "$what: only $colours colours (< $min_colours) — the window looks blank"
}

# Runs one scenario in its own X server, session bus and home; extra env as NAME=VALUE args.
scenario() {
  local name=$1 webview_png=$2 screen_png=$3
  shift 3
  local home=$tmp/$name/home
  mkdir -p "$home"
  say "scenario $name"
  # WebKitWebDriver's screenshot never returns when compositing is off, which the app does by
  # itself without a GPU (src-tauri/src/webview_env.rs): "0" keeps it on for driven runs.
  env HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
    XDG_CACHE_HOME="$home/.cache" SKALD_DATA_DIR="$tmp/$name/data" \
    WEBKIT_DISABLE_COMPOSITING_MODE=0 "$@" \
    xvfb-run -a -s "-screen 0 1280x800x24" \
    dbus-run-session -- "$helpers/in-session.sh" "$app" "$name" "$webview_png" "$screen_png" ||
    fail "scenario $name failed (logs in $artifacts)"
}

scenario ui "$artifacts/smoke-webview.png" "$artifacts/smoke.png"
check_image "$artifacts/smoke.png" "ui display" 1000 600
check_image "$artifacts/smoke-webview.png" "ui webview" 1000 600

# The app as a user without a GPU gets it (compositing turned off by the app): no driver, only
# what reaches the X display.
say "scenario default-rendering"
home=$tmp/default-rendering/home
mkdir -p "$home"
env -u WEBKIT_DISABLE_COMPOSITING_MODE HOME="$home" XDG_DATA_HOME="$home/.local/share" \
  XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" \
  SKALD_DATA_DIR="$tmp/default-rendering/data" \
  xvfb-run -a -s "-screen 0 1280x800x24" \
  dbus-run-session -- "$helpers/paint-only.sh" "$app" "$artifacts/default-rendering.png" ||
  fail "scenario default-rendering: the window never painted (see $artifacts)"
check_image "$artifacts/default-rendering.png" "default rendering display" 1000 600

mkdir -p "$tmp/startup-error"
: >"$tmp/startup-error/not-a-folder"
scenario startup-error "$artifacts/startup-error-webview.png" "$artifacts/startup-error.png" \
  SKALD_DATA_DIR="$tmp/startup-error/not-a-folder"
check_image "$artifacts/startup-error.png" "startup error display" 1000 600

say "PASS (screenshots in $artifacts)"
