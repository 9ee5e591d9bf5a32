// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg --canonicalize --cse | FileCheck %s

// A static N and M below the tile (64): qk-first's tiles shrink to the N
// query rows and the M keys rounded up to 8, not padded to 64 x 64 (at
// N = 32 the padded tile doubled the products); fewer than 8 rows stay
// unpadded (a decode step). N = M = 5: one 5 x 8 tile.
// S = Q_t K_t^T (5 x 4 times 4 x 8), then acc += W V_t (5 x 8 times 8 x 4).
// CHECK-LABEL: func.func @static_short(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<5x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<5x4xf32>)
// CHECK-NOT:     tensor<64x64xf32>
func.func @static_short(%q: tensor<1x2x5x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order qk_first : tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x5x4xf32>
  return %0 : tensor<1x2x5x4xf32>
}

// -----

// N = M = 45: the rows too are rounded up to 8 (the register tiles' rows; a
// remainder of 5 rows ran a slower loop): one 48 x 48 tile.
// CHECK-LABEL: func.func @static_odd(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<48x4xf32>, tensor<4x48xf32>) outs(%{{.*}} : tensor<48x48xf32>)
func.func @static_odd(%q: tensor<1x2x45x4xf32>, %k: tensor<1x2x45x4xf32>, %v: tensor<1x2x45x4xf32>) -> tensor<1x2x45x4xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) order qk_first : tensor<1x2x45x4xf32>, tensor<1x2x45x4xf32>, tensor<1x2x45x4xf32> -> tensor<1x2x45x4xf32>
  return %0 : tensor<1x2x45x4xf32>
}

// -----

// A dynamic N runs whole 64 x 64 tiles (one compiled loop for every N).
// CHECK-LABEL: func.func @dynamic_short(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x4xf32>, tensor<4x64xf32>) outs(%{{.*}} : tensor<64x64xf32>)
func.func @dynamic_short(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>, %v: tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order qk_first : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %0 : tensor<1x2x?x4xf32>
}

// -----

// Static N = 100 above the tile, M = 20 below it (cross-attention): 64-row
// query tiles against one 24-key tile.
// CHECK-LABEL: func.func @short_keys(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x4xf32>, tensor<4x24xf32>) outs(%{{.*}} : tensor<64x24xf32>)
func.func @short_keys(%q: tensor<1x2x100x4xf32>, %k: tensor<1x2x20x4xf32>, %v: tensor<1x2x20x4xf32>) -> tensor<1x2x100x4xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) order qk_first : tensor<1x2x100x4xf32>, tensor<1x2x20x4xf32>, tensor<1x2x20x4xf32> -> tensor<1x2x100x4xf32>
  return %0 : tensor<1x2x100x4xf32>
}

// -----

// kv-first's passes shrink the same way (whole 64-row tiles made N = 32 as
// slow as N = 64). M = 20 keys: one 24-key state tile,
// S = phi(K_t)^T V_t (24 x 4 against 24 x 4 into 4 x 4), z = colSum(phi(K_t));
// N = 45 queries: one 48-row query tile, num = phi(Q_t) S (48 x 4 times
// 4 x 4), den = phi(Q_t) z; the 45 real rows are normalized and stored.
// CHECK-LABEL: func.func @kv_first_short(
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<24x4xf32>, tensor<24x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<24x4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<48x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<48x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<48x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<48xf32>)
// CHECK-NOT:     tensor<64x4xf32>
func.func @kv_first_short(%q: tensor<1x2x45x4xf32>, %k: tensor<1x2x20x4xf32>, %v: tensor<1x2x20x4xf32>) -> tensor<1x2x45x4xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : tensor<1x2x45x4xf32>, tensor<1x2x20x4xf32>, tensor<1x2x20x4xf32> -> tensor<1x2x45x4xf32>
  return %0 : tensor<1x2x45x4xf32>
}
