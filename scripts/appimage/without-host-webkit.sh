#!/bin/sh
# Runs a command in a private mount namespace where the host's WebKitGTK, GTK and libsoup cannot
# be loaded (empty files bound over them, WebKit's helper directory emptied): whatever still starts
# brought its own. Needs root (or CAP_SYS_ADMIN) and `unshare`.
# Usage: unshare --mount without-host-webkit.sh COMMAND [ARGS...]
set -eu
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
for name in libwebkit2gtk-4.1.so.0 libjavascriptcoregtk-4.1.so.0 libgtk-3.so.0 libsoup-3.0.so.0; do
  mount --bind /dev/null "$(readlink -f "$lib/$name")"
done
mount -t tmpfs tmpfs "$lib/webkit2gtk-4.1"
exec "$@"
