// The CPU pipeline and the tiling it rests on, on attn functions of the
// sizes the examples use (H = 8, D = 64, N = 4096 or dynamic).
//
// 1. attn-opt --attn-lower-to-llvm succeeds and leaves only the LLVM and
//    OpenMP dialects: each function and its C-interface wrapper
//    (_mlir_ciface_NAME, which attnc's JIT and the C ABI call) are llvm.func,
//    no op of another dialect is left (--implicit-check-not), and the
//    parallel loops are OpenMP's.
// RUN: attn-opt %s --attn-lower-to-llvm 2>/dev/null | FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not='{{(attn|linalg|scf|tensor|memref|bufferization|arith|math|vector|affine|cf|func)\.[a-z]}}'
//
// 2. convert-attn-to-linalg: tiled loops on tensors, never an N x N (or
//    N x M) matrix, and for a crossover term both orders behind scf.if.
// RUN: attn-opt %s --convert-attn-to-linalg | FileCheck %s --check-prefix=LINALG
//
// The checks can fail: --attn-select-order alone keeps the attn ops.
// RUN: attn-opt %s --attn-select-order 2>/dev/null | not FileCheck %s --check-prefix=LLVM \
// RUN:   --implicit-check-not='{{(attn|linalg|scf|tensor|memref|bufferization|arith|math|vector|affine|cf|func)\.[a-z]}}' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CAN-FAIL
// CAN-FAIL: error:

!s = tensor<1x8x4096x64xf32>
!d = tensor<1x8x?x64xf32>

// LLVM-LABEL: llvm.func @softmax_static(
// LLVM:         omp.parallel
// LLVM:         omp.wsloop
// LLVM:         llvm.return
// LLVM-LABEL: llvm.func @_mlir_ciface_softmax_static(
// LLVM-SAME:    attributes {llvm.emit_c_interface}
// LLVM:         llvm.call @softmax_static(

// Softmax, qk-first: one forall iteration per (batch, head, 64-row query
// tile), a loop over the key tiles carrying the online normaliser (max, sum)
// and the accumulator, 64x64 tiles of scores.
// LINALG-LABEL: func.func @softmax_static(
// LINALG-NOT:     attn.term
// LINALG-NOT:     tensor<1x8x4096x4096xf32>
// LINALG:         scf.forall ({{.*}}) in (1, 8, %{{.*}}) shared_outs(
// LINALG:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>)
// LINALG:             linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins({{.*}} : tensor<64x64xf32>, tensor<64x64xf32>) outs({{.*}} : tensor<64x64xf32>)
// LINALG:             math.exp
// LINALG:             scf.yield {{.*}} : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
// LINALG:           scf.forall.in_parallel
// LINALG:             tensor.parallel_insert_slice
// LINALG-NOT:     tensor<1x8x4096x4096xf32>
// LINALG:         return
func.func @softmax_static(%q: !s, %k: !s, %v: !s) -> !s {
  %0 = attn.term softmax (%q, %k, %v) : !s, !s, !s -> !s
  return %0 : !s
}

// LLVM-LABEL: llvm.func @causal_kernel(
// LLVM:         omp.parallel
// LLVM-LABEL: llvm.func @_mlir_ciface_causal_kernel(

// Causal linear attention, kv-first: one forall iteration per (batch, head),
// a loop over chunks of 64 carrying the 64x64 state phi(K)^T V and the 64-wide
// normaliser of the keys before the chunk and this head's 4096 output rows
// (written chunk by chunk in place); no 4096 x 4096 matrix, and no
// per-position state.
// LINALG-LABEL: func.func @causal_kernel(
// LINALG-NOT:     attn.term
// LINALG-NOT:     tensor<1x8x4096x4096xf32>
// LINALG:         scf.forall ({{.*}}) in (1, 8) shared_outs(
// LINALG:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<4096x64xf32>)
// LINALG:             linalg.generic
// LINALG:             arith.cmpi ule
// LINALG:             scf.yield {{.*}} : tensor<64x64xf32>, tensor<64xf32>, tensor<4096x64xf32>
// LINALG-NOT:     tensor<1x8x4096x4096xf32>
// LINALG-NOT:     tensor<4096x64x64xf32>
// LINALG:         return
func.func @causal_kernel(%q: !s, %k: !s, %v: !s) -> !s {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first chunk 64 : !s, !s, !s -> !s
  return %0 : !s
}

