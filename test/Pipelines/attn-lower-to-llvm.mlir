// RUN: attn-opt %s --attn-lower-to-llvm=cpu=x86-64-v3 | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-llvm=cpu=x86-64-v4 | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --attn-lower-to-llvm="parallel=0 vectorize=0" | FileCheck %s --check-prefix=SERIAL

!s = tensor<1x2x100x64xf32>
!d = tensor<1x2x?x64xf32>

// The whole pipeline leaves only the LLVM and OpenMP dialects: the C
// interface wrapper, OpenMP-parallel loops and, for the tile products,
// vector FMAs as wide as the CPU's register tile rows: 16 for AVX2 (4x16),
// 32 for AVX-512 (8x32).
// CHECK-NOT:   attn.
// CHECK-LABEL: llvm.func @softmax(
// CHECK:         omp.parallel
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-LABEL: llvm.func @_mlir_ciface_softmax(
// CHECK-LABEL: llvm.func @linear_dynamic(
// CHECK-LABEL: llvm.func @_mlir_ciface_linear_dynamic(
// CHECK-NOT:   {{(linalg|scf|tensor|memref|arith|vector)\.}}

// AVX512-LABEL: llvm.func @softmax(
// AVX512:         llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>

// SERIAL-NOT:  omp.
// SERIAL-NOT:  vector<32xf32>
// SERIAL-LABEL: llvm.func @softmax(
// SERIAL-LABEL: llvm.func @_mlir_ciface_softmax(
func.func @softmax(%q: !s) -> !s {
  %0 = attn.term softmax (%q, %q, %q) mask causal : !s, !s, !s -> !s
  return %0 : !s
}

func.func @linear_dynamic(%q: !d) -> !d {
  %0 = attn.term kernel elu1 (%q, %q, %q) mask causal : !d, !d, !d -> !d
  return %0 : !d
}
