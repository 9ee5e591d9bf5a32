// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4" --canonicalize --cse | FileCheck %s

// Split-key qk-first (SplitKeys.cpp), the CPU form of a decode step: N = 1
// query per head, H = 4 query heads over H_kv = 2 key/value heads (r = 2),
// M dynamic. The r N = 2 query rows of a key/value head are one tile, so
// each key and value tile is read once per group; the key tiles split
// across forall iterations (512 keys = 128 tiles of 4 each), and a second
// forall merges the splits per query head.

// CHECK-LABEL: func.func @decode_gqa(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x4x1x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x8xf32>
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[SCALE:.+]] = arith.constant 0.353553385 : f32
// CHECK-DAG:     %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[M:.+]] = tensor.dim %[[K]], %c2
// splits = ceil(visible key tiles / 128)
// CHECK:         %[[SPLITS:.+]] = arith.maxui %{{.*}}, %c1 : index
// pass 1: per (batch, key/value head, split) the partial (acc, m, z) of the
// group's R = max(r N, 4) = 4 rows (2 real)
// CHECK:         %[[PART:.+]]:3 = scf.forall (%[[KVH:.+]], %[[SPLIT:.+]]) in (2, %[[SPLITS]]) shared_outs({{.*}}) -> (tensor<1x2x?x4x8xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>)
// Q_R^T [D, R]: row hh N + i = query i of head kvh r + hh, times s
// CHECK:           %[[HEAD0:.+]] = arith.muli %[[KVH]], %c2 : index
// CHECK:           %[[QT:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x4xf32>)
// CHECK:             %[[HEAD:.+]] = arith.addi %[[HEAD0]], %{{.*}} : index
// CHECK:             tensor.extract %[[Q]][%c0, %[[HEAD]], %c0, %{{.*}}]
// CHECK:             arith.mulf %{{.*}}, %[[SCALE]] : f32
// the split's key tiles [split 128, min(split 128 + 128, tiles))
// CHECK:           %[[FIRST:.+]] = arith.muli %[[SPLIT]], %[[C128]] : index
// CHECK:           scf.for %[[KT:.+]] = %[[FIRST]] to %{{.*}} step %c1 iter_args({{.*}}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
// K_t and V_t of head kvh, read in place (whole tiles) or padded (the last)
// CHECK:             tensor.extract_slice %[[K]][0, %[[KVH]], %{{.*}}, 0] [1, 1, 4, 8]
// CHECK:             tensor.extract_slice %[[V]][0, %[[KVH]], %{{.*}}, 0] [1, 1, 4, 8]
// S^T = K_t Q_R^T (keyTile x R), then S = (S^T)^T
// CHECK:             %[[ST:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[QT]] : tensor<4x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:             %[[S:.+]] = linalg.generic {{.*}} ins(%[[ST]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// the causal mask at the query's position M - 1 only where the tile needs it
// CHECK:             scf.if %{{.*}} -> (tensor<4x4xf32>)
// CHECK:               arith.select %{{.*}}, %{{.*}}, %[[NEG_INF]] : f32
// online softmax: m' = max(m, rowMax S), P = exp(S - m'), acc' = c acc + P V_t
// CHECK:             math.exp
// CHECK:             linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %[[KVH]], %[[SPLIT]], 0, 0] [1, 1, 1, 4, 8]
// pass 2: per query head h the rows (h - kvh r) N of its group's partials:
// m* = max_s m_s, c_s = exp(m_s - m*), z = sum c_s z_s, acc = sum c_s acc_s,
// o = acc * r, r = 1 / z (0 where z = 0)
// CHECK:         %[[OUT:.+]] = scf.forall (%[[H:.+]]) in (4) shared_outs(%{{.*}}) -> (tensor<1x4x1x8xf32>)
// CHECK:           %[[KVH2:.+]] = arith.divui %[[H]], %c2 : index
// CHECK:           %[[MAXES:.+]] = tensor.extract_slice %[[PART]]#1[0, %[[KVH2]], 0, %{{.*}}] [1, 1, %[[SPLITS]], 1]
// CHECK:           %[[BEST:.+]] = linalg.generic {{.*}} ins(%[[MAXES]] : tensor<?x1xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK:             arith.maximumf
// CHECK:           %[[C:.+]] = linalg.generic {{.*}} ins(%[[MAXES]], %[[BEST]] : tensor<?x1xf32>, tensor<1xf32>)
// CHECK:             arith.subf
// CHECK:             math.exp
// CHECK:           %[[Z:.+]] = linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<?x1xf32>, tensor<?x1xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK:           %[[ACC:.+]] = linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<?x1xf32>, tensor<?x1x8xf32>) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%[[Z]] : tensor<1xf32>)
// CHECK:             %[[DEN:.+]] = arith.addf
// CHECK:             arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK:           %[[O:.+]] = linalg.generic {{.*}} ins(%[[ACC]], %[[RECIPS]] : tensor<1x8xf32>, tensor<1xf32>)
// CHECK:           ^bb0(%[[ACC_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[ACC_E]], %[[R_E]] : f32
// CHECK:             tensor.parallel_insert_slice %[[O]] into %{{.*}}[0, %[[H]], 0, 0] [1, 1, 1, 8]
// CHECK:         return %[[OUT]]
func.func @decode_gqa(%q: tensor<1x4x1x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x4x1x8xf32> {
  %o = attn.term softmax (%q, %k, %v) mask causal : tensor<1x4x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x1x8xf32>
  return %o : tensor<1x4x1x8xf32>
}

// -----

// A dynamic N branches at run time: the split-key form while r N <= R
// (R = r max(1, 8 / r) = 8 for r = 1), qk-first's query tiles above.

// CHECK-LABEL: func.func @dynamic_queries(
// CHECK:         %[[N:.+]] = tensor.dim %{{.*}}, %c2 : tensor<1x2x?x8xf32>
// CHECK:         %[[FEW:.+]] = arith.cmpi ule, %[[N]], %c8 : index
// CHECK:         scf.if %[[FEW]] -> (tensor<1x2x?x8xf32>)
// CHECK:           scf.forall ({{.*}}) in (2, %{{.*}}) shared_outs({{.*}}) -> (tensor<1x2x?x8x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>)
// CHECK:         } else {
// CHECK:           scf.forall ({{.*}}) in (2, %{{.*}}) shared_outs({{.*}}) -> (tensor<1x2x?x8xf32>)
func.func @dynamic_queries(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.term softmax (%q, %k, %v) : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
