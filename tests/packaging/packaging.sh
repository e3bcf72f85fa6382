#!/usr/bin/env bash
# The packages, as a user gets them (ctest label `packaging`).
#
#   packaging.sh deb    BUILD_DIR VERSION
#   packaging.sh bundle BUILD_DIR VERSION BUNDLE_NAME QT_PLUGIN_DIR
#
# deb: builds the .deb with CPack into a folder of its own, checks its
# control fields (runtime packages only, the driver and NVRTC recommended),
# runs lintian (no errors), desktop-file-validate, appstreamcli validate and
# update-mime-database on what it installs, unpacks it into a temporary root
# and runs the unpacked programs: every --version, `kpg compile` on an
# installed preset and an offscreen `kernel-playground --screenshot`.
#
# bundle: makes the tar.xz with packaging/make-bundle.sh, checks it carries no
# glibc, libstdc++, driver or NVRTC and that every program and plugin
# resolves its libraries inside it, unpacks and moves it, and runs the same
# commands through its launchers, checking that Qt's plugins came from the
# bundle.
#
# Everything happens under a fresh folder in TMPDIR, removed afterwards.
# Exit 77 (skipped) names the tools that were missing after everything that
# could run without them passed; packaging/install-deps.sh installs them all.
set -uo pipefail

mode=${1:-}
build=${2:-}
version=${3:-}
if [ -z "$mode" ] || [ -z "$build" ] || [ -z "$version" ]; then
  echo "usage: $0 deb|bundle BUILD_DIR VERSION [BUNDLE_NAME QT_PLUGIN_DIR]" >&2
  exit 64
fi
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kpg-packaging-$mode.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
missing=()
# Each mode sets this as its last step: a mode cut short (bash skips a
# function it cannot parse, then carries on) must not pass.
completed=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }
have() {
  if command -v "$1" >/dev/null; then return 0; fi
  missing+=("$1")
  return 1
}
# run NAME COMMAND...: runs it with a time limit, keeping its output in $tmp/NAME.out.
run() {
  local name=$1
  shift
  timeout 300 "$@" >"$tmp/$name.out" 2>&1
}
show() { sed 's/^/    /' "$tmp/$1.out" >&2; }

# Is FILE a PNG of at least W x H pixels (W = H = 0: any size)?
png_size() { # prints "W H"
  local f=$1
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || return 1
  local hex
  hex=$(od -An -j16 -N8 -tx1 "$f" | tr -d ' \n')
  echo "$((16#${hex:0:8})) $((16#${hex:8:8}))"
}

