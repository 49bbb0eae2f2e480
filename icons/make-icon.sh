#!/usr/bin/env bash
# Draws the Skald app icon (icons/icon.png, 1024x1024): a rounded indigo-to-teal tile carrying a
# gold Sowilo-style rune "S"; then derives the desktop set with the Tauri CLI (32x32, 128x128,
# 128x128@2x, icon.icns, icon.ico, Windows Store logos) and the tray icons.
# Usage: icons/make-icon.sh            (needs ImageMagick `convert` and npx; network for npx once)
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Tile: diagonal gradient clipped to a rounded square with a small transparent margin.
convert -size 1024x1024 xc: -sparse-color Barycentric '0,0 #312e81 1023,1023 #0f766e' "$tmp/grad.png"
convert -size 1024x1024 xc:none -fill white -draw "roundrectangle 56,56 968,968 210,210" "$tmp/mask.png"
convert "$tmp/grad.png" "$tmp/mask.png" -alpha off -compose CopyOpacity -composite "$tmp/tile.png"

# Soft inner rim so the tile reads on dark and light docks alike.
convert -size 1024x1024 xc:none -fill none -stroke 'rgba(255,255,255,0.18)' -strokewidth 14 \
  -draw "roundrectangle 70,70 954,954 198,198" "$tmp/rim.png"

# The rune: Sowilo as one filled polygon (a 104 px zigzag stroke with mitred joints, computed
# once), so the shape does not depend on ImageMagick's stroke-join support. A blurred dark copy
# underneath gives it depth.
rune="polygon 572,193 310,517 530,571 372,765 452,831 714,509 494,455 652,259"
convert -size 1024x1024 xc:none -fill 'rgba(0,0,0,0.45)' -draw "translate 0,18 $rune" -blur 0x18 "$tmp/shadow.png"
convert -size 1024x1024 xc:none -fill '#f6d48f' -draw "$rune" "$tmp/rune.png"

convert "$tmp/tile.png" "$tmp/rim.png" -composite "$tmp/shadow.png" -composite "$tmp/rune.png" -composite \
  "$tmp/tile.png" -compose DstIn -composite -depth 8 -define png:color-type=6 "$tmp/icon.png"

# The CLI writes its own 512 px icon.png into the output folder; keep the 1024 px master instead.
(cd .. && npx --yes @tauri-apps/cli@2 icon "$tmp/icon.png" -o icons >/dev/null)
rm -rf android ios
cp "$tmp/icon.png" icon.png

# Tray: the same tile, small; the attention variant adds a red badge (something waits for you).
convert "$tmp/icon.png" -resize 32x32 -depth 8 tray.png
convert "$tmp/icon.png" -resize 64x64 -depth 8 tray@2x.png
convert "$tmp/icon.png" -fill '#ef4444' -stroke white -strokewidth 40 \
  -draw "circle 800,224 800,64" -resize 64x64 -depth 8 tray-attention.png
echo "wrote icons into $(pwd)"
