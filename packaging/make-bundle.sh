#!/usr/bin/env bash
# Makes the relocatable bundle, NAME.tar.xz: the four programs, the libraries
# and Qt plugins they need (from this machine, a Debian 12 build), DejaVu
# fonts, the presets and two launchers, in one folder that runs wherever it
# is unpacked on Debian 12, Ubuntu 24.04 or newer (glibc 2.36+).
#
#   make-bundle.sh --build BUILD_DIR --name NAME --qt-plugins DIR --out DIR [--xz-level N]
#
# Run by `make bundle` (the CMake target `bundle`, packaging/CMakeLists.txt),
# which passes the name (kernel-playground-<version>-linux-<arch>) and Qt's
# plugin folder.
#
# Left out on purpose: glibc and libstdc++/libgcc_s (every target system has
# them, as new or newer; a bundled glibc cannot work with the system's loader),
# and the NVIDIA driver (libcuda) and NVRTC, which the user installs: they
# must match the GPU and kernel driver, and their licences forbid
# redistribution here. The programs open both with dlopen at run time.
#
# How the bundle finds its own: the programs get an RPATH of $ORIGIN/../lib
# (DT_RPATH, which, unlike RUNPATH, also serves the libraries' own
# dependencies and the dlopen of NVRTC, so libnvrtc.so.* put into lib/ is
# found too); Qt plugins come from bin/qt.conf's plugins/. kpg-worker and
# kpg-compiler, which the others start, carry the same RPATH, so they need
# no environment from the launchers.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build="" name="" qt_plugins="" out="" level=6
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    --qt-plugins) qt_plugins=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --xz-level) level=$2; shift 2 ;;
    *) echo "make-bundle: unknown argument '$1'; usage: $0 --build DIR --name NAME --qt-plugins DIR --out DIR [--xz-level 0-9]" >&2; exit 64 ;;
  esac
done
for v in build name qt_plugins out; do
  if [ -z "${!v}" ]; then
    echo "make-bundle: --${v//_/-} is required" >&2
    exit 64
  fi
done
case "$level" in [0-9]) ;; *) echo "make-bundle: --xz-level: expected 0 to 9, got '$level'" >&2; exit 64 ;; esac
for tool in patchelf xz tar ldd readelf cmake; do
  if ! command -v "$tool" >/dev/null; then
    echo "make-bundle: '$tool' not found; packaging/install-deps.sh installs it" >&2
    exit 69
  fi
done
for p in kernel-playground kpg kpg-worker kpg-compiler; do
  if [ ! -x "$build/bin/$p" ]; then
    echo "make-bundle: $build/bin/$p is missing; build first (cmake --build $build)" >&2
    exit 66
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kpg-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/$name
cmake --install "$build" --prefix "$root" --strip >/dev/null

# ---- Qt plugins ---------------------------------------------------------
# Needed: xcb (a desktop) and offscreen (no display), the SVG icon engine and
# image formats, xcb's GL integrations. Wanted where this Qt has them:
# minimal, the other image formats, input methods (compose keys, IBus).
required=(platforms/libqxcb.so platforms/libqoffscreen.so iconengines/libqsvgicon.so imageformats/libqsvg.so)
optional=(platforms/libqminimal.so imageformats/libqjpeg.so imageformats/libqgif.so imageformats/libqico.so
          xcbglintegrations/libqxcb-glx-integration.so xcbglintegrations/libqxcb-egl-integration.so
          platforminputcontexts/libcomposeplatforminputcontextplugin.so
          platforminputcontexts/libibusplatforminputcontextplugin.so)
for p in "${required[@]}" "${optional[@]}"; do
  if [ -f "$qt_plugins/$p" ]; then
    mkdir -p "$root/plugins/$(dirname "$p")"
    cp -L "$qt_plugins/$p" "$root/plugins/$p"
  elif [[ " ${required[*]} " == *" $p "* ]]; then
    echo "make-bundle: the Qt plugin $qt_plugins/$p is missing" >&2
    exit 69
  fi
done

# ---- libraries ----------------------------------------------------------
# Everything the programs and plugins load, except the system's own (above).
system_lib='^(linux-vdso\.so|ld-linux[-a-z0-9_]*\.so|libc\.so|libm\.so|libmvec\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libutil\.so|libanl\.so|libnsl\.so|libBrokenLocale\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libnvrtc|libnvidia-|lib(GLX|EGL|GLESv2)_nvidia\.so)'
# The chart panels' module (gui/shell/chartpanels.h) is installed at lib/kernel-playground/.
charts_module=$root/lib/kernel-playground/kpg_charts.so
if [ ! -f "$charts_module" ]; then
  echo "make-bundle: $charts_module was not installed; build first (cmake --build $build)" >&2
  exit 66
