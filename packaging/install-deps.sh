#!/usr/bin/env bash
# Installs the build and test dependencies of Kernel Playground from the
# distribution's packages (Debian 12 / Ubuntu 24.04). Idempotent: when
# everything is present it prints nothing and exits 0. The CUDA Toolkit is a
# prerequisite and is not installed here (see README.md).
set -euo pipefail

packages=(
  cmake make g++ pkg-config
  qt6-base-dev qt6-base-dev-tools libgl-dev
  qt6-charts-dev qt6-svg-dev libqt6opengl6-dev
  libqscintilla2-qt6-dev
  libmuparser-dev
  xvfb xauth
  # make fuzz: clang 14 (Debian 12's, as for clang-format) and its runtime,
  # which holds libFuzzer and the sanitizers.
  clang-14 libclang-rt-14-dev
  # The kpg grade --slurm test (tests/slurm/slurm_grade.sh) starts a
  # single-node Slurm; it is skipped where these are missing.
  slurm-wlm munge
  # The remote-target tests (tests/engine/tst_remote, bench_remote) start their
  # own sshd on 127.0.0.1; they are skipped where it is missing.
  openssh-server openssh-client
  # make deb, make bundle and their tests (tests/packaging): dpkg-shlibdeps,
  # lintian, desktop-file-validate, appstreamcli, update-mime-database,
  # patchelf, xz and the DejaVu fonts the bundle carries.
  dpkg-dev lintian desktop-file-utils appstream shared-mime-info patchelf xz-utils fonts-dejavu-core
  # The include-order check (tests/lint/includes.py).
  python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "install-deps: apt-get not found; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "install-deps: not root and sudo not found; as root, install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Refresh the package lists only if a package is unknown to apt.
for p in "${missing[@]}"; do
  if ! apt-cache show "$p" >/dev/null 2>&1; then
    "${SUDO[@]}" apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; echo "install-deps: apt-get update failed" >&2; exit 1; }
    break
  fi
done
if ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  # Find out which one apt could not install, so the message names it.
  for p in "${missing[@]}"; do
    if ! "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1; then
      echo "install-deps: could not install package '$p'" >&2
    fi
  done
  tail -n 20 "$log" >&2
  exit 1
fi
