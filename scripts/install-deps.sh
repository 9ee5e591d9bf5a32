#!/usr/bin/env bash
#===- scripts/install-deps.sh - Install everything attn needs ------------===#
#
# Idempotent: installs only what is missing. Needs root (or sudo) and
# access to Debian 12's package archive (bookworm + bookworm-security).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

packages=(
  cmake ninja-build ccache git python3 python3-numpy
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  libclang-rt-22-dev libomp-22-dev
  libgtest-dev googletest
  # OpenBLAS under Debian's numpy, for bench/ (numpy falls back to the
  # reference BLAS without it).
  libopenblas0-pthread
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
