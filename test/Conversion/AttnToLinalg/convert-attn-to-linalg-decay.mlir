// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s

// Decay (DESIGN §1.2, Decay.cpp): w_ij = d_ij phi(q_i) . phi(k_j) with
// d_ij = prod_{t=j+1..i} g_t, computed from sums of log g so that every
// factor is exp(x) with x <= 0. Chunked kv-first with chunk C and the
// in-chunk cumulative log decay lambda_r = sum_{t=row0..row0+r} log g_t:
//   num_c = exp(lambda) * (phi(Q_c) S_{c-1}) + (A * exp(lambda_r - lambda_c)) V_c
//   S_c   = exp(lambda_last) S_{c-1} + (phi(K_c)^T * exp(lambda_last - lambda)) V_c
// B = 1, H = 2, N = M = 8, D = E = 4, phi = identity, g = 0.5, chunk 2.

!t = tensor<1x2x8x4xf32>

// CHECK-LABEL: func.func @decay_rate_chunks(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// log g = log 0.5
// CHECK-DAG:     %[[LOGG:.+]] = arith.constant -0.693147182 : f32
// CHECK:         scf.for %[[CI:[a-z0-9]+]] = %c0 to %c4 step %c1 iter_args(%[[S:[a-z0-9]+]] = %{{.*}}, %[[Z:[a-z0-9]+]] = %{{.*}}, %{{.*}} = %{{.*}})
// lambda_r = min(r + 1, real rows) log g
// CHECK:           %[[LAMBDA:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2xf32>)
// CHECK:             %[[R:.+]] = linalg.index 0 : index
// CHECK:             %[[R1:.+]] = arith.addi %[[R]], %c1 : index
// CHECK:             %[[COUNT:.+]] = arith.minui %[[R1]], %{{.*}} : index
// CHECK:             %[[COUNTF:.+]] = arith.sitofp
// CHECK:             arith.mulf %[[COUNTF]], %[[LOGG]] : f32
// num = phi(Q_c) S_{c-1} (normalizer none: den = phi(Q_c) z_{c-1} is dead and
// folds away)
// CHECK:           %[[NUM0:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<2x4xf32>, tensor<4x4xf32>)
// ... times exp(lambda_r): row r is r + 1 tokens past the state
// CHECK:           %[[NUM1:.+]] = linalg.generic {{.*}} ins(%[[LAMBDA]] : tensor<2xf32>) outs(%[[NUM0]] : tensor<2x4xf32>)
// CHECK:             %[[E1:.+]] = math.exp
// CHECK:             arith.mulf %{{.*}}, %[[E1]] : f32
// A = phi(Q_c) phi(K_c)^T, then A[r, c] exp(min(lambda_r - lambda_c, 0)) for c <= r, else 0
// CHECK:           %[[A:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:           %[[AD:.+]] = linalg.generic {{.*}} ins(%[[LAMBDA]], %[[LAMBDA]] : tensor<2xf32>, tensor<2xf32>) outs(%[[A]] : tensor<2x2xf32>)
// CHECK:             %[[AR:.+]] = linalg.index 0 : index
// CHECK:             %[[AC:.+]] = linalg.index 1 : index
// CHECK:             %[[VIS:.+]] = arith.cmpi ule, %[[AC]], %[[AR]] : index
// CHECK:             %[[DIFF:.+]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:             %[[LOGD:.+]] = arith.minimumf %[[DIFF]], %[[ZERO]] : f32
// CHECK:             %[[D:.+]] = math.exp %[[LOGD]] : f32
// CHECK:             %[[W:.+]] = arith.mulf %{{.*}}, %[[D]] : f32
// CHECK:             arith.select %[[VIS]], %[[W]], %[[ZERO]] : f32
// num += A_decayed V_c; O_c = num (normalizer none)
// CHECK:           %[[NUM:.+]] = linalg.generic {{.*}} ins(%[[AD]], %{{.*}} : tensor<2x2xf32>, tensor<2x4xf32>) outs(%[[NUM1]] : tensor<2x4xf32>)
// CHECK:           tensor.insert_slice %[[NUM]] into
// lambda_last = lambda[C - 1]; exp(lambda_last - lambda_c) weighs key c into the state
// CHECK:           %[[LAST:.+]] = tensor.extract_slice %[[LAMBDA]][1] [1] [1] : tensor<2xf32> to tensor<1xf32>
// CHECK:           %[[TOEND:.+]] = linalg.generic {{.*}} ins(%[[LAMBDA]], %[[LAST]] : tensor<2xf32>, tensor<1xf32>)
// CHECK:             arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[KD:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[TOEND]] : tensor<4x2xf32>, tensor<2xf32>)
// CHECK:             math.exp
// S_{c-1} exp(lambda_last), z_{c-1} exp(lambda_last)
// CHECK:           %[[SK:.+]] = linalg.generic {{.*}} ins(%[[LAST]] : tensor<1xf32>) outs(%[[S]] : tensor<4x4xf32>)
// CHECK:             math.exp
// CHECK:           %[[ZK:.+]] = linalg.generic {{.*}} ins(%[[LAST]] : tensor<1xf32>) outs(%[[Z]] : tensor<4xf32>)
// S_c = S_{c-1} exp(lambda_last) + phi(K_c)^T_decayed V_c
// CHECK:           %[[SN:.+]] = linalg.generic {{.*}} ins(%[[KD]], %{{.*}} : tensor<4x2xf32>, tensor<2x4xf32>) outs(%[[SK]] : tensor<4x4xf32>)
// CHECK:           %[[ZN:.+]] = linalg.generic {{.*}} ins(%[[KD]] : tensor<4x2xf32>) outs(%[[ZK]] : tensor<4xf32>)
// CHECK:           scf.yield %[[SN]], %[[ZN]], %{{.*}}
func.func @decay_rate_chunks(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay 0.5 mask causal normalizer none order kv_first chunk 2 : !t, !t, !t -> !t
  return %o : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// Per-token decay g [B, H, N]: lambda_r is the cumulative sum of the clamped
// log g_t over the chunk, 0 past N (padding is g = 1).
// CHECK-LABEL: func.func @decay_per_token_chunks(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x8xf32>
// CHECK-DAG:     %[[LOWEST:.+]] = arith.constant -8.000000e+01 : f32
// CHECK:         scf.for
// CHECK:           %[[LOGS:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2xf32>)
// CHECK:             %[[T:.+]] = arith.addi
// CHECK:             %[[IN:.+]] = arith.cmpi ult, %[[T]], %c8 : index
// CHECK:             %[[AT:.+]] = arith.minui %[[T]], %c7 : index
// CHECK:             %[[GT:.+]] = tensor.extract %[[G]][%c0, %{{.*}}, %[[AT]]] : tensor<1x2x8xf32>
// CHECK:             %[[LOG:.+]] = math.log %[[GT]] : f32
// CHECK:             %[[CL:.+]] = arith.maximumf %[[LOG]], %[[LOWEST]] : f32
// CHECK:             arith.select %[[IN]], %[[CL]], %{{.*}} : f32
// lambda_r = sum_{c <= r} log g_{row0 + c}
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[LOGS]] : tensor<2xf32>)
// CHECK:             %[[LR:.+]] = linalg.index 0 : index
// CHECK:             %[[LC:.+]] = linalg.index 1 : index
// CHECK:             %[[UPTO:.+]] = arith.cmpi ule, %[[LC]], %[[LR]] : index
// CHECK:             %[[SUM:.+]] = arith.addf
// CHECK:             arith.select %[[UPTO]], %[[SUM]], %{{.*}} : f32
func.func @decay_per_token_chunks(%q: !t, %k: !t, %v: !t, %g: tensor<1x2x8xf32>) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay(%g : tensor<1x2x8xf32>) mask causal order kv_first chunk 2 : !t, !t, !t -> !t
  return %o : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// qk-first with one gamma per head: d_ij = exp((i - j) log gamma_h) on every