# The programs of a prefix (an unpacked .deb or the bundle), run as a user would.
# $1: how to call kernel-playground, $2: kpg, $3: the folder with kpg-worker and
# kpg-compiler, $4: the vector_add preset's folder, $5: a label for messages.
check_programs() {
  local gui=$1 kpg=$2 bin=$3 preset=$4 where=$5
  for p in "$kpg" "$bin/kpg-worker" "$bin/kpg-compiler"; do
    if run version "$p" --version && grep -q " $version " "$tmp/version.out"; then
      pass "$where: $(head -n1 "$tmp/version.out")"
    else
      fail "$where: $p --version does not say $version"
      show version
    fi
  done
  # Without a display and without QT_QPA_PLATFORM, as in a terminal on a server.
  if run version env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$gui" --version &&
    grep -qx "kernel-playground $version" "$tmp/version.out"; then
    pass "$where: kernel-playground --version without a display"
  else
    fail "$where: kernel-playground --version"
    show version
  fi

  if run compile "$kpg" compile "$preset/vector_add.cu" --json && grep -q '"name": *"vectorAdd"' "$tmp/compile.out" &&
    grep -q '"ok": *true' "$tmp/compile.out"; then
    pass "$where: kpg compile $preset/vector_add.cu"
  else
    fail "$where: kpg compile $preset/vector_add.cu (exit $?)"
    show compile
  fi
  if run run "$kpg" run "$preset/vector_add.kpg"; then
    pass "$where: kpg run vector_add (a GPU is here)"
  elif [ $? -eq 69 ] && grep -qi "driver\|device\|GPU" "$tmp/run.out"; then
    pass "$where: kpg run vector_add says it needs a GPU: $(head -n1 "$tmp/run.out")"
  else
    fail "$where: kpg run $preset/vector_add.kpg"
    show run
  fi

  local shot=$tmp/shot-$RANDOM.png size
  if run shot env QT_QPA_PLATFORM=offscreen "$gui" --preset vector_add --screenshot "$shot" &&
    size=$(png_size "$shot") && [ "${size% *}" -ge 640 ] && [ "${size#* }" -ge 400 ]; then
    pass "$where: kernel-playground --screenshot ($size)"
  else
    fail "$where: kernel-playground --preset vector_add --screenshot (no PNG of at least 640 x 400 written)"
    show shot
  fi
  # The chart panels' module (lib/kernel-playground/kpg_charts.so) loads: the
  # Compare panel built, and no "could not be loaded" in the Log.
  local charts=$tmp/charts-$RANDOM.png
  if run charts env QT_QPA_PLATFORM=offscreen "$gui" --preset vector_add --show compare --echo-log \
    --screenshot "$charts" && png_size "$charts" >/dev/null && ! grep -q "could not be loaded" "$tmp/charts.out"; then
    pass "$where: the chart panels' module loads"
  else
    fail "$where: kernel-playground --show compare: the chart panels' module did not load"
    show charts
  fi
  # A project named relative to the current folder, as a file manager or a
  # terminal passes it.
  mkdir -p "$tmp/project"
  cp "$preset/vector_add.kpg" "$preset/vector_add.cu" "$tmp/project/"
  if (cd "$tmp/project" && run relshot env QT_QPA_PLATFORM=offscreen "$gui" vector_add.kpg --screenshot rel.png) &&
    png_size "$tmp/project/rel.png" >/dev/null; then
    pass "$where: kernel-playground vector_add.kpg (a relative path)"
  else
    fail "$where: kernel-playground vector_add.kpg from its folder"
    show relshot
  fi
}

