// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="state-cache-bytes=49152" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg --canonicalize --cse | FileCheck %s --check-prefix=NOCACHE
// RUN: not attn-opt %s --split-input-file --convert-attn-to-linalg=state-cache-bytes=-1 2>&1 | FileCheck %s --check-prefix=BADCACHE

// kv-first's state pass (S += phi(K_t)^T V_t) reads a key tile of phi(K)
// (W wide) and of V (E wide) per register tile of S. With the L1 size
// given, the key tile halves from tile-size (64) until both tiles, in f32,
// fit: keys * (W + E) * 4 <= 48 KiB. W = E = 128: 64 keys are 64 KiB, 32
// keys 32 KiB. The query pass keeps its 64-row tiles.
// CHECK-LABEL: func.func @wide_state(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<1x2x?x128xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x128xf32>
// CHECK:         %[[M:.+]] = tensor.dim %[[K]], %c2
// CHECK:         %[[KTILES:.+]] = arith.ceildivui %[[M]], %c32 : index
// CHECK:         scf.forall
// CHECK:           scf.for %{{.+}} = %c0 to %[[KTILES]] step %c1
// CHECK:             arith.muli %{{.+}}, %c32 : index
// CHECK:         arith.ceildivui %{{.+}}, %c64 : index
// Without it, tile-size: 64 keys.
// NOCACHE-LABEL: func.func @wide_state(
// NOCACHE:         %[[KTILES:.+]] = arith.ceildivui %{{.+}}, %c64 : index
// NOCACHE-NOT:     %c32
// BADCACHE: convert-attn-to-linalg: state-cache-bytes must not be negative, got -1
!t = tensor<1x2x?x128xf32>
func.func @wide_state(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

// W = E = 64: 64 keys are 32 KiB, which fit: the key tile stays 64.
// CHECK-LABEL: func.func @narrow_state(
// CHECK-NOT:     %c32
// CHECK:         arith.ceildivui %{{.+}}, %c64 : index
// CHECK-NOT:     %c32
// CHECK:         return
!t = tensor<1x2x?x64xf32>
func.func @narrow_state(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

// FAVOR+ with m = 256 features and E = 64: 64 keys are 80 KiB, 32 keys
// 40 KiB. The key tile never goes below 32 keys, whatever the cache.
// CHECK-LABEL: func.func @favor_state(
// CHECK:         arith.ceildivui %{{.+}}, %c32 : index
!t = tensor<1x2x?x64xf32>
func.func @favor_state(%q: !t, %k: !t, %v: !t, %w: tensor<256x64xf32>) -> !t {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}