fi
elves=("$root"/bin/kernel-playground "$root"/bin/kpg "$root"/bin/kpg-worker "$root"/bin/kpg-compiler "$charts_module")
mapfile -t plugin_files < <(find "$root/plugins" -name '*.so' | sort)
elves+=("${plugin_files[@]}")
mkdir -p "$root/lib"
declare -A copied=()
for f in "${elves[@]}"; do
  while read -r soname _ path _; do
    [ "$soname" = "${soname#/}" ] || soname=$(basename "$soname")
    [[ "$soname" =~ $system_lib ]] && continue
    if [ "$path" = "not" ]; then
      echo "make-bundle: $f needs $soname, which is not installed here" >&2
      exit 69
    fi
    [ -n "${copied[$soname]:-}" ] && continue
    cp -L "$path" "$root/lib/$soname"
    chmod 0644 "$root/lib/$soname"
    copied[$soname]=$(readlink -f "$path")
  done < <(ldd "$f" | awk '/=>/ {print $1, $2, $3, $4}')
done

for p in kernel-playground kpg kpg-worker kpg-compiler; do
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$root/bin/$p"
done
for f in "${plugin_files[@]}"; do
  patchelf --force-rpath --set-rpath '$ORIGIN/../../lib' "$f"
done
patchelf --force-rpath --set-rpath '$ORIGIN/..' "$charts_module"
# A bundled library with a RUNPATH of its own would not see the programs'
# RPATH for its dependencies: point it at its own folder.
for f in "$root"/lib/*; do
  if [ -f "$f" ] && readelf -d "$f" | grep -Eq '\((RUNPATH|RPATH)\)'; then
    patchelf --set-rpath '$ORIGIN' "$f"
  fi
done

# Every program and plugin must now load only the bundle's libraries and the
# system's own: a library resolved elsewhere would be missing on the target.
real_root=$(readlink -f "$root")
for f in "${elves[@]}"; do
  while read -r soname _ path _; do
    [ "$soname" = "${soname#/}" ] || soname=$(basename "$soname")
    [[ "$soname" =~ $system_lib ]] && continue
    case "$(readlink -f "$path")" in
      "$real_root"/lib/*) ;;
      *) echo "make-bundle: ${f#$root/} resolves $soname to $path, outside the bundle" >&2; exit 70 ;;
    esac
  done < <(env -u LD_LIBRARY_PATH ldd "$f" | awk '/=>/ {print $1, $2, $3, $4}')
done

install -m 0644 "$here/bundle/qt.conf" "$root/bin/qt.conf"
for p in kernel-playground kpg; do
  install -m 0755 "$here/bundle/launcher.sh" "$root/$p"
done

# ---- fonts --------------------------------------------------------------
mkdir -p "$root/share/fonts/dejavu" "$root/etc/fonts"
fonts=(/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
       /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf
       /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf /usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf)
for f in "${fonts[@]}"; do
  if [ ! -f "$f" ]; then
    echo "make-bundle: $f is missing (Debian package fonts-dejavu-core)" >&2
    exit 69
  fi
  install -m 0644 "$f" "$root/share/fonts/dejavu/"
done
install -m 0644 "$here/bundle/fonts.conf" "$root/etc/fonts/fonts.conf"

# ---- presets, notices ---------------------------------------------------
ln -s share/kernel-playground/presets "$root/presets"
version=$("$root/bin/kpg-worker" --version | awk '{print $2}')
sed "s/@VERSION@/$version/" "$here/bundle/README.txt" >"$root/README.txt"
install -m 0644 "$here/../LICENSE" "$root/LICENSE"
# The copyright files of the Debian packages the bundled files come from
# (Qt's LGPL among them).
if command -v dpkg-query >/dev/null; then
  mapfile -t sources < <(printf '%s\n' "${copied[@]}" "${fonts[@]}" \
                           "$(readlink -f "$qt_plugins/platforms/libqxcb.so")" \
                           "$(readlink -f "$qt_plugins/iconengines/libqsvgicon.so")")
  # dpkg knows a file by the path its package shipped: /lib/... or /usr/lib/...
  # on a merged-/usr system, so both are asked; it fails for the unknown half.
  for s in "${sources[@]}"; do
    [ "$s" = "${s#/usr/}" ] || sources+=("${s#/usr}")
  done
  { dpkg-query -S "${sources[@]}" 2>/dev/null || true; } | cut -d: -f1 | tr -d ' ' | tr ',' '\n' | sort -u |
    while read -r pkg; do
      if [ -f "/usr/share/doc/$pkg/copyright" ]; then
        install -D -m 0644 "/usr/share/doc/$pkg/copyright" "$root/share/doc/third-party/$pkg/copyright"
      fi
    done
fi

# ---- archive ------------------------------------------------------------
mkdir -p "$out"
tmp_out=$(mktemp "$out/.$name.tar.xz.XXXXXX")
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-$(date +%s)}" \
    -C "$work" -cf - "$name" | xz -T0 "-$level" >"$tmp_out"
chmod 0644 "$tmp_out"
mv -f "$tmp_out" "$out/$name.tar.xz"
echo "make-bundle: $out/$name.tar.xz ($(du -h "$out/$name.tar.xz" | cut -f1), $(ls "$root/lib" | wc -l) libraries)"
