// RUN: attn-opt %s --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s

// The recurrent order (Recurrent.cpp, DESIGN §1.2): per (batch, head) the
// tokens one at a time, in tiles of 4 whose features are mapped together,
//   S_i = g_i S_{i-1} + phi(k_i) v_i^T,  z_i = g_i z_{i-1} + phi(k_i)
//   o_i = phi(q_i)^T S_i (normalizer none)
// B = 1, H = 2, N = M = 8, D = E = 4, phi = identity, g = 0.5.

!t = tensor<1x2x8x4xf32>

// CHECK-LABEL: func.func @recurrent(
// CHECK-DAG:     %[[LOGG:.+]] = arith.constant -0.693147182 : f32
// CHECK:         scf.forall (%{{.*}}) in (2)
// S = 0 [4, 4], z = 0 [4]
// CHECK:           %[[S0:.+]] = linalg.fill {{.*}} -> tensor<4x4xf32>
// CHECK:           %[[Z0:.+]] = linalg.fill {{.*}} -> tensor<4xf32>
// CHECK:           scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[S:[a-z0-9]+]] = %[[S0]], %[[Z:[a-z0-9]+]] = %[[Z0]], %{{.*}} = %{{.*}})
// CHECK:             %[[K:.+]] = tensor.extract_slice %arg1{{.*}} to tensor<4x4xf32>
// CHECK:             %[[V:.+]] = tensor.extract_slice %arg2{{.*}} to tensor<4x4xf32>
// g_t = exp(log g), 1 past N
// CHECK:             %[[LOGS:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:               arith.select %{{.*}}, %[[LOGG]], %{{.*}} : f32
// CHECK:             %[[G:.+]] = linalg.generic {{.*}} ins(%[[LOGS]] : tensor<4xf32>)
// CHECK:               math.exp
// the tile's real tokens only
// CHECK:             %[[REAL:.+]] = arith.minui %{{.*}}, %c4 : index
// CHECK:             scf.for %[[R:.+]] = %c0 to %[[REAL]] step %c1 iter_args(%[[SI:[a-z0-9]+]] = %[[S]], %[[ZI:[a-z0-9]+]] = %[[Z]], %{{.*}} = %{{.*}})
// CHECK:               %[[KR:.+]] = tensor.extract_slice %[[K]][%[[R]], 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<1x4xf32>
// CHECK:               %[[VR:.+]] = tensor.extract_slice %[[V]][%[[R]], 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<1x4xf32>
// CHECK:               %[[QR:.+]] = tensor.extract_slice %{{.*}}[%[[R]], 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<1x4xf32>
// CHECK:               %[[GR:.+]] = tensor.extract_slice %[[G]][%[[R]]] [1] [1] : tensor<4xf32> to tensor<1xf32>
// S = g S + k v^T, in place
// CHECK:               %[[SN:.+]] = linalg.generic {{.*}} ins(%[[KR]], %[[VR]], %[[GR]] : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1xf32>) outs(%[[SI]] : tensor<4x4xf32>)
// CHECK:               ^bb0(%[[KE:.+]]: f32, %[[VE:.+]]: f32, %[[GE:.+]]: f32, %[[SE:.+]]: f32):
// CHECK:                 %[[SG:.+]] = arith.mulf %[[SE]], %[[GE]] : f32
// CHECK:                 %[[KV:.+]] = arith.mulf %[[KE]], %[[VE]] : f32
// CHECK:                 arith.addf %[[SG]], %[[KV]] : f32
// z = g z + k
// CHECK:               %[[ZN:.+]] = linalg.generic {{.*}} ins(%[[KR]], %[[GR]] : tensor<1x4xf32>, tensor<1xf32>) outs(%[[ZI]] : tensor<4xf32>)
// o = q^T S against the updated state
// CHECK:               linalg.generic {{.*}} ins(%[[QR]], %[[SN]] : tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK:               scf.yield %[[SN]], %[[ZN]], %{{.*}}
func.func @recurrent(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay 0.5 mask causal normalizer none order recurrent : !t, !t, !t -> !t
  return %o : !t
}
