#!/usr/bin/env bash
#===- scripts/test.sh - Set everything up and run every test -------------===#
#
# Installs the dependencies, builds attn and runs the whole check-attn suite
# (lit + FileCheck tests and the gtest suites), then the sanitizer job
# (scripts/sanitize.sh; ATTN_SKIP_SANITIZE=1 skips it). The last line is the
# summary `N passed, N failed` (`, N skipped` when lit skipped some), both
# runs counted.
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

# The sanitizer job (scripts/sanitize.sh): a second build under ASan + UBSan
# and a representative part of the suite on it. ATTN_SKIP_SANITIZE=1 skips
# it (local runs; CI always runs it).
if [ "${ATTN_SKIP_SANITIZE:-0}" != 1 ]; then
  sanitize_log="$build/sanitize-summary.log"
  bash "$root/scripts/sanitize.sh" "$root/build-sanitize" 2>&1 | tee "$sanitize_log"
  summary=$(tail -n 1 "$sanitize_log")
  if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    passed=$(( passed + BASH_REMATCH[1] ))
    failed=$(( failed + BASH_REMATCH[2] ))
  else
    failed=$(( failed + 1 ))
  fi
fi
if [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi

if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
