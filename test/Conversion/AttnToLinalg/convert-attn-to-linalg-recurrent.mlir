// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s

// The recurrent order (Recurrent.cpp, DESIGN §1.2): per (batch, head) the
// tokens one at a time, in tiles of 4 whose features are mapped together,
//   S_i = g_i S_{i-1} + phi(k_i) v_i^T,  z_i = g_i z_{i-1} + phi(k_i)
//   o_i = phi(q_i)^T S_i (normalizer none)
// B = 1, H = 2, N = M = 8, D = E = 4, phi = identity, g = 0.5.

!t = tensor<1x2x8x4xf32>

// CHECK-LABEL: func.func @recurrent(
// CHECK-DAG:     %[[LOGG:.+]] = arith.constant -0.693147182 : f32
// CHECK:         scf.forall (%{{.*}}) in (2)
// S [4, 4] and z [4] start uninitialised: token 0 writes them whole
// CHECK:           %[[S0:.+]] = tensor.empty() : tensor<4x4xf32>
// CHECK:           %[[Z0:.+]] = tensor.empty() : tensor<4xf32>
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
// token 0 (no state in): z = k, S = k v^T, written into the buffers
// CHECK:               %[[FIRST:.+]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK:               %[[NEW:.+]]:2 = scf.if %[[FIRST]] -> (tensor<4xf32>, tensor<4x4xf32>) {
// CHECK:                 linalg.generic {{.*}} ins(%[[KR]] : tensor<1x4xf32>) outs(%[[ZI]] : tensor<4xf32>)
// CHECK:                 linalg.generic {{.*}} ins(%[[KR]], %[[VR]] : tensor<1x4xf32>, tensor<1x4xf32>) outs(%[[SI]] : tensor<4x4xf32>)
// CHECK:                   arith.mulf
// CHECK-NEXT:              linalg.yield
// later tokens: z = g z + k, S = g S + k v^T, in place
// CHECK:               } else {
// CHECK:                 linalg.generic {{.*}} ins(%[[KR]], %[[GR]] : tensor<1x4xf32>, tensor<1xf32>) outs(%[[ZI]] : tensor<4xf32>)
// CHECK:                 linalg.generic {{.*}} ins(%[[KR]], %[[VR]], %[[GR]] : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1xf32>) outs(%[[SI]] : tensor<4x4xf32>)
// CHECK:                 ^bb0(%[[KE:.+]]: f32, %[[VE:.+]]: f32, %[[GE:.+]]: f32, %[[SE:.+]]: f32):
// CHECK:                   %[[KV:.+]] = arith.mulf %[[KE]], %[[VE]] : f32
// CHECK:                   %[[SG:.+]] = arith.mulf %[[SE]], %[[GE]] : f32
// CHECK:                   arith.addf %[[SG]], %[[KV]] : f32
// o = q^T S against the updated state
// CHECK:               linalg.generic {{.*}} ins(%[[QR]], %[[NEW]]#1 : tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK:               scf.yield %[[NEW]]#1, %[[NEW]]#0, %{{.*}}
func.func @recurrent(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay 0.5 mask causal normalizer none order recurrent : !t, !t, !t -> !t
  return %o : !t
}

// -----

// A state in and out over W = 32 feature rows (DESIGN §1.2; decode_step's
// form at a smaller size): S lives in the final state's output from the
// start, and each token updates it 16 rows at a time, multiplying each
// block into num = phi(q)^T S while it is in cache:
//   num += q[f0 : f0 + 16] S[f0 : f0 + 16],  S[f0 : f0 + 16] = g S + k v^T.
// Token 0 reads S0's block instead of S's: S = g S0 + k v^T (no copy of S0).
// CHECK-LABEL: func.func @state_rows(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<1x2x?x32xf32>, %{{[a-z0-9]+}}: tensor<1x2x?x32xf32>, %{{[a-z0-9]+}}: tensor<1x2x?x8xf32>, %[[S0IN:[a-z0-9]+]]: tensor<1x2x32x8xf32>
// CHECK:         scf.forall (%[[H:.+]]) in (2) shared_outs(%{{.*}} = %{{.*}}, %[[SOUT:.+]] = %{{.*}}) -> (tensor<1x2x?x8xf32>, tensor<1x2x32x8xf32>)
// CHECK:           %[[SBUF:.+]] = tensor.extract_slice %[[SOUT]][0, %[[H]], 0, 0] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<1x2x32x8xf32> to tensor<32x8xf32>
// CHECK:           %[[S0:.+]] = tensor.extract_slice %[[S0IN]][0, %[[H]], 0, 0] [1, 1, 32, 8] [1, 1, 1, 1] : tensor<1x2x32x8xf32> to tensor<32x8xf32>
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[SBUF]],
// CHECK:             %[[FIRST:.+]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK:             scf.for %[[F0:[a-z0-9]+]] = %c0 to %c32 step %c16 iter_args(%[[ST:[a-z0-9]+]] = %{{.*}}, %[[NUM:[a-z0-9]+]] = %{{.*}}) -> (tensor<32x8xf32>, tensor<1x8xf32>)
// CHECK:               %[[OUT:.+]] = tensor.extract_slice %[[ST]][%[[F0]], 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
// CHECK:               %[[PREV:.+]] = tensor.extract_slice %[[S0]][%[[F0]], 0] [16, 8] [1, 1] : tensor<32x8xf32> to tensor<16x8xf32>
// CHECK:               %[[UP:.+]] = scf.if %[[FIRST]] -> (tensor<16x8xf32>) {
// CHECK:                 linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[PREV]] : tensor<1x16xf32>, tensor<1x8xf32>, tensor<1xf32>, tensor<16x8xf32>) outs(%[[OUT]] : tensor<16x8xf32>)
// CHECK:               } else {
// CHECK:                 linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x16xf32>, tensor<1x8xf32>, tensor<1xf32>) outs(%[[OUT]] : tensor<16x8xf32>)
// CHECK:               %[[PART:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[UP]] : tensor<1x16xf32>, tensor<16x8xf32>) outs(%[[NUM]] : tensor<1x8xf32>)
// CHECK:               %[[BACK:.+]] = tensor.insert_slice %[[UP]] into %[[ST]][%[[F0]], 0] [16, 8] [1, 1] : tensor<16x8xf32> into tensor<32x8xf32>
// CHECK:               scf.yield %[[BACK]], %[[PART]]
func.func @state_rows(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x8xf32>, %s0: tensor<1x2x32x8xf32>) -> (tensor<1x2x?x8xf32>, tensor<1x2x32x8xf32>) {
  %o, %s = attn.term kernel identity (%q, %k, %v) decay 0.5 state(%s0 : tensor<1x2x32x8xf32>) final_state mask causal normalizer none order recurrent : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>, tensor<1x2x32x8xf32>
  return %o, %s : tensor<1x2x?x8xf32>, tensor<1x2x32x8xf32>
}
