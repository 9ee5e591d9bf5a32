// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s --implicit-check-not="tensor<8x8xf32>"

// kv-first without a mask (KvFirst.cpp): a state pass per (batch, head) over
// the key tiles, S = sum_j phi(k_j) v_j^T and z = sum_j phi(k_j), then a query
// pass per query tile, O_t = phi(Q_t) S / phi(Q_t) z. B = 1, H = 2, N = M = 8,
// D = E = 4, T = 4. (Canonicalization drops the unit batch dimension of the
// foralls.)

!t = tensor<1x2x8x4xf32>

// The matmul maps: C[r, e] += A[r, c] B[c, e], and the matvec y[r] += A[r, w] x[w].
// CHECK-DAG:   #[[MM_A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[MM_B:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG:   #[[MM_C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @kv_first_state(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x8x4xf32>
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// phi = identity: K^T is the transposed key itself, tile by tile
// CHECK:         %[[KP:.+]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x2x2x4x4xf32>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[KP]] : tensor<1x2x2x4x4xf32>) {{.*}} permutation = [0, 1, 2, 4, 3]
// State pass: [B, H, W, E] states and [B, H, W] normalisers.
// CHECK:         %[[STATES:.+]]:2 = scf.forall (%[[H:.+]]) in (2) shared_outs(%[[SOUT:[a-z0-9]+]] = %{{.*}}, %[[ZOUT:[a-z0-9]+]] = %{{.*}}) -> (tensor<1x2x4x4xf32>, tensor<1x2x4xf32>)
// S_0 = 0, z_0 = 0
// CHECK:           %[[S0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4x4xf32>
// CHECK:           %[[Z0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4xf32>
// CHECK:           %[[LOOP:.+]]:2 = scf.for %[[KI:[a-z0-9]+]] = %c0 to %c2 step %c1 iter_args(%[[S:[a-z0-9]+]] = %[[S0]], %[[Z:[a-z0-9]+]] = %[[Z0]]) -> (tensor<4x4xf32>, tensor<4xf32>)
// CHECK:             %[[ROW0:.+]] = arith.muli %[[KI]], %c4 : index
// CHECK:             %[[KTILE:.+]] = tensor.extract_slice %[[KT]][0, %[[H]], %[[KI]], 0, 0] [1, 1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// CHECK:             %[[VTILE:.+]] = tensor.extract_slice %[[V]][0, %[[H]], %[[ROW0]], 0] [1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// S_t = S_{t-1} + phi(K_t)^T V_t
// CHECK:             %[[NEWS:.+]] = linalg.generic {indexing_maps = [#[[MM_A]], #[[MM_B]], #[[MM_C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[KTILE]], %[[VTILE]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S]] : tensor<4x4xf32>)
// CHECK:             ^bb0(%[[A:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK:               %[[AB:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK:               %[[SUM:.+]] = arith.addf %[[ACC]], %[[AB]] : f32
// CHECK:               linalg.yield %[[SUM]] : f32
// z_t = z_{t-1} + rowSum(phi(K_t)^T) = z_{t-1} + sum_{j in t} phi(k_j)
// CHECK:             %[[NEWZ:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[KTILE]] : tensor<4x4xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK:               arith.addf
// CHECK:             scf.yield %[[NEWS]], %[[NEWZ]] : tensor<4x4xf32>, tensor<4xf32>
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[LOOP]]#0 into %[[SOUT]][0, %[[H]], 0, 0] [1, 1, 4, 4]
// CHECK:             tensor.parallel_insert_slice %[[LOOP]]#1 into %[[ZOUT]][0, %[[H]], 0] [1, 1, 4]
// Query pass: one iteration per (head, query tile).
// CHECK:         %[[RES:.+]] = scf.forall (%[[H2:.+]], %[[QT:.+]]) in (2, 2) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<1x2x8x4xf32>)
// CHECK:           %[[QROW0:.+]] = arith.muli %[[QT]], %c4 : index
// CHECK:           %[[QTILE:.+]] = tensor.extract_slice %[[Q]][0, %[[H2]], %[[QROW0]], 0] [1, 1, 4, 4]
// CHECK:           %[[HS:.+]] = tensor.extract_slice %[[STATES]]#0[0, %[[H2]], 0, 0] [1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// CHECK:           %[[HZ:.+]] = tensor.extract_slice %[[STATES]]#1[0, %[[H2]], 0] [1, 1, 4] {{.*}} to tensor<4xf32>
// num = phi(Q_t) S
// CHECK:           %[[NUM:.+]] = linalg.generic {indexing_maps = [#[[MM_A]], #[[MM_B]], #[[MM_C]]], {{.*}} ins(%[[QTILE]], %[[HS]] : tensor<4x4xf32>, tensor<4x4xf32>)
// den = phi(Q_t) z
// CHECK:           %[[DEN:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[COL]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[QTILE]], %[[HZ]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:             %[[QZ:.+]] = arith.mulf
// CHECK:             arith.addf %{{.*}}, %[[QZ]] fastmath<reassoc> : f32
// r = 1 / (den + eps), 0 where den + eps = 0; O_t = num * r
// CHECK:           %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[DEN]] : tensor<4xf32>)
// CHECK:           ^bb0(%[[D_S:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             %[[DE:.+]] = arith.addf %[[D_S]], %[[EPS]] : f32
// CHECK:             %[[IS_ZERO:.+]] = arith.cmpf oeq, %[[DE]], %[[ZERO]] : f32
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[DE]] : f32
// CHECK:             %[[R_S:.+]] = arith.select %[[IS_ZERO]], %[[ZERO]], %[[RECIP]] : f32
// CHECK:             linalg.yield %[[R_S]] : f32
// CHECK:           %[[O:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[NUM]], %[[R]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[N_S:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             %[[OUT_E:.+]] = arith.mulf %[[N_S]], %[[R_E]] : f32
// CHECK:             linalg.yield %[[OUT_E]] : f32
// CHECK:           tensor.parallel_insert_slice %[[O]] into %[[OUT]][0, %[[H2]], %[[QROW0]], 0] [1, 1, 4, 4]
// CHECK:         return %[[RES]]
func.func @kv_first_state(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x?x4xf32>

// Dynamic N: phi(Q), phi(K) and V padded to whole tiles, the state loop runs
// over ceil(M / T) key tiles and the query pass over ceil(N / T) query tiles;
// padded keys have phi(k) = 0 rows, so they add nothing to S or z.
// `normalizer none`: O = num.
// CHECK-LABEL: func.func @kv_first_dynamic(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// CHECK:         %[[N:.+]] = tensor.dim %[[Q]], %c2
// CHECK:         %[[M:.+]] = tensor.dim %[[K]], %c2
// phi(x) = relu(x), before padding
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x2x?x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x2x?x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[QTILES:.+]] = arith.ceildivui %[[N]], %c4 : index
// CHECK:         %[[KTILES:.+]] = arith.ceildivui %[[M]], %c4 : index
// CHECK:         tensor.pad %[[PHIQ]]
// CHECK:         %[[PADK:.+]] = tensor.pad %[[PHIK]]
// CHECK:         %[[PADKP:.+]] = tensor.expand_shape %[[PADK]] {{.*}} output_shape [1, 2, %[[KTILES]], 4, 4] : tensor<1x2x?x4xf32> into tensor<1x2x?x4x4xf32>
// CHECK:         linalg.transpose ins(%[[PADKP]] : tensor<1x2x?x4x4xf32>)
// CHECK:         scf.forall (%{{.*}}) in (2) shared_outs
// CHECK:           scf.for %{{.*}} = %c0 to %[[KTILES]] step %c1
// CHECK:         %[[RES:.+]] = scf.forall (%{{.*}}, %{{.*}}) in (2, %[[QTILES]])
// CHECK:           %[[NUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// O_t = num (normalizer none): the copy folds away and den is never computed
// CHECK-NOT:       linalg.generic
// CHECK:           tensor.parallel_insert_slice %[[NUM]] into
// CHECK:         tensor.extract_slice %[[RES]][0, 0, 0, 0] [1, 2, %[[N]], 4]
func.func @kv_first_dynamic(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel relu (%q, %k, %v) order kv_first normalizer none : !t, !t, !t -> !t
  return %0 : !t
}

