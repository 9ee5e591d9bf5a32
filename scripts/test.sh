#!/usr/bin/env bash
#===- scripts/test.sh - Set everything up and run every test -------------===#
#
# Installs the dependencies, builds attn and runs the whole check-attn suite
# (lit + FileCheck tests and the gtest suites). The last line is the summary
# `N passed, N failed` (`, N skipped` when lit skipped some).
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"

bash "$root/scripts/install-deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
bash "$root/scripts/build.sh" "$build" || { echo "0 passed, 1 failed"; exit 1; }

log="$build/check-attn.log"
/usr/lib/llvm-22/bin/lit -sv "$build/test" "$build/test/Unit" 2>&1 | tee "$log"
lit_status=${PIPESTATUS[0]}

# lit's summary lines look like "  Passed: 12 (100.00%)".
count() {
  grep -E "^ *$1 *: +[0-9]+" "$log" | sed -E 's/[^0-9]*([0-9]+).*/\1/' |
    awk '{s += $1} END {print s + 0}'
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count 'Unexpectedly Passed') + $(count 'Unresolved') + $(count 'Timed Out') ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
if [ "$lit_status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