// score tile (no tile skips the weights), 0 above the diagonal.
// CHECK-LABEL: func.func @decay_per_head_qk_first(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x2x8x4xf32>, %[[G:[a-z0-9]+]]: tensor<2xf32>
// CHECK:         scf.forall (%[[H:[a-z0-9]+]], %{{.*}}) in (2, 2)
// CHECK:           scf.for
// CHECK:             linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4xf32>)
// i = row0 + r, j = col0 + c (shared with the mask's test j <= i)
// CHECK:               linalg.index 1 : index
// CHECK-NEXT:          %[[I:[a-z0-9_]+]] = arith.addi
// CHECK-NEXT:          %[[J:[a-z0-9_]+]] = arith.addi
// CHECK:               arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK:               %[[GH:.+]] = tensor.extract %[[G]][%[[H]]] : tensor<2xf32>
// CHECK:               %[[LG:.+]] = math.log %[[GH]] : f32
// CHECK:               %[[LGC:.+]] = arith.maximumf %[[LG]], %{{.*}} : f32
// CHECK:               %[[DIST:.+]] = arith.subi %[[I]], %[[J]] : index
// CHECK:               %[[DISTF:.+]] = arith.sitofp
// CHECK:               %[[X:.+]] = arith.mulf %[[DISTF]], %[[LGC]] : f32
// CHECK:               %[[LOGD:.+]] = arith.select %{{.*}}, %[[X]], %{{.*}} : f32
// CHECK:               %[[D:.+]] = math.exp %[[LOGD]] : f32
// CHECK:               arith.mulf %{{.*}}, %[[D]] : f32
func.func @decay_per_head_qk_first(%q: !t, %k: !t, %v: !t, %g: tensor<2xf32>) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay(%g : tensor<2xf32>) mask causal order qk_first : !t, !t, !t -> !t
  return %o : !t
}
