// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg=tile-size=32 --canonicalize --cse | FileCheck %s --check-prefix=TILE32

// A run-time crossover (dynamic N, `order auto ... crossover X`) emits both
// orders behind `scf.if N >= X`. Each branch keeps its own tiles: the term's
// `chunk` is the kv-first chunk (attn-select-order chose it for kv-first),
// while the qk-first branch tiles by the pass's tile-size (64 by default).
// Both would once take the chunk, because the two branches shared one
// mutable tile.

!t = tensor<1x2x?x16xf32>

// CHECK-LABEL: func.func @crossover_causal(
// CHECK:         %[[N:.+]] = tensor.dim %{{.*}}, %c2 : tensor<1x2x?x16xf32>
// CHECK:         %[[USE_KV:.+]] = arith.cmpi uge, %[[N]], %c49 : index
// CHECK:         scf.if %[[USE_KV]] -> (tensor<1x2x?x16xf32>) {
// kv-first branch: chunks of C = 128 rows, S_c = S_{c-1} + phi(K_c)^T V_c
// carried as a 16x16 state, causal scores within the 128x128 chunk.
// CHECK:           %[[LONGEST:.+]] = arith.maxui %[[N]], %[[N]]
// CHECK:           %[[CHUNKS:.+]] = arith.ceildivui %[[LONGEST]], %c128
// CHECK:           scf.forall (%{{.*}}) in (2)
// CHECK:             scf.for %{{.*}} = %c0 to %[[CHUNKS]] {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>, tensor<?x16xf32>)
// CHECK:               tensor.extract_slice {{.*}} [1, 1, 128, 16] {{.*}} to tensor<128x16xf32>
// CHECK:               outs(%{{.*}} : tensor<128x128xf32>)
// CHECK-NOT:           tensor<64x
// CHECK:         } else {
// qk-first branch: 64 query rows per iteration, 64x64 score tiles
// S = Q_t K_t^T, running (z, acc) of 64 rows.
// CHECK:           %[[QTILES:.+]] = arith.ceildivui %[[N]], %c64
// CHECK-NOT:       %c128
// CHECK:           scf.forall (%{{.*}}, %{{.*}}) in (2, %[[QTILES]])
// CHECK:             scf.for {{.*}} -> (tensor<64xf32>, tensor<64x16xf32>, tensor<64x64xf32>)
// CHECK:               linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<16x64xf32>) outs(%{{.*}} : tensor<64x64xf32>)
// CHECK-NOT:       tensor<128x
// CHECK:         return

// With tile-size=32 the qk-first branch follows the option; the kv-first
// branch keeps the term's chunk.
// TILE32-LABEL: func.func @crossover_causal(
// TILE32:         scf.if
// TILE32:           arith.ceildivui %{{.*}}, %c128
// TILE32:           scf.for {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>, tensor<?x16xf32>)
// TILE32:         } else {
// TILE32:           arith.ceildivui %{{.*}}, %c32
// TILE32:             scf.for {{.*}} -> (tensor<32xf32>, tensor<32x16xf32>, tensor<32x32xf32>)
// TILE32:               outs(%{{.*}} : tensor<32x32xf32>)
func.func @crossover_causal(%q: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %q, %q) mask causal chunk 128 crossover 49 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x?x16xf32>

// block_causal: the kv-first chunk 16 divides the block of 32, so the state
// restarts every 2 chunks; the qk-first branch still tiles by 64.
// CHECK-LABEL: func.func @crossover_block_causal(
// CHECK:         %[[USE_KV:.+]] = arith.cmpi uge, %{{.*}}, %c100 : index
// CHECK:         scf.if %[[USE_KV]]
// CHECK:           arith.ceildivui %{{.*}}, %c16
// CHECK:             scf.for {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>, tensor<?x16xf32>)
// restart = (c + 1) mod 2 == 0
// CHECK:               arith.remui %{{.*}}, %c2
// CHECK:         } else {
// CHECK:           arith.ceildivui %{{.*}}, %c64
// CHECK:             scf.for {{.*}} -> (tensor<64xf32>, tensor<64x16xf32>, tensor<64x64xf32>)
// CHECK:               outs(%{{.*}} : tensor<64x64xf32>)
// CHECK:         return
// TILE32-LABEL: func.func @crossover_block_causal(
// TILE32:         scf.if
// TILE32:           arith.ceildivui %{{.*}}, %c16
// TILE32:         } else {
// TILE32:           arith.ceildivui %{{.*}}, %c32
// TILE32:               outs(%{{.*}} : tensor<32x32xf32>)
func.func @crossover_block_causal(%q: !t) -> !t {
  %0 = attn.term kernel relu (%q, %q, %q) mask block_causal(32) chunk 16 crossover 100 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x?x16xf32>

// No mask: kv-first has no chunks, and both branches tile by 64 (the
// term's chunk is not a qk-first tile here either).
// CHECK-LABEL: func.func @crossover_plain(
// TILE32-LABEL: func.func @crossover_plain(
// CHECK:         scf.if
// CHECK:           arith.ceildivui %{{.*}}, %c64
// CHECK:           scf.for {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>)
// CHECK:         } else {
// CHECK-NOT:       %c128
// CHECK:           arith.ceildivui %{{.*}}, %c64
// CHECK:             scf.for {{.*}} -> (tensor<64xf32>, tensor<64x16xf32>, tensor<64x64xf32>)
// CHECK:         return
func.func @crossover_plain(%q: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %q, %q) chunk 128 crossover 49 : !t, !t, !t -> !t
  return %0 : !t
}