// LLVM-LABEL: llvm.func @causal_softmax_dynamic(
// LLVM-LABEL: llvm.func @_mlir_ciface_causal_softmax_dynamic(

// Dynamic N, causal softmax: the same tiling, with the number of query tiles
// and the range of visible key tiles computed from N at run time.
// LINALG-LABEL: func.func @causal_softmax_dynamic(
// LINALG-NOT:     attn.term
// LINALG:         tensor.dim %{{.*}}, %{{.*}} : tensor<1x8x?x64xf32>
// LINALG:         scf.forall ({{.*}}) in (1, 8, %{{.*}}) shared_outs(
// LINALG:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>)
// LINALG-NOT:     tensor<1x8x?x?xf32>
// LINALG:         return
func.func @causal_softmax_dynamic(%q: !d, %k: !d, %v: !d) -> !d {
  %0 = attn.term softmax (%q, %k, %v) mask causal : !d, !d, !d -> !d
  return %0 : !d
}

// LLVM-LABEL: llvm.func @crossover(
// LLVM:         llvm.icmp "uge"
// LLVM:         llvm.cond_br
// LLVM-LABEL: llvm.func @_mlir_ciface_crossover(

// A crossover term (as attn-select-order leaves it for a dynamic N): both
// orders, kv-first (a state pass, then a query pass) when N >= 49, else
// qk-first.
// LINALG-LABEL: func.func @crossover(
// LINALG-NOT:     attn.term
// LINALG:         %[[N:.+]] = tensor.dim %{{.*}}, %{{.*}} : tensor<1x8x?x64xf32>
// LINALG:         %[[C49:.+]] = arith.constant 49 : index
// LINALG:         %[[KV:.+]] = arith.cmpi uge, %[[N]], %[[C49]] : index
// LINALG:         scf.if %[[KV]] -> (tensor<1x8x?x64xf32>) {
// LINALG:           scf.forall ({{.*}}) in (1, 8) shared_outs({{.*}}) -> (tensor<1x8x64x64xf32>, tensor<1x8x64xf32>)
// LINALG:             scf.for {{.*}} iter_args({{.*}}) -> (tensor<64x64xf32>, tensor<64xf32>)
// LINALG:           scf.forall ({{.*}}) in (1, 8, %{{.*}}) shared_outs(
// LINALG:         } else {
// LINALG:           scf.forall ({{.*}}) in (1, 8, %{{.*}}) shared_outs(
// LINALG:             scf.for {{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
// LINALG:         }
// LINALG:         return
func.func @crossover(%q: !d, %k: !d, %v: !d) -> !d {
  %0 = attn.term kernel elu1 (%q, %k, %v) crossover 49 : !d, !d, !d -> !d
  return %0 : !d
}

// LLVM-LABEL: llvm.func @gated_terms(
// LLVM-LABEL: llvm.func @_mlir_ciface_gated_terms(

// Two terms and a gate: attn.combine becomes one elementwise sum times the
// gate.
// LINALG-LABEL: func.func @gated_terms(
// LINALG-NOT:     attn.
// LINALG:         linalg.generic
// LINALG:           arith.addf
// LINALG:           arith.mulf
// LINALG:         return
func.func @gated_terms(%q: !s, %k: !s, %v: !s, %g: !s) -> !s {
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal(256) : !s, !s, !s -> !s
  %1 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(256) normalizer length : !s, !s, !s -> !s
  %2 = attn.combine %0, %1 gate(%g) : !s
  return %2 : !s
}
