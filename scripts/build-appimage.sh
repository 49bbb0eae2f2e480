#!/usr/bin/env bash
# Builds Skald's AppImage without network access beyond the package registries.
#
# Tauri's own AppImage bundler downloads linuxdeploy and AppRun from GitHub at build time; this
# script does the same job with Debian tools instead:
#   1. the AppDir: the app, WebKitGTK's helpers and their libraries (scripts/appimage/make_appdir.py)
#   2. a squashfs image of it (mksquashfs, gzip: the runtime below reads gzip)
#   3. the AppImage type 2 runtime in front of it. The runtime is AppImageKit's (version 8bbf694),
#      taken from the `appimage` crate on crates.io and checked against a pinned SHA-256.
#
# Usage: scripts/build-appimage.sh [--binary PATH] [--out FILE]
#   --binary  the skald-desktop to package (default: a release build, made here)
#   --out     where to write the AppImage (default: target/release/bundle/appimage/Skald_<ver>_amd64.AppImage)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

say() { echo "build-appimage: $*"; }
fail() {
  echo "build-appimage: error: $*" >&2
  exit 1
}

binary="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) fail "unknown argument '$1' (usage: $0 [--binary PATH] [--out FILE])" ;;
  esac
done
[ "$(uname -m)" = x86_64 ] || fail "only x86_64 is supported (the pinned runtime is x86_64)"

scripts/install-system-deps.sh package
target_dir=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
version=$(python3 -c 'import json; print(json.load(open("tauri.conf.json"))["version"])')

if [ -z "$binary" ]; then
  if [ ! -f ui/dist/index.html ]; then
    [ -d ui/node_modules ] || npm --prefix ui ci --no-audit --no-fund
    npm --prefix ui run build
  fi
  say "building skald-desktop (release)"
  cargo build --release --locked -p skald-desktop --features tauri/custom-protocol
  binary=$target_dir/release/skald-desktop
fi
[ -x "$binary" ] || fail "no executable at $binary"
out=${out:-$target_dir/release/bundle/appimage/Skald_${version}_amd64.AppImage}

# The runtime, from the crate that ships it (crates.io is reachable where GitHub may not be).
cache=$root/.cache/appimage
crate_sha=567a4da6b94a2ac20a27620933c80fc14cf475b5fe7d7b137d20eb237d6b1920
runtime_sha=328e0d745c5c6817048c27bc3e8314871703f8f47ffa81a37cb06cd95a94b323
runtime=$cache/runtime-x86_64
if ! echo "$runtime_sha  $runtime" | sha256sum --check --status 2>/dev/null; then
  say "fetching the AppImage runtime (crates.io: appimage 0.4.0)"
  mkdir -p "$cache"
  curl -fsSL --retry 3 -o "$cache/appimage.crate" https://static.crates.io/crates/appimage/appimage-0.4.0.crate
  echo "$crate_sha  $cache/appimage.crate" | sha256sum --check --status ||
    fail "appimage-0.4.0.crate does not match its pinned checksum"
  tar -xzf "$cache/appimage.crate" -C "$cache" --strip-components=2 appimage-0.4.0/assets/runtime-x86_64
  echo "$runtime_sha  $runtime" | sha256sum --check --status ||
    fail "the runtime in appimage-0.4.0.crate does not match its pinned checksum"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
appdir=$work/Skald.AppDir
python3 scripts/appimage/make_appdir.py --binary "$binary" --appdir "$appdir" \
  --icon icons/icon.png --desktop packaging/linux/skald.desktop --apprun scripts/appimage/AppRun

say "squashing the AppDir"
mksquashfs "$appdir" "$work/image.squashfs" -root-owned -noappend -comp gzip -quiet >/dev/null
mkdir -p "$(dirname "$out")"
cat "$runtime" "$work/image.squashfs" >"$out.part"
chmod 755 "$out.part"
mv "$out.part" "$out"
say "$(du -m "$out" | cut -f1) MB: $out"
