#!/usr/bin/env bash
# AppImage test: builds the AppImage (scripts/build-appimage.sh) around the debug app and starts
# it under Xvfb, mounted through FUSE (what users get) and with --appimage-extract-and-run (for
# machines without FUSE). The second run hides the host's WebKitGTK, GTK and libsoup (a private
# mount namespace, scripts/appimage/without-host-webkit.sh) to show the image brings its own.
# Each run must:
#   - paint the UI (screenshot in artifacts/desktop/appimage-<mode>.png, not blank);
#   - run the app and WebKit's web and network processes from inside the image, with WebKit and
#     GTK mapped from the image and not from the host;
#   - hand the user's directory to the app (SKALD_LAUNCH_DIR) although AppRun changes directory;
#   - register the skald:// handler with the AppImage itself as the program to start;
#   - hand a link given to a second start of the image to the running app (single instance).
# Usage: scripts/appimage-smoke.sh [--binary PATH]   (default: the debug build, made here)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { echo "appimage-smoke: $*"; }
fail() {
  echo "appimage-smoke: FAIL: $*" >&2
  exit 1
}

binary=""
[ "${1:-}" = --binary ] && binary=$2
if [ -z "$binary" ]; then
  [ -f ui/dist/index.html ] || npm --prefix ui run build
  cargo build -p skald-desktop
  target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  binary=$target_dir/debug/skald-desktop
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
image=$tmp/Skald.AppImage
scripts/build-appimage.sh --binary "$binary" --out "$image"

# The packaged desktop entry: the handler for skald:// links, passing the link on (%u).
entry=$(cd "$tmp" && "$image" --appimage-extract skald.desktop >/dev/null && cat squashfs-root/skald.desktop)
grep -qx 'MimeType=x-scheme-handler/skald;' <<<"$entry" || fail "the desktop entry claims no skald:// links"
grep -qx 'Exec=skald-desktop %u' <<<"$entry" || fail "the desktop entry does not pass the link on"

artifacts=$root/artifacts/desktop
mkdir -p "$artifacts"
modes=(fuse extract)
if [ ! -e /dev/fuse ] || ! command -v fusermount >/dev/null; then
  say "no FUSE here (/dev/fuse or fusermount missing): testing --appimage-extract-and-run only"
  modes=(extract)
fi

for mode in "${modes[@]}"; do
  say "starting the AppImage ($mode)"
  home=$tmp/$mode/home launch=$tmp/$mode/launch-dir
  mkdir -p "$home" "$launch"
  extract="" isolate=()
  if [ "$mode" = extract ]; then
    extract=1
    if unshare --mount true 2>/dev/null; then
      isolate=(unshare --mount "$root/scripts/appimage/without-host-webkit.sh")
      say "$mode: with the host's WebKitGTK, GTK and libsoup hidden"
    else
      say "$mode: cannot make a mount namespace here; the host's WebKitGTK stays visible"
    fi
  fi
  (cd "$launch" && env HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
    XDG_CACHE_HOME="$home/.cache" SKALD_DATA_DIR="$tmp/$mode/data" ${extract:+APPIMAGE_EXTRACT_AND_RUN=1} \
    xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- ${isolate[@]+"${isolate[@]}"} \
    "$root/scripts/appimage/in-session.sh" "$image" "$launch" "$artifacts/appimage-$mode.png") ||
    fail "$mode: see the messages above"
  say "$mode: ok"
done
say "passed"
