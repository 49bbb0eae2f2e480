#!/usr/bin/env bash
# Runs inside `xvfb-run … dbus-run-session` for scripts/appimage-smoke.sh: starts the AppImage,
# waits for the UI to paint, then checks where the running processes come from.
# Usage: in-session.sh <AppImage> <launch-dir> <screen.png>
set -euo pipefail
image=$1 launch=$2 png=$3
log=${png%.png}.log
fail() {
  echo "appimage: $*" >&2
  echo "--- app log (tail)" >&2
  tail -n 20 "$log" >&2 || true
  exit 1
}

"$image" >"$log" 2>&1 &
pid=$!
stop() {
  pkill -f '/usr/bin/skald-desktop( |$)' 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT

painted=""
for _ in $(seq 160); do
  kill -0 "$pid" 2>/dev/null || fail "the AppImage exited"
  if import -window root "$png" 2>/dev/null && [ "$(identify -format '%k' "$png")" -ge 64 ]; then
    painted=1
    break
  fi
  sleep 0.25
done
[ -n "$painted" ] || fail "nothing painted within 40 s (last frame: $png)"

# The app: started by AppRun from inside the image (mounted or extracted).
app=$(pgrep -f '/usr/bin/skald-desktop$' | head -n 1 || true)
[ -n "$app" ] || fail "no skald-desktop process"
exe=$(readlink "/proc/$app/exe")
appdir=${exe%/usr/bin/skald-desktop}
case "$appdir" in
  /tmp/.mount_* | /tmp/appimage_extracted_*) ;;
  *) fail "skald-desktop runs from $exe, not from the image" ;;
esac
echo "appimage: app runs from $appdir"

# WebKit's helpers must be the image's (the relative helper path in its libwebkit2gtk), and every
# one of these processes must map WebKit and GTK from the image, never from the host.
for helper in WebKitWebProcess WebKitNetworkProcess; do
  hp=""
  for _ in $(seq 40); do
    hp=$(pgrep -f "$helper" | head -n 1 || true)
    [ -n "$hp" ] && break
    sleep 0.25
  done
  [ -n "$hp" ] || fail "no $helper process"
  helper_exe=$(readlink "/proc/$hp/exe")
  [ "$helper_exe" = "$appdir/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/$helper" ] ||
    fail "$helper runs from $helper_exe, not from the image"
  pids+=("$hp")
done
for p in "$app" "${pids[@]}"; do
  for lib in libwebkit2gtk-4.1.so.0 libgtk-3.so.0 libjavascriptcoregtk-4.1.so.0; do
    mapped=$(grep -o "/[^ ]*/$lib" "/proc/$p/maps" | sort -u)
    [ "$mapped" = "$appdir/usr/lib/x86_64-linux-gnu/$lib" ] ||
      fail "process $p ($(readlink "/proc/$p/exe")) maps $lib from '${mapped:-nowhere}'"
  done
done
echo "appimage: app, WebKitWebProcess and WebKitNetworkProcess use the image's WebKit and GTK"

# AppRun runs the app from usr/ inside the image; the user's directory travels in SKALD_LAUNCH_DIR.
cwd=$(readlink "/proc/$app/cwd")
[ "$cwd" = "$appdir/usr" ] || fail "the app runs in $cwd, expected $appdir/usr"
launch_dir=$(tr '\0' '\n' <"/proc/$app/environ" | sed -n 's/^SKALD_LAUNCH_DIR=//p')
[ "$launch_dir" = "$launch" ] || fail "SKALD_LAUNCH_DIR is '$launch_dir', expected $launch"

# Links must start the AppImage (the image path), not the binary inside a mount that goes away.
handler=$HOME/.local/share/applications/skald-desktop-handler.desktop
for _ in $(seq 40); do
  grep -q '^Exec=' "$handler" 2>/dev/null && break
  sleep 0.25
done
exec_line=$(grep '^Exec=' "$handler" 2>/dev/null || true)
[ "$exec_line" = "Exec=$image %u" ] || fail "the skald:// handler runs '${exec_line#Exec=}', expected '$image %u'"
echo "appimage: skald:// links start $image"

# A second start of the image hands its link to the running app, and its own app exits.
second_log=${png%.png}-second.log
"$image" "skald://inbox" >"$second_log" 2>&1 &
second=$!
routed="" alone=""
for _ in $(seq 80); do
  grep -q 'deep link.*Inbox' "$log" && routed=1
  [ "$(pgrep -fc '/usr/bin/skald-desktop( |$)')" = 1 ] && alone=1
  [ -n "$routed" ] && [ -n "$alone" ] && break
  sleep 0.25
done
[ -n "$routed" ] || fail "the running app did not route the link of a second start (log: $second_log)"
[ -n "$alone" ] || fail "the second start's app did not exit after handing over its link"
kill -0 "$pid" 2>/dev/null || fail "the running app exited when a second start handed over its link"
case "$appdir" in
  /tmp/.mount_*)
    # Its own mount: the second start ends at once.
    timeout 30 tail --pid="$second" -f /dev/null || fail "the second start did not end"
    ;;
  *)
    # Extracted: the shared directory must outlive the second start's hand-over.
    sleep 3
    [ -x "$appdir/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/WebKitWebProcess" ] ||
      fail "the second start deleted the running app's files ($appdir)"
    ;;
esac
echo "appimage: a second start handed skald://inbox to the running app; its files stay"