deb() {
  for t in cpack dpkg-deb dpkg-shlibdeps; do
    if ! command -v "$t" >/dev/null; then
      echo "packaging: skipped: '$t' not found (packaging/install-deps.sh installs it)"
      exit 77
    fi
  done
  if ! run cpack cpack -G DEB -B "$tmp/cpack" --config "$build/CPackConfig.cmake"; then
    fail "cpack -G DEB"
    show cpack
    completed=1
    return
  fi
  local debs=("$tmp"/cpack/kernel-playground_"$version"-*_*.deb)
  local deb=${debs[0]}
  if [ ! -f "$deb" ]; then
    fail "cpack wrote no kernel-playground_${version}-*.deb"
    show cpack
    return
  fi
  pass "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

  # Control fields: runtime packages computed from the binaries, never -dev
  # packages; what the user provides is recommended and explained.
  local depends recommends description
  depends=$(dpkg-deb -f "$deb" Depends)
  recommends=$(dpkg-deb -f "$deb" Recommends)
  description=$(dpkg-deb -f "$deb" Description)
  for p in libqt6core6 libqt6gui6 libqt6widgets6 libqt6network6 libqt6svg6 libqscintilla2-qt6 libmuparser libc6; do
    if [[ "$depends" == *"$p"* ]]; then pass "Depends names $p"; else fail "Depends lacks $p: $depends"; fi
  done
  local dev_re='-dev([ ,(]|$)'
  if [[ "$depends" =~ $dev_re ]]; then fail "Depends names a -dev package: $depends"; fi
  if [[ "$recommends" == *libcuda1* && "$recommends" == *cuda-toolkit* ]]; then
    pass "Recommends: $recommends"
  else
    fail "Recommends lacks the driver or the CUDA Toolkit: $recommends"
  fi
  if [[ "$description" == *"NVIDIA driver"* && "$description" == *NVRTC* ]]; then
    pass "the description says what the user provides"
  else
    fail "the description does not name the NVIDIA driver and NVRTC"
  fi

  if have lintian; then
    # Errors fail; warnings are listed for whoever reads the log.
    if run lintian lintian --fail-on error --no-tag-display-limit "$deb"; then
      pass "lintian: no errors ($(grep -c '^W:' "$tmp/lintian.out") warnings)"
      grep '^[WI]:' "$tmp/lintian.out" | sed 's/^/    /'
    else
      fail "lintian found errors"
      show lintian
    fi
  fi

  local root=$tmp/root
  dpkg-deb -x "$deb" "$root"
  local share=$root/usr/share
  local desktop
  desktop=$(ls "$share"/applications/*.desktop 2>/dev/null | head -n1)
  if [ -z "$desktop" ]; then
    fail "no desktop file in usr/share/applications"
  else
    grep -qx 'Exec=kernel-playground %f' "$desktop" || fail "$desktop: Exec is not 'kernel-playground %f'"
    grep -q '^MimeType=.*application/x-kernel-playground-project;' "$desktop" ||
      fail "$desktop: MimeType lacks application/x-kernel-playground-project"
    if have desktop-file-validate; then
      if run dfv desktop-file-validate "$desktop"; then pass "desktop-file-validate $(basename "$desktop")"; else
        fail "desktop-file-validate $(basename "$desktop")"
        show dfv
      fi
    fi
  fi
  local metainfo
  metainfo=$(ls "$share"/metainfo/*.metainfo.xml 2>/dev/null | head -n1)
  if [ -z "$metainfo" ]; then
    fail "no metainfo in usr/share/metainfo"
  else
    grep -q "<release version=\"$version\"" "$metainfo" || fail "$metainfo: no release $version"
    if have appstreamcli; then
      if run asv appstreamcli validate --no-net "$metainfo"; then pass "appstreamcli validate $(basename "$metainfo")"; else
        fail "appstreamcli validate $(basename "$metainfo")"
        show asv
      fi
    fi
  fi
  if have update-mime-database; then
    mkdir -p "$tmp/mime/packages"
    cp "$share/mime/packages/kernel-playground.xml" "$tmp/mime/packages/"
    if run mime update-mime-database "$tmp/mime" &&
      grep -qx 'application/x-kernel-playground-project:\*\.kpg' "$tmp/mime/globs"; then
      pass "update-mime-database maps *.kpg to application/x-kernel-playground-project"
    else
      fail "the MIME XML does not map *.kpg"
      show mime
    fi
  fi
  for size in 16 22 24 32 48 64 128 256 512; do
    local icon=$share/icons/hicolor/${size}x${size}/apps/kernel-playground.png
    [ "$(png_size "$icon" 2>/dev/null)" = "$size $size" ] || fail "$icon is not a ${size}x${size} PNG"
  done
  [ -f "$share/icons/hicolor/scalable/apps/kernel-playground.svg" ] || fail "no scalable icon"
  for page in kernel-playground kpg kpg-worker kpg-compiler; do
    [ -f "$share/man/man1/$page.1.gz" ] || fail "no manual page $page.1.gz"
  done
  for doc in README.md copyright changelog.Debian.gz docs/kpg-project.md; do
    [ -f "$share/doc/kernel-playground/$doc" ] || fail "no usr/share/doc/kernel-playground/$doc"
  done
  pass "icons, manual pages and documentation are in place"

  check_programs "$root/usr/bin/kernel-playground" "$root/usr/bin/kpg" "$root/usr/bin" \
    "$share/kernel-playground/presets/vector_add" "deb"
  completed=1
}

bundle() {
  local name=${4:-} plugins=${5:-}
  if [ -z "$name" ] || [ -z "$plugins" ]; then
    echo "usage: $0 bundle BUILD_DIR VERSION BUNDLE_NAME QT_PLUGIN_DIR" >&2
    exit 64
  fi
  for t in patchelf xz; do
    if ! command -v "$t" >/dev/null; then
      echo "packaging: skipped: '$t' not found (packaging/install-deps.sh installs it)"
      exit 77
    fi
  done
  # Level 3: the archive is thrown away; make bundle uses 6.
  if ! run make bash "$source_dir/packaging/make-bundle.sh" --build "$build" --name "$name" --qt-plugins "$plugins" \
    --out "$tmp/out" --xz-level 3; then
    fail "make-bundle.sh"
    show make
    return
  fi
  pass "$(tail -n1 "$tmp/make.out")"
  mkdir -p "$tmp/unpacked"
  tar -C "$tmp/unpacked" -xf "$tmp/out/$name.tar.xz" || {
    fail "tar xf $name.tar.xz"
    return
  }
  # Somewhere else under another name: nothing may depend on where it was made.
  local b=$tmp/elsewhere/kp
  mkdir -p "$tmp/elsewhere"
  mv "$tmp/unpacked/$name" "$b"

  local bad
  bad=$(ls "$b/lib" | grep -E '^(libc|libm|libdl|libpthread|librt|ld-linux.*|libstdc\+\+|libgcc_s|libcuda|libnvrtc.*|libnvidia-.*)\.so' || true)
  if [ -n "$bad" ]; then fail "the bundle carries system or NVIDIA libraries: $bad"; else
    pass "no glibc, libstdc++, driver or NVRTC in lib/ ($(ls "$b/lib" | wc -l) libraries)"
  fi
  for lib in libQt6Core.so.6 libQt6Widgets.so.6 libqscintilla2_qt6.so.15 libmuparser.so.2 libfontconfig.so.1; do
    [ -f "$b/lib/$lib" ] || fail "lib/$lib is missing"
  done
  for p in platforms/libqxcb.so platforms/libqoffscreen.so iconengines/libqsvgicon.so imageformats/libqsvg.so; do
    [ -f "$b/plugins/$p" ] || fail "plugins/$p is missing"
  done
  ls "$b"/share/fonts/dejavu/DejaVuSans.ttf >/dev/null || fail "no DejaVu fonts"
  # Every program and plugin resolves its libraries in the bundle or to the
  # system's own (glibc, libstdc++, libgcc_s): nothing from this machine's Qt.
  local unresolved=0
  while IFS= read -r -d '' f; do
    while read -r soname _ path _; do
      case "$soname" in linux-vdso* | ld-linux* | libc.so* | libm.so* | libmvec.so* | libdl.so* | libpthread.so* | librt.so* | libresolv.so* | libutil.so* | libanl.so* | libnsl.so* | libBrokenLocale.so* | libstdc++.so* | libgcc_s.so*) continue ;; esac
      case "$(readlink -f "$path")" in
        "$(readlink -f "$b")"/lib/*) ;;
        *)
          fail "${f#$b/} resolves $soname to $path"
          unresolved=1
          ;;
      esac
    done < <(env -u LD_LIBRARY_PATH ldd "$f" | awk '/=>/ {print $1, $2, $3, $4}')
  done < <(find "$b/bin" "$b/plugins" "$b/lib/kernel-playground" -type f ! -name qt.conf -print0)
  [ $unresolved -eq 0 ] && pass "every program and plugin loads the bundle's libraries"

  # Through a symlink to the launcher, as from ~/bin.
  mkdir -p "$tmp/path"
  ln -s "$b/kpg" "$tmp/path/kpg"
  check_programs "$b/kernel-playground" "$tmp/path/kpg" "$b/bin" "$b/presets/vector_add" "bundle"
  if (cd "$b" && run relcompile ./kpg compile presets/vector_add/vector_add.cu); then
    pass "bundle: ./kpg compile presets/vector_add/vector_add.cu from the bundle's folder"
  else
    fail "bundle: ./kpg compile presets/vector_add/vector_add.cu"
    show relcompile
  fi

  # Qt's plugins come from the bundle, never from this machine's Qt.
  if run plugins env QT_QPA_PLATFORM=offscreen QT_DEBUG_PLUGINS=1 "$b/kernel-playground" --preset vector_add \
    --screenshot "$tmp/plugins.png" && grep -q "$b/plugins/platforms/libqoffscreen.so" "$tmp/plugins.out"; then
    if grep 'loaded library' "$tmp/plugins.out" | grep -v "$b/" >"$tmp/foreign.out"; then
      fail "plugins loaded from outside the bundle:"
      show foreign
    else
      pass "bundle: Qt plugins loaded from the bundle only"
    fi
  else
    fail "bundle: the offscreen platform plugin did not load from the bundle"
    show plugins
  fi
  completed=1
}

case "$mode" in
  deb) deb ;;
  bundle) bundle "$@" ;;
  *)
    echo "packaging: unknown mode '$mode'; modes: deb, bundle" >&2
    exit 64
    ;;
esac

if [ "$completed" -ne 1 ] && [ "$failures" -eq 0 ]; then
  fail "packaging $mode stopped before its end"
fi
if [ "$failures" -gt 0 ]; then
  echo "packaging $mode: $failures failure(s)" >&2
  exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "packaging $mode: everything else passed; skipped the checks needing: ${missing[*]} (packaging/install-deps.sh installs them)"
  exit 77
fi
echo "packaging $mode: all checks passed"
