#!/usr/bin/env python3
"""Builds Skald's AppDir: the app, WebKitGTK's helper processes and every shared library they load,
except the ones that must match the host, each library found through a RUNPATH inside the AppDir.

Layout (relative to the AppDir):
  AppRun, skald.desktop, skald-desktop.png, .DirIcon
  usr/bin/skald-desktop                      RUNPATH $ORIGIN/../lib/<triplet>
  usr/lib/<triplet>/*.so*                    RUNPATH $ORIGIN
  usr/lib/<triplet>/webkit2gtk-4.1/          WebKitWebProcess, WebKitNetworkProcess, ...
  usr/lib/<triplet>/gdk-pixbuf-2.0/, gio/    image loaders and GIO modules with their caches
  usr/share/glib-2.0/schemas/                GTK's settings schemas, compiled

WebKitGTK starts its helper processes from a directory compiled into libwebkit2gtk. Our copy of
the library has that path's "/usr" prefix replaced by "././" (same length), which makes it
relative; AppRun starts the app from usr/ inside the AppDir, so it resolves to our helpers.

Usage: make_appdir.py --binary PATH --appdir DIR --icon PNG --desktop FILE --apprun FILE
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Libraries taken from the host, never bundled. Why, per group:
# - glibc and the C++/GCC runtime: everything on the host links them; two copies in one process
#   break, and a host graphics driver may need a newer libstdc++ than ours.
# - OpenGL/EGL/DRM/GBM/Vulkan: must match the host's GPU driver and kernel.
# - X11/xcb/Wayland client and EGL glue: talk to the host's display server and driver.
# - fontconfig/freetype/harfbuzz: read the host's font configuration, whose format follows them.
# - zlib, expat, uuid, gpg-error, com_err, gmp, asound, jack, pipewire, pulse, p11-kit, nss:
#   host-configured or ABI-stable system libraries that other host libraries above load too.
EXCLUDED = [
    r"ld-linux.*", r"libc\.so\..*", r"libm\.so\..*", r"libmvec\.so\..*", r"libdl\.so\..*",
    r"libpthread\.so\..*", r"librt\.so\..*", r"libresolv\.so\..*", r"libutil\.so\..*",
    r"libanl\.so\..*", r"libnsl\.so\..*", r"libBrokenLocale\.so\..*", r"libthread_db\.so\..*",
    r"libnss_.*", r"libstdc\+\+\.so\..*", r"libgcc_s\.so\..*",
    r"libGL\.so\..*", r"libGLX.*", r"libGLdispatch\.so\..*", r"libOpenGL\.so\..*",
    r"libEGL.*", r"libGLES.*", r"libglapi\.so\..*", r"libdrm.*", r"libgbm\.so\..*",
    r"libvulkan\.so\..*",
    r"libX11\.so\..*", r"libX11-xcb\.so\..*", r"libxcb.*", r"libwayland-.*",
    r"libfontconfig\.so\..*", r"libfreetype\.so\..*", r"libharfbuzz\.so\..*",
    r"libz\.so\..*", r"libexpat\.so\..*", r"libuuid\.so\..*", r"libgpg-error\.so\..*",
    r"libcom_err\.so\..*", r"libgmp\.so\..*", r"libasound\.so\..*", r"libjack\.so\..*",
    r"libpipewire-.*", r"libpulse.*", r"libp11-kit\.so\..*", r"libnss3\.so", r"libnssutil3\.so",
]
EXCLUDED_RE = re.compile("|".join(f"(?:{p})" for p in EXCLUDED))

# Loaded with dlopen, so ldd cannot see them: the tray (libayatana-appindicator3).
DLOPENED = ["libayatana-appindicator3.so.1"]


def log(message: str) -> None:
    print(f"make_appdir: {message}", flush=True)


def fail(message: str) -> None:
    print(f"make_appdir: error: {message}", file=sys.stderr)
    sys.exit(1)


def run(*cmd: str) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return done.stdout


def ldd(elf: Path) -> dict[str, Path]:
    """Every library `elf` loads (transitively), by soname, as the host resolves them."""
    deps: dict[str, Path] = {}
    for line in run("ldd", str(elf)).splitlines():
        m = re.match(r"\s*(\S+) => (/\S+) \(0x", line)
        if m:
            deps[m.group(1)] = Path(m.group(2))
        elif "not found" in line:
            fail(f"{elf}: {line.strip()}")
    return deps


def host_library(soname: str) -> Path:
    for line in run("ldconfig", "-p").splitlines():
        m = re.match(rf"\s*{re.escape(soname)} \(([^)]*)\) => (\S+)", line)
        if m and "x86-64" in m.group(1):
            return Path(m.group(2))
    fail(f"{soname} is not installed (scripts/install-system-deps.sh build)")
    raise AssertionError


def set_runpath(elf: Path, target_dir: Path) -> None:
    rel = os.path.relpath(target_dir, elf.parent)
    runpath = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
    elf.chmod(0o755)
    run("patchelf", "--set-rpath", runpath, str(elf))


def copy_file(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src.resolve(), dest)
    dest.chmod(0o755)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", type=Path, required=True)
    ap.add_argument("--appdir", type=Path, required=True)
    ap.add_argument("--icon", type=Path, required=True)
    ap.add_argument("--desktop", type=Path, required=True)
    ap.add_argument("--apprun", type=Path, required=True)
    args = ap.parse_args()

    triplet = run("gcc", "-print-multiarch").strip() or "x86_64-linux-gnu"
    host_lib = Path("/usr/lib") / triplet
    webkit_host = host_lib / "webkit2gtk-4.1"
    if not (webkit_host / "WebKitWebProcess").exists():
        fail(f"no WebKitGTK 4.1 helpers in {webkit_host} (scripts/install-system-deps.sh build)")

    appdir: Path = args.appdir
    if appdir.exists():
        shutil.rmtree(appdir)
    usr = appdir / "usr"
    libdir = usr / "lib" / triplet

    # Programs and plugins, each with the directory its RUNPATH must reach.
    elves: list[Path] = [copy_file(args.binary, usr / "bin" / "skald-desktop")]
    for helper in sorted(webkit_host.iterdir()):
        if helper.is_file() and helper.name.startswith("WebKit"):
            elves.append(copy_file(helper, libdir / "webkit2gtk-4.1" / helper.name))
    bundle = webkit_host / "injected-bundle" / "libwebkit2gtkinjectedbundle.so"
    elves.append(copy_file(bundle, libdir / "webkit2gtk-4.1" / "injected-bundle" / bundle.name))
    pixbuf_rel = Path("gdk-pixbuf-2.0/2.10.0")
    for loader in sorted((host_lib / pixbuf_rel / "loaders").glob("*.so")):
        elves.append(copy_file(loader, libdir / pixbuf_rel / "loaders" / loader.name))
    for module in sorted((host_lib / "gio" / "modules").glob("*.so")):
        elves.append(copy_file(module, libdir / "gio" / "modules" / module.name))

    # Their libraries, minus the host's own.
    wanted: dict[str, Path] = {}
    for elf in elves:
        wanted.update(ldd(elf))
    for name in DLOPENED:
        wanted[name] = host_library(name)
        wanted.update(ldd(host_library(name)))
    bundled = {name: path for name, path in wanted.items() if not EXCLUDED_RE.fullmatch(name)}
    for name, path in sorted(bundled.items()):
        elves.append(copy_file(path, libdir / name))
    log(f"{len(bundled)} libraries bundled, {len(wanted) - len(bundled)} left to the host")

    for elf in elves:
        set_runpath(elf, libdir)

    # WebKit's helper directory, made relative to the working directory AppRun sets (usr/).
    webkit = libdir / "libwebkit2gtk-4.1.so.0"
    data = webkit.read_bytes()
    old = str(webkit_host).encode()
    new = b"././" + old[len(b"/usr"):]
    assert len(new) == len(old)
    count = data.count(old)
    if count < 2:
        fail(f"expected the helper and injected-bundle paths in {webkit.name}, found {count}")
    webkit.write_bytes(data.replace(old, new))
    log(f"{webkit.name}: {count} helper paths made relative to usr/")

    # Image loaders: cache entries relative to usr/ (the working directory), like WebKit's.
    loaders = libdir / pixbuf_rel / "loaders"
    query = host_lib / "gdk-pixbuf-2.0" / "gdk-pixbuf-query-loaders"
    cache = run(str(query), *sorted(str(p) for p in loaders.glob("*.so")))
    cache = cache.replace(f'"{usr}/', '"')
    (libdir / pixbuf_rel / "loaders.cache").write_text(cache)

    gio_query = host_lib / "glib-2.0" / "gio-querymodules"
    run(str(gio_query), str(libdir / "gio" / "modules"))

    schemas = usr / "share" / "glib-2.0" / "schemas"
    schemas.mkdir(parents=True)
    for xml in Path("/usr/share/glib-2.0/schemas").glob("org.gtk.*.xml"):
        shutil.copy2(xml, schemas / xml.name)
    run("glib-compile-schemas", str(schemas))

    # The desktop entry and icon, at the top (AppImage) and in usr/share (desktop integration).
    shutil.copy2(args.desktop, appdir / "skald.desktop")
    apps = usr / "share" / "applications"
    apps.mkdir(parents=True)
    shutil.copy2(args.desktop, apps / "skald.desktop")
    shutil.copy2(args.icon, appdir / "skald-desktop.png")
    icons = usr / "share" / "icons" / "hicolor" / "256x256" / "apps"
    icons.mkdir(parents=True)
    shutil.copy2(args.icon, icons / "skald-desktop.png")
    (appdir / ".DirIcon").symlink_to("skald-desktop.png")
    copy_file(args.apprun, appdir / "AppRun")
    log(f"AppDir ready: {appdir}")


if __name__ == "__main__":
    main()
