// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s --implicit-check-not="tensor<8x8xf32>"

// kv-first with a causal or block mask (KvFirstChunked.cpp): per (batch, head)
// one loop over chunks c of C rows carrying the state of the keys before the
// chunk,
//   num_c = phi(Q_c) S_{c-1} + mask(phi(Q_c) phi(K_c)^T) V_c
//   den_c = phi(Q_c) z_{c-1} + rowSum(mask(phi(Q_c) phi(K_c)^T))
//   S_c = S_{c-1} + phi(K_c)^T V_c,  z_c = z_{c-1} + rowSum(phi(K_c)^T)
// so the extra memory is one W x E state (here 4x4) and the quadratic part
// is C x C. B = 1, H = 2, N = M = 8, D = E = 4, phi = identity.

!t = tensor<1x2x8x4xf32>

// causal, chunk 2: four chunks, both the carried state and the causal chunk.
// CHECK-LABEL: func.func @causal_chunks(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x8x4xf32>
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// K^T chunk by chunk: [1, 2, 4 chunks, 2 keys, 4] -> [1, 2, 4, 4, 2]
// CHECK:         %[[KP:.+]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x2x4x2x4xf32>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[KP]] : tensor<1x2x4x2x4xf32>) {{.*}} permutation = [0, 1, 2, 4, 3]
// CHECK:         %[[RES:.+]] = scf.forall (%[[H:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<1x2x8x4xf32>)
// S_0 = 0, z_0 = 0; the head's rows are written chunk by chunk into [8, 4]
// CHECK:           %[[S0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4x4xf32>
// CHECK:           %[[Z0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4xf32>
// CHECK:           %[[HEAD0:.+]] = tensor.empty() : tensor<8x4xf32>
// CHECK:           %[[LOOP:.+]]:3 = scf.for %[[CI:[a-z0-9]+]] = %c0 to %c4 step %c1 iter_args(%[[S:[a-z0-9]+]] = %[[S0]], %[[Z:[a-z0-9]+]] = %[[Z0]], %[[HEAD:[a-z0-9]+]] = %[[HEAD0]]) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>)
// CHECK:             %[[ROW0:.+]] = arith.muli %[[CI]], %c2 : index
// CHECK:             %[[QC:.+]] = tensor.extract_slice %[[Q]][0, %[[H]], %[[ROW0]], 0] [1, 1, 2, 4] {{.*}} to tensor<2x4xf32>
// CHECK:             %[[KC:.+]] = tensor.extract_slice %[[KT]][0, %[[H]], %[[CI]], 0, 0] [1, 1, 1, 4, 2] {{.*}} to tensor<4x2xf32>
// CHECK:             %[[VC:.+]] = tensor.extract_slice %[[V]][0, %[[H]], %[[ROW0]], 0] [1, 1, 2, 4] {{.*}} to tensor<2x4xf32>
// num = phi(Q_c) S_{c-1}
// CHECK:             %[[NUM0:.+]] = linalg.generic {{.*}} ins(%[[QC]], %[[S]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// den = phi(Q_c) z_{c-1}
// CHECK:             %[[DEN0:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[QC]], %[[Z]] : tensor<2x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<2xf32>)
// A = phi(Q_c) phi(K_c)^T, C x C
// CHECK:             %[[A:.+]] = linalg.generic {{.*}} ins(%[[QC]], %[[KC]] : tensor<2x4xf32>, tensor<4x2xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// A[r, c] = c <= r ? A[r, c] : 0 (row and column offsets within the chunk agree)
// CHECK:             %[[AM:.+]] = linalg.generic {{.*}} outs(%[[A]] : tensor<2x2xf32>)
// CHECK:               %[[R:.+]] = linalg.index 0 : index
// CHECK:               %[[C:.+]] = linalg.index 1 : index
// CHECK:               %[[VIS:.+]] = arith.cmpi ule, %[[C]], %[[R]] : index
// CHECK:               arith.select %[[VIS]], %{{.*}}, %[[ZERO]] : f32
// den += rowSum(A)
// CHECK:             %[[DEN:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[AM]] : tensor<2x2xf32>) outs(%[[DEN0]] : tensor<2xf32>)
// num += A V_c without the hidden pairs' terms A[r, c] V[c, e] (c > r),
// which a NaN or infinity in V_c would poison (the CPU form takes the plain
// product where V_c is finite: cpu-tiles test)
// CHECK:             %[[NUM:.+]] = linalg.generic {{.*}} ins(%[[AM]], %[[VC]] : tensor<2x2xf32>, tensor<2x4xf32>) outs(%[[NUM0]] : tensor<2x4xf32>)
// CHECK:               %[[DR:.+]] = linalg.index 0 : index
// CHECK:               %[[DC:.+]] = linalg.index 2 : index
// CHECK:               %[[TERM:.+]] = arith.mulf
// CHECK:               %[[SUM:.+]] = arith.addf %{{.*}}, %[[TERM]] : f32
// CHECK:               %[[SEEN:.+]] = arith.cmpi ule, %[[DC]], %[[DR]] : index
// CHECK:               arith.select %[[SEEN]], %[[SUM]], %{{.*}} : f32
// r = 1 / (den + eps), 0 where den + eps = 0; O_c = num * r
// CHECK:             %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%[[DEN]] : tensor<2xf32>)
// CHECK:               %[[DE:.+]] = arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK:               %[[IS_ZERO:.+]] = arith.cmpf oeq, %[[DE]], %[[ZERO]] : f32
// CHECK:               %[[RECIP:.+]] = arith.divf %[[ONE]], %[[DE]] : f32
// CHECK:               arith.select %[[IS_ZERO]], %[[ZERO]], %[[RECIP]] : f32
// CHECK:             %[[O:.+]] = linalg.generic {{.*}} ins(%[[NUM]], %[[RECIPS]] : tensor<2x4xf32>, tensor<2xf32>)
// CHECK:             ^bb0(%[[NUM_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:               arith.mulf %[[NUM_E]], %[[R_E]] : f32
// CHECK:             %[[NEWHEAD:.+]] = tensor.insert_slice %[[O]] into %[[HEAD]][%[[ROW0]], 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
// S_c = S_{c-1} + phi(K_c)^T V_c
// CHECK:             %[[NEWS:.+]] = linalg.generic {{.*}} ins(%[[KC]], %[[VC]] : tensor<4x2xf32>, tensor<2x4xf32>) outs(%[[S]] : tensor<4x4xf32>)
// z_c = z_{c-1} + rowSum(phi(K_c)^T)
// CHECK:             %[[NEWZ:.+]] = linalg.generic {{.*}} ins(%[[KC]] : tensor<4x2xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK:             scf.yield %[[NEWS]], %[[NEWZ]], %[[NEWHEAD]] : tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>
// CHECK:           tensor.parallel_insert_slice %[[LOOP]]#2 into %[[OUT]][0, %[[H]], 0, 0] [1, 1, 8, 4]
// CHECK:         return %[[RES]]
func.func @causal_chunks(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask causal order kv_first chunk 2 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// block_causal(4), chunk 2: causal chunks, and the state restarts where a
// block does, every 4 / 2 = 2 chunks.
// CHECK-LABEL: func.func @block_causal_reset(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           scf.for %[[CI:[a-z0-9]+]] = %c0 to %c4 step %c1 iter_args(%[[S:[a-z0-9]+]] = %{{.*}}, %[[Z:[a-z0-9]+]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>)
// CHECK:             arith.cmpi ule
// S_c = S_{c-1} + phi(K_c)^T V_c, z_c = z_{c-1} + rowSum(phi(K_c)^T)
// CHECK:             %[[NEWS:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
// CHECK:             %[[NEWZ:.+]] = linalg.generic {{.*}} outs(%[[Z]] : tensor<4xf32>)
// keep = ((c + 1) mod 2 == 0) ? 0 : 1; S_c *= keep, z_c *= keep
// CHECK:             %[[NEXT:.+]] = arith.addi %[[CI]], %c1 : index
// CHECK:             %[[REM:.+]] = arith.remui %[[NEXT]], %c2 : index
// CHECK:             %[[RESTART:.+]] = arith.cmpi eq, %[[REM]], %c0 : index
// CHECK:             %[[KEEP:.+]] = arith.select %[[RESTART]], %[[ZERO]], %[[ONE]] : f32
// CHECK:             %[[KEPTS:.+]] = linalg.generic {{.*}} outs(%[[NEWS]] : tensor<4x4xf32>)
// CHECK:               arith.mulf %{{.*}}, %[[KEEP]] : f32
// CHECK:             %[[KEPTZ:.+]] = linalg.generic {{.*}} outs(%[[NEWZ]] : tensor<4xf32>)
// CHECK:               arith.mulf %{{.*}}, %[[KEEP]] : f32
// CHECK:             scf.yield %[[KEPTS]], %[[KEPTZ]], %{{.*}} : tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>
func.func @block_causal_reset(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask block_causal(4) order kv_first chunk 2 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// block_causal(4), chunk 3: 3 does not divide the block, so the chunk is
// the block (two chunks of 4) and the state restarts after every chunk
// (keep = 0 once folded).
// CHECK-LABEL: func.func @block_causal_chunk_is_block(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %{{.*}} = %c0 to %c2 step %c1 {{.*}} -> (tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>)
// CHECK:           tensor.extract_slice {{.*}} [1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// CHECK:           %[[KC:.+]] = tensor.extract_slice {{.*}} [1, 1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// CHECK:           %[[VC:.+]] = tensor.extract_slice {{.*}} [1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// CHECK:           arith.cmpi ule
// CHECK:           %[[NEWS:.+]] = linalg.generic {{.*}} ins(%[[KC]], %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:           %[[NEWZ:.+]] = linalg.generic {{.*}} ins(%[[KC]] : tensor<4x4xf32>)
// CHECK:           %[[KEPTS:.+]] = linalg.generic {{.*}} outs(%[[NEWS]] : tensor<4x4xf32>)
// CHECK:             arith.mulf %{{.*}}, %[[ZERO]] : f32
// CHECK:           %[[KEPTZ:.+]] = linalg.generic {{.*}} outs(%[[NEWZ]] : tensor<4xf32>)
// CHECK:             arith.mulf %{{.*}}, %[[ZERO]] : f32
// CHECK:           scf.yield %[[KEPTS]], %[[KEPTZ]]
func.func @block_causal_chunk_is_block(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask block_causal(4) order kv_first chunk 3 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// prior_blocks(4): the chunk is the block and a chunk sees exactly the blocks
// before it, so there is no intra-chunk product:
//   O_c = phi(Q_c) S_{c-1} / visible(i),  visible(i) = min((i / 4) 4, M)
// CHECK-LABEL: func.func @prior_blocks_carry(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         scf.for %[[CI:[a-z0-9]+]] = %c0 to %c2 step %c1 iter_args(%[[S:[a-z0-9]+]] = %{{.*}}, %[[Z:[a-z0-9]+]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[CI]], %c4 : index
// CHECK:           %[[QC:.+]] = tensor.extract_slice %{{.*}}[0, %{{.*}}, %[[ROW0]], 0] [1, 1, 4, 4]
// CHECK:           %[[KC:.+]] = tensor.extract_slice
// CHECK:           %[[VC:.+]] = tensor.extract_slice
// num = phi(Q_c) S_{c-1}
// CHECK:           %[[NUM:.+]] = linalg.generic {{.*}} ins(%[[QC]], %[[S]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:           %[[DEN:.+]] = linalg.generic {{.*}} ins(%[[QC]], %[[Z]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK-NOT:       linalg.index 1
// r = 1 / visible(i), 0 where no key is visible (the first block); O = num * r
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%[[DEN]] : tensor<4xf32>)
// CHECK:             %[[R:.+]] = linalg.index 0 : index
// CHECK:             %[[I:.+]] = arith.addi %[[ROW0]], %[[R]] : index
// CHECK:             %[[BLK:.+]] = arith.divui %[[I]], %c4 : index
// CHECK:             %[[START:.+]] = arith.muli %[[BLK]], %c4 : index
// CHECK:             %[[COUNT:.+]] = arith.minui %[[START]], %c8 : index
// CHECK:             %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:             %[[COUNTF:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK:             %[[NONE:.+]] = arith.cmpi eq, %[[COUNT64]], %c0_i64 : i64
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[COUNTF]] : f32
// CHECK:             arith.select %[[NONE]], %[[ZERO]], %[[RECIP]] : f32
// CHECK:           linalg.generic {{.*}} ins(%[[NUM]], %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[NUM_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[NUM_E]], %[[R_E]] : f32
// S_c = S_{c-1} + phi(K_c)^T V_c
// CHECK:           linalg.generic {{.*}} ins(%[[KC]], %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S]] : tensor<4x4xf32>)
func.func @prior_blocks_carry(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(4) order kv_first normalizer length : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x8x4xf32>

// block(4): a query sees its own block only, so the chunk is the block and
// nothing is carried: O_c = A V_c / rowSum(A), A = phi(Q_c) phi(K_c)^T.
// CHECK-LABEL: func.func @block_no_carry(
// CHECK:         scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%[[HEAD:[a-z0-9]+]] = %{{.*}}) -> (tensor<8x4xf32>)
// CHECK:           %[[QC:.+]] = tensor.extract_slice
// CHECK:           %[[KC:.+]] = tensor.extract_slice
// CHECK:           %[[VC:.+]] = tensor.extract_slice
// CHECK:           %[[A:.+]] = linalg.generic {{.*}} ins(%[[QC]], %[[KC]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NOT:       linalg.index
// CHECK:           %[[DEN:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x4xf32>)
// CHECK:           %[[NUM:.+]] = linalg.generic {{.*}} ins(%[[A]], %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%[[DEN]] : tensor<4xf32>)
// CHECK:           %[[O:.+]] = linalg.generic {{.*}} ins(%[[NUM]], %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           %[[NEWHEAD:.+]] = tensor.insert_slice %[[O]] into %[[HEAD]]
// CHECK-NEXT:      scf.yield %[[NEWHEAD]] : tensor<8x4xf32>
func.func @block_no_carry(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask block(4) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}
