#!/usr/bin/env bash
#===- scripts/main.sh - Set everything up and run the main job -----------===#
#
# Installs the dependencies, builds attn, then takes every example spec in
# examples/ end to end: compile it to the attn dialect (printed), run it on
# generated inputs with the reference evaluator and save the inputs and the
# output as .npy files under out/<example>/. The same variants written
# directly in the dialect (examples/mlir) are verified through attn-opt.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
# Small enough for the quadratic reference evaluator to finish in seconds.
sizes=(--set N=256 --set M=192)

bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" "$build"

status=0
for spec in "$root"/examples/*.attn; do
  name="$(basename "$spec" .attn)"
  echo "//===- $name.attn ===//"
  set_flags=()
  for flag in "${sizes[@]}"; do
    # Bind only the sizes the spec declares.
    if [[ "$flag" == *=* ]] && grep -qE "^\s*dim ${flag%%=*}\b" "$spec"; then
      set_flags+=(--set "$flag")
    fi
  done
  if ! "$build/bin/attnc" "$spec" --emit=mlir ||
     ! "$build/bin/attnc" run "$spec" "${set_flags[@]}" --save "$root/out/$name"; then
    echo "main: $spec failed" >&2
    status=1
  fi
done
for example in "$root"/examples/mlir/*.mlir; do
  if ! "$build/bin/attn-opt" "$example" > /dev/null; then
    echo "main: $example does not verify" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "main: every example compiled and ran; outputs in out/"
exit $status
