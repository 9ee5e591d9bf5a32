#!/usr/bin/env bash
#===- scripts/main.sh - Set everything up and run the main job -----------===#
#
# Installs the dependencies, builds attn, then runs every example in
# examples/ through the compiler and prints the result.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"

bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$build"

status=0
for example in "$root"/examples/mlir/*.mlir; do
  echo "//===- $(basename "$example") ===//"
  if ! "$build/bin/attn-opt" --attn-materialize-defaults "$example"; then
    echo "main: $example failed" >&2
    status=1
  fi
done
exit $status
