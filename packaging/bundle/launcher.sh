#!/bin/sh
# Starts the program of the same name from this bundle's bin/ (installed as
# both `kernel-playground` and `kpg`). The programs find the bundle's
# libraries through their RPATH ($ORIGIN/../lib) and its Qt plugins through
# bin/qt.conf, so kpg-worker and kpg-compiler, which they start, need nothing
# from here; this script only adds the bundle's fonts to fontconfig's.
here=$(dirname "$(readlink -f "$0")")
name=$(basename "$(readlink -f "$0")")
if [ -z "${FONTCONFIG_FILE:-}" ]; then
  FONTCONFIG_FILE="$here/etc/fonts/fonts.conf"
  export FONTCONFIG_FILE
fi
exec "$here/bin/$name" "$@"
