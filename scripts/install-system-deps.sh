#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Skald needs to build the desktop app and run its tests.
# Usage: scripts/install-system-deps.sh [build|desktop|browser|package|all]   (default: all)
set -euo pipefail
what=${1:-all}
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

build_pkgs=(build-essential pkg-config file curl libssl-dev libxdo-dev libwebkit2gtk-4.1-dev
  libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev libdbus-1-dev python3-venv
  ripgrep)
desktop_pkgs=(xvfb xauth webkit2gtk-driver dbus dbus-x11 dunst xdg-utils desktop-file-utils
  libglib2.0-bin imagemagick xdotool x11-utils libfuse2 fuse)
browser_pkgs=(chromium)
# The AppImage (scripts/build-appimage.sh): squashfs image, RUNPATHs of the bundled libraries.
package_pkgs=(squashfs-tools patchelf)

pkgs=()
case "$what" in
  build) pkgs=("${build_pkgs[@]}") ;;
  desktop) pkgs=("${build_pkgs[@]}" "${desktop_pkgs[@]}") ;;
  browser) pkgs=("${browser_pkgs[@]}") ;;
  package) pkgs=("${build_pkgs[@]}" "${package_pkgs[@]}") ;;
  all) pkgs=("${build_pkgs[@]}" "${desktop_pkgs[@]}" "${browser_pkgs[@]}" "${package_pkgs[@]}") ;;
  *) echo "usage: $0 [build|desktop|browser|package|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
echo "system packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
