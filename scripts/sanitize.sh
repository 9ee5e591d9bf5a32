#!/usr/bin/env bash
#===- scripts/sanitize.sh - attn under AddressSanitizer + UBSan ----------===#
#
# Usage: scripts/sanitize.sh [BUILD_DIR]   (default: build-sanitize)
#
# Builds the compiler, attnc, attn-opt and the unit tests with
# -fsanitize=address,undefined (UBSan traps nothing silently:
# -fno-sanitize-recover), then runs a representative part of the suite on
# that build: the dialect, pass and pipeline tests, attnc's own tests (every
# example through `attnc run --check` at small N, malformed specs, the
# report, resources), the C ABI of `--emit=obj` and the unit tests, plus
# test/Sanitize (the cost model and report on extreme sizes).
# Any sanitizer report fails the test that triggered it (halt_on_error).
#
# Not here: the C API and Python tests (a sanitized shared library would
# need the sanitizer runtimes as shared libraries, preloaded into Python;
# the C API is a thin layer over the compiler library attnc runs) and the
# libFuzzer targets (they carry their own ASan build). Leak detection is off: MLIR's and LLVM's global
# registries are deliberately never freed.
#
# The last line is the summary `N passed, N failed` (lit's counts).
#
#===----------------------------------------------------------------------===#
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-sanitize}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"

mkdir -p "$build"
if ! cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
    "-DCMAKE_C_FLAGS_RELEASE=-O1" "-DCMAKE_CXX_FLAGS_RELEASE=-O1" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" \
    -DATTN_ENABLE_FUZZERS=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit > "$build.configure.log" 2>&1; then
  cat "$build.configure.log"
  echo "0 passed, 1 failed"
  exit 1
fi
if ! cmake --build "$build" --target attnc attn-opt AttnUnitTests; then
  echo "0 passed, 1 failed"
  exit 1
fi

export ASAN_OPTIONS="detect_leaks=0:detect_odr_violation=0:halt_on_error=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
log="$build/sanitize.log"
# gpu-c-abi links a plain C program with the (sanitized) GPU runtime library.
/usr/lib/llvm-22/bin/lit -sv --filter-out 'gpu-c-abi' \
  "$build/test/Dialect" "$build/test/Conversion" "$build/test/Codegen" \
  "$build/test/Pipelines" "$build/test/attnc" \
  "$build/test/Integration/c-abi" "$build/test/Sanitize" "$build/test/Unit" \
  2>&1 | tee "$log"
status=${PIPESTATUS[0]}

count() {
  grep -E "^ *$1 *: +[0-9]+" "$log" | sed -E 's/[^0-9]*([0-9]+).*/\1/' |
    awk '{s += $1} END {print s + 0}'
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count 'Unexpectedly Passed') + $(count 'Unresolved') + $(count 'Timed Out') ))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
