// RUN: attn-opt %s --convert-attn-to-linalg="tile-size=4" --canonicalize --cse | FileCheck %s --check-prefix=TILES

!t = tensor<1x2x?x4xf32>

// Without static-tiles (the CPU form) the strategies map every tile of Q and
// K where it is consumed. kv-first maps every tile of K and Q
// itself: no pass over the sequence, no padded copy of it. A key tile's step
// reads K's and V's rows in place, or the rows left before M padded with
// zeros, whose phi = 0 (elu1(0) = 1 is not). S += phi(K_t)^T V_t reads phi(K_t) as A^T
// (maps (k, i), (k, j) -> (i, j)), so nothing is transposed. The last query
// tile stores only its N - row0 real rows.
// TILES-DAG:   #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// TILES-DAG:   #[[AT:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// TILES-DAG:   #[[MM_B:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// TILES-DAG:   #[[MM_C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// TILES-DAG:   #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// TILES-DAG:   #[[TR:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// TILES-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// TILES-DAG:   #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// TILES-LABEL: func.func @kv_first_tiles(
// TILES-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// TILES-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// TILES-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// TILES-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// TILES:         %[[N:.+]] = tensor.dim %[[Q]], %c2
// TILES:         %[[M:.+]] = tensor.dim %[[K]], %c2
// TILES:         %[[KTILES:.+]] = arith.ceildivui %[[M]], %c4 : index
// TILES:         scf.forall (%[[H:.+]]) in (2) shared_outs
// TILES:           scf.for %[[KI:.+]] = %c0 to %[[KTILES]] step %c1 iter_args(%[[S:.+]] = %{{.*}}, %[[Z:.+]] = %{{.*}})
// TILES:             %[[ROW0:.+]] = arith.muli %[[KI]], %c4 : index
// TILES:             %[[END:.+]] = arith.addi %[[ROW0]], %c4 : index
// TILES:             %[[WHOLE:.+]] = arith.cmpi ule, %[[END]], %[[M]] : index
// One step per key tile: a whole tile reads K's and V's slices in place (no
// copies, no mask): phi(K_t) = elu1(K_t), S += phi(K_t)^T V_t (A^T: maps
// (k, i), (k, j) -> (i, j)), z += column sums of phi(K_t), the row loop
// outermost. The last tile pads the rows left (from min(row0, M)) with zeros,
// sets phi = 0 on the padding rows r >= min(T, M - row0), and marks its ops
// attn.partial_tile (they run once per loop: attn-tile-and-vectorize keeps
// their code small).
// TILES:             %[[START:.+]] = arith.minui %[[ROW0]], %[[M]] : index
// TILES:             %[[STEP:.+]]:2 = scf.if %[[WHOLE]] -> (tensor<4x4xf32>, tensor<4xf32>) {
// TILES:               %[[KS:.+]] = tensor.extract_slice %[[K]][0, %[[H]], %[[ROW0]], 0] [1, 1, 4, 4]
// TILES:               %[[VS:.+]] = tensor.extract_slice %[[V]][0, %[[H]], %[[ROW0]], 0] [1, 1, 4, 4]
// TILES-NOT:           bufferization.alloc_tensor
// TILES:               %[[PHIK:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], {{.*}} ins(%[[KS]] : tensor<4x4xf32>)
// TILES:                 math.exp
// TILES-NOT:             linalg.index
// TILES:               linalg.yield
// TILES:               %[[NEWS:.+]] = linalg.generic {indexing_maps = [#[[AT]], #[[MM_B]], #[[MM_C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PHIK]], %[[VS]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S]] : tensor<4x4xf32>)
// TILES:               %[[NEWZ:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[COL]]], iterator_types = ["reduction", "parallel"]} ins(%[[PHIK]] : tensor<4x4xf32>) outs(%[[Z]] : tensor<4xf32>)
// TILES:               scf.yield %[[NEWS]], %[[NEWZ]]
// TILES:             } else {
// TILES:               %[[LEFT:.+]] = arith.subi %[[M]], %[[START]] : index
// TILES:               %[[KREST:.+]] = tensor.extract_slice %[[K]][0, %[[H]], %[[START]], 0] [1, 1, %[[LEFT]], 4]
// TILES:               %[[KPAD:.+]] = tensor.pad %[[KREST]]
// TILES:               %[[VREST:.+]] = tensor.extract_slice %[[V]][0, %[[H]], %[[START]], 0] [1, 1, %[[LEFT]], 4]
// TILES:               %[[VPAD:.+]] = tensor.pad %[[VREST]]
// TILES:               %[[VALIDK:.+]] = arith.minui %[[LEFT]], %c4 : index
// TILES:               %[[PHIKP:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], {{.*}} ins(%[[KPAD]] : tensor<4x4xf32>) {{.*}} attrs = {attn.partial_tile}
// TILES:                 math.exp
// TILES:                 %[[R:.+]] = linalg.index 0 : index
// TILES:                 %[[REAL:.+]] = arith.cmpi ult, %[[R]], %[[VALIDK]] : index
// TILES:                 arith.select %[[REAL]]
// TILES:               linalg.generic {{.*}} ins(%[[PHIKP]], %[[VPAD]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S]] : tensor<4x4xf32>) attrs = {attn.partial_tile}
// TILES:               linalg.generic {{.*}} ins(%[[PHIKP]] : tensor<4x4xf32>) outs(%[[Z]] : tensor<4xf32>) attrs = {attn.partial_tile}
// TILES:             scf.yield %[[STEP]]#0, %[[STEP]]#1
// Query pass: phi(Q_t) from Q's tile, padded only when the tile is partial.
// TILES:         scf.forall (%{{.*}}, %[[QT:.+]]) in (2, %{{.*}}) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<1x2x?x4xf32>)
// TILES:           %[[QROW0:.+]] = arith.muli %[[QT]], %c4 : index
// TILES:           %[[QSTART:.+]] = arith.minui %[[QROW0]], %[[N]] : index
// TILES:           %[[QLEFT:.+]] = arith.subi %[[N]], %[[QSTART]] : index
// TILES:           %[[VALID:.+]] = arith.minui %[[QLEFT]], %c4 : index
// TILES:           %[[PHIQ:.+]] = scf.if %{{.*}} -> (tensor<4x4xf32>)
// TILES:             %[[QS:.+]] = tensor.extract_slice %[[Q]]
// TILES:             linalg.generic {{.*}} ins(%[[QS]] : tensor<4x4xf32>)
// TILES:               math.exp
// TILES:           } else {
// TILES:             tensor.pad
// TILES:               math.exp
// TILES:           %[[NUM:.+]] = linalg.generic {{.*}} ins(%[[PHIQ]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// TILES:           %[[DEN:.+]] = linalg.generic {{.*}} ins(%[[PHIQ]], %{{.*}} : tensor<4x4xf32>, tensor<4xf32>)
// r = 1 / (den + eps), 0 where den + eps = 0; O_t = num * r on the real rows
// only, stored in place
// TILES:           %[[NUMV:.+]] = tensor.extract_slice %[[NUM]][0, 0] [%[[VALID]], 4]
// TILES:           %[[DENV:.+]] = tensor.extract_slice %[[DEN]][0] [%[[VALID]]]
// TILES:           %[[RECIPS:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[DENV]] : tensor<?xf32>)
// TILES:           ^bb0(%[[D_S:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES:             %[[DE:.+]] = arith.addf %[[D_S]], %[[EPS]] : f32
// TILES:             %[[IS_ZERO:.+]] = arith.cmpf oeq, %[[DE]], %[[ZERO]] : f32
// TILES:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[DE]] : f32
// TILES:             arith.select %[[IS_ZERO]], %[[ZERO]], %[[RECIP]] : f32
// TILES:           %[[O:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[NUMV]], %[[RECIPS]] : tensor<?x4xf32>, tensor<?xf32>)
// TILES:           ^bb0(%[[N_S:[a-z0-9_]+]]: f32, %[[R_S:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES:             arith.mulf %[[N_S]], %[[R_S]] : f32
// TILES:           tensor.parallel_insert_slice %[[O]] into %[[OUT]][0, %{{.*}}, %[[QROW0]], 0] [1, 1, %[[VALID]], 4]
func.func @kv_first_tiles(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// Chunked causal kv-first in the CPU form: each chunk maps its own rows of Q
// and K (phi(K_c) masked past M, then transposed once for both products) and
// writes its real rows into this head's rows of the output, in place; no
// padded sequence and no padded output.
// TILES-LABEL: func.func @chunked_tiles(
// TILES-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// TILES-NOT:     tensor.pad
// TILES:         %[[N:.+]] = tensor.dim %[[Q]], %c2
// TILES:         scf.forall (%[[H:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<1x2x?x4xf32>)
// TILES:           %[[HEAD:.+]] = tensor.extract_slice %[[OUT]][0, %[[H]], 0, 0] [1, 1, %[[N]], 4]
// TILES:           scf.for %[[CI:.+]] = %c0 to %{{.*}} step %c1 iter_args(%[[S:.+]] = %{{.*}}, %[[Z:.+]] = %{{.*}}, %[[ROWS:.+]] = %[[HEAD]])
// TILES:             %[[ROW0:.+]] = arith.muli %[[CI]], %c4 : index
// phi(Q_c)
// TILES:             %[[QSTART:.+]] = arith.minui %[[ROW0]], %[[N]] : index
// TILES:             %[[PHIQ:.+]] = scf.if
// TILES:               linalg.generic
// phi(K_c), 0 past M, and phi(K_c)^T
// TILES:             %[[PHIK:.+]] = scf.if
// TILES:               linalg.generic
// TILES:             } else {
// TILES:               linalg.generic
// TILES:                 arith.cmpi ult
// TILES:             %[[PHIKT:.+]] = linalg.generic {indexing_maps = [#[[TR]], #[[ID2]]], {{.*}} ins(%[[PHIK]] : tensor<4x4xf32>)
// TILES:             %[[VC:.+]] = scf.if
// num = phi(Q_c) S_{c-1} + tril(phi(Q_c) phi(K_c)^T) V_c
// TILES:             linalg.generic {{.*}} ins(%[[PHIQ]], %[[S]] : tensor<4x4xf32>, tensor<4x4xf32>)
// TILES:             %[[A:.+]] = linalg.generic {{.*}} ins(%[[PHIQ]], %[[PHIKT]] : tensor<4x4xf32>, tensor<4x4xf32>)
// TILES:               arith.cmpi ule
// the plain A V_c where sum(V_c * 0) = 0 (every V finite), else without the
// hidden pairs' terms
// TILES:             %[[POISON:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[VC]] : tensor<4x4xf32>)
// TILES:               %[[NANIFNOTFINITE:.+]] = arith.mulf %{{.+}}, %[[ZERO:.+]] : f32
// TILES:               arith.addf %{{.+}}, %[[NANIFNOTFINITE]] fastmath<reassoc> : f32
// TILES:             %[[FINITE:.+]] = arith.cmpf oeq
// TILES:             scf.if %[[FINITE]] -> (tensor<4x4xf32>) {
// TILES:               linalg.generic {{.*}} ins(%{{.*}}, %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>)
// TILES:             } else {
// TILES:               linalg.generic {{.*}} ins(%{{.*}}, %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>)
// TILES:                 arith.select
// The chunk's real rows, min(C, N - min(row0, N)), stored at min(row0, N)
// TILES:             %[[QLEFT:.+]] = arith.subi %[[N]], %[[QSTART]] : index
// TILES:             %[[REAL:.+]] = arith.minui %[[QLEFT]], %c4 : index
// TILES:             %[[O:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x4xf32>)
// TILES:             %[[NEWROWS:.+]] = tensor.insert_slice %[[O]] into %[[ROWS]][%[[QSTART]], 0] [%[[REAL]], 4]
// S_c = S_{c-1} + phi(K_c)^T V_c
// TILES:             %[[NEWS:.+]] = linalg.generic {{.*}} ins(%[[PHIKT]], %[[VC]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S]] : tensor<4x4xf32>)
// TILES:             scf.yield %[[NEWS]], %{{.*}}, %[[NEWROWS]]
// TILES:           tensor.parallel_insert_slice %{{.*}} into %[[OUT]][0, %[[H]], 0, 0] [1, 1, %[[N]], 4]
func.func @chunked_tiles(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first chunk 4 : !t, !t, !t -> !t
  return %0 : !t
}

// qk-first in the CPU form: one parallel pass over (batch, head, key tile)
// writes K_t^T into its panel [B, H, T, W, tile], straight into the
// output's slice (a whole tile transposed from K in place, only the last one
// padded first); a pass over (batch, head) pads V's last key tile; each
// query tile then scales its own rows of Q (Q_t s) instead of reading a
// scaled, padded copy of Q, and reads V's whole tiles in place.
// TILES-LABEL: func.func @qk_first_tiles(
// TILES-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// TILES-DAG:     %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// TILES-DAG:     %[[SLACK:.+]] = arith.constant 8.000000e+00 : f32
// TILES-NOT:     linalg.transpose
// TILES:         %[[PANELS:.+]] = scf.forall (%[[H:.+]], %[[KT:.+]]) in (2, %[[KTILES:.+]]) shared_outs(%[[PO:.+]] = %{{.*}}) -> (tensor<1x2x?x4x4xf32>)
// TILES:           %[[ROW0:.+]] = arith.muli %[[KT]], %c4 : index
// TILES:           %[[PDEST:.+]] = tensor.extract_slice %[[PO]][0, %[[H]], %[[KT]], 0, 0] [1, 1, 1, 4, 4]
// TILES:           %[[KTT:.+]] = scf.if
// TILES:             %[[KTILE:.+]] = tensor.extract_slice %[[K]][0, %[[H]], %[[ROW0]], 0] [1, 1, 4, 4]
// TILES:             linalg.generic {indexing_maps = [#[[TR]], #[[ID2]]], {{.*}} ins(%[[KTILE]] : tensor<4x4xf32>) outs(%[[PDEST]] : tensor<4x4xf32>)
// TILES:           } else {
// TILES:             %[[KPAD:.+]] = tensor.pad
// TILES:             linalg.generic {indexing_maps = [#[[TR]], #[[ID2]]], {{.*}} ins(%[[KPAD]] : tensor<4x4xf32>) outs(%[[PDEST]] : tensor<4x4xf32>) attrs = {attn.partial_tile}
// TILES:           tensor.parallel_insert_slice %[[KTT]] into %[[PO]][0, %[[H]], %[[KT]], 0, 0] [1, 1, 1, 4, 4]
// The last key tile of V, rows M - (T - 1) 4 of it real:
// TILES:         %[[LASTROW0:.+]] = arith.muli %{{.+}}, %c4 : index
// TILES:         %[[LASTROWS:.+]] = arith.subi %{{.+}}, %[[LASTROW0]] : index
// TILES:         %[[LASTV:.+]] = scf.forall (%[[LH:.+]]) in (2) shared_outs(%[[LO:.+]] = %{{.*}}) -> (tensor<1x2x4x4xf32>)
// TILES:           %[[VREST:.+]] = tensor.extract_slice %[[V]][0, %[[LH]], %[[LASTROW0]], 0] [1, 1, %[[LASTROWS]], 4]
// TILES:           %[[VPAD:.+]] = tensor.pad %[[VREST]]
// TILES:           tensor.parallel_insert_slice %[[VPAD]] into %[[LO]][0, %[[LH]], 0, 0] [1, 1, 4, 4]
// TILES:         scf.forall (%{{.*}}, %{{.*}}) in (2, %{{.*}}) shared_outs
// Q_t s, from Q's slice in place
// TILES:           scf.if
// TILES:             %[[QTILE:.+]] = tensor.extract_slice %[[Q]]
// TILES:             linalg.generic {{.*}} ins(%[[QTILE]] : tensor<4x4xf32>)
// TILES:               arith.mulf %{{.*}}, %[[SCALE]] : f32
// TILES:           scf.for %[[KI:.+]] = %c0 to %[[KTILES]]
// TILES:             %[[COL0:.+]] = arith.muli %[[KI]], %c4 : index
// TILES:             tensor.extract_slice %[[PANELS]][0, %{{.*}}, %[[KI]], 0, 0] [1, 1, 1, 4, 4]
// V_t: V's own rows for a whole tile, the padded last tile otherwise.
// TILES:             %[[VT:.+]] = scf.if
// TILES:               tensor.extract_slice %[[V]][0, %{{.*}}, %[[COL0]], 0] [1, 1, 4, 4]
// TILES:             } else {
// TILES:               tensor.extract_slice %[[LASTV]][0, %{{.*}}, 0, 0] [1, 1, 4, 4]
// The reference maximum m moves only where the tile's maximum exceeds it
// by more than 8 (or m = -inf): m' = (tileMax > m + 8) ? tileMax : m, and
// c = (m == -inf) ? 0 : exp(m - m'), which is exactly 1 while m stays.
// TILES:             %[[TMAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// TILES:               arith.maxnumf
// TILES:             linalg.generic {{.*}} ins(%[[M:.+]], %[[TMAX]] : tensor<4xf32>, tensor<4xf32>)
// TILES:             ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[TM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES-NEXT:          %[[REACH:.+]] = arith.addf %[[OLD]], %[[SLACK]] : f32
// TILES-NEXT:          %[[RISES:.+]] = arith.cmpf ogt, %[[TM]], %[[REACH]] : f32
// TILES-NEXT:          %[[NEWM:.+]] = arith.select %[[RISES]], %[[TM]], %[[OLD]] : f32
// TILES-NEXT:          %[[NONE:.+]] = arith.cmpf oeq, %[[OLD]], %[[NEG_INF:.+]] : f32
// TILES-NEXT:          %[[DIFF:.+]] = arith.subf %[[OLD]], %[[NEWM]] : f32
// TILES-NEXT:          %[[EXP:.+]] = math.exp %[[DIFF]] : f32
// TILES-NEXT:          arith.select %[[NONE]], %{{.+}}, %[[EXP]] : f32
// TILES:             linalg.generic {{.*}} ins(%[[TMAX]] : tensor<4xf32>) outs(%[[M]] : tensor<4xf32>)
// TILES-NEXT:        ^bb0(%[[TM2:[a-z0-9_]+]]: f32, %[[OLD2:[a-z0-9_]+]]: f32):
// TILES-NEXT:          %[[REACH2:.+]] = arith.addf %[[OLD2]], %[[SLACK]] : f32
// TILES-NEXT:          %[[RISES2:.+]] = arith.cmpf ogt, %[[TM2]], %[[REACH2]] : f32
// TILES-NEXT:          arith.select %[[RISES2]], %[[TM2]], %[[OLD2]] : f32
// c acc only where some row's correction c differs from 1 (une: a NaN c
// scales too); once the maxima settle every c is 1 and acc is used as is.
// TILES:             %[[CHANGED:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<1xf32>)
// TILES:               arith.cmpf une
// TILES:               arith.maximumf
// TILES:             %[[ANYC:.+]] = tensor.extract %[[CHANGED]]
// TILES:             %[[ANY:.+]] = arith.cmpf ogt, %[[ANYC]]
// TILES:             scf.if %[[ANY]] -> (tensor<4x4xf32>) {
// TILES:               linalg.generic
// TILES:                 arith.mulf
// TILES:             } else {
// TILES:               scf.yield %{{.+}} : tensor<4x4xf32>
// P V_t: plain where the tile is wholly visible (FULL) or sum(V_t * 0) = 0
// (every V finite), else without the hidden pairs' terms
// TILES:             %[[EXACT:.+]] = scf.if %{{.+}} -> (i1) {
// TILES:               scf.yield %true : i1
// TILES:             } else {
// TILES:               linalg.generic {{.*}} ins(%[[VT]] : tensor<4x4xf32>)
// TILES:                 arith.mulf
// TILES:                 arith.addf {{.*}} fastmath<reassoc>
// TILES:               arith.cmpf oeq
// TILES:             scf.if %[[EXACT]] -> (tensor<4x4xf32>) {
// TILES:             } else {
// TILES:                 arith.select
func.func @qk_first_tiles(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) order qk_first : !t, !t, !t -> !t
  return %0 : !t
}

// Where the quotient is not acc / z (normaliser length: acc / visible keys,
// or rows with eps > 0) the numerators depend on m itself: m stays the exact
// maximum, max(m, tileMax).
// TILES-LABEL: func.func @qk_first_exact_max(
// TILES:         scf.for
// TILES:           linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>)
// TILES-NEXT:      ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[TM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES-NEXT:        arith.maximumf %[[OLD]], %[[TM]] : f32
// TILES:           linalg.generic {{.*}} ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<4xf32>)
// TILES-NEXT:      ^bb0(%[[TM2:[a-z0-9_]+]]: f32, %[[OLD2:[a-z0-9_]+]]: f32):
// TILES-NEXT:        arith.maximumf %[[OLD2]], %[[TM2]] : f32
// TILES-LABEL: func.func @qk_first_eps(
// TILES:         scf.for
// TILES:           linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4xf32>, tensor<4xf32>)
// TILES-NEXT:      ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[TM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES-NEXT:        arith.maximumf %[[OLD]], %[[TM]] : f32
func.func @qk_first_exact_max(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) normalizer length order qk_first : !t, !t, !t -> !t
  return %0 : !t
}
func.func @qk_first_eps(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) eps 1.0e-3 order qk_first : !t, !t, !t -> !t
  return %0 : !t
}

// FAVOR+'s stabiliser in the CPU form (m = 6): the keys subtract one constant
// c = max(0, max_f |w_f|^2 / 2 - 36), each query row its own
// c_r = max_f (w x')_f - |x'|^2 / 2 - 20, and row r's eps becomes
// eps exp(-(c_r + c)): num and den of the row are both scaled by
// exp(-(c_r + c)), so the quotient is the unstabilised one.
// TILES-LABEL: func.func @favor_tiles(
// TILES-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// TILES-DAG:     %[[QROOM:.+]] = arith.constant 2.000000e+01 : f32
// TILES-DAG:     %[[KROOM:.+]] = arith.constant 3.600000e+01 : f32
// TILES-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// TILES:         %[[CT:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1xf32>)
// TILES:           %[[ABOVE:.+]] = arith.subf %{{.*}}, %[[KROOM]] : f32
// TILES:           arith.maximumf %{{.*}}, %[[ABOVE]] : f32
// TILES:         %[[C:.+]] = tensor.extract %[[CT]]
// key pass: phi(K_t) = exp(w x' - |x'|^2 / 2 - c) / sqrt(m)
// TILES:         scf.forall
// TILES:           scf.for
// TILES:             ^bb0(%[[KN:[a-z0-9_]+]]: f32, %[[KP:[a-z0-9_]+]]: f32):
// TILES:               %[[KARG:.+]] = arith.subf %[[KP]], %[[KN]] : f32
// TILES:               %[[KSHIFT:.+]] = arith.subf %[[KARG]], %[[C]] : f32
// TILES:               math.exp %[[KSHIFT]] : f32
// query pass: m_r = max_f (w x')_f, phi(Q_t) = exp(w x' - (m_r - 20)) / sqrt(m)
// TILES:         scf.forall
// TILES:           %[[PMAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PROJ:.+]] : tensor<4x6xf32>) outs(%{{.*}} : tensor<4xf32>)
// TILES:             arith.maxnumf {{.*}} fastmath<reassoc,nnan>
// TILES:           %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[PMAX]] : tensor<4xf32>) outs(%[[PROJ]] : tensor<4x6xf32>)
// TILES:             %[[TOP:.+]] = arith.subf %{{.*}}, %[[QROOM]] : f32
// TILES:             %[[QARG:.+]] = arith.subf %{{.*}}, %[[TOP]] : f32
// TILES:             math.exp %[[QARG]] : f32
// c_r = m_r - |x'|^2 / 2 - 20; eps_r = eps exp(-(c_r + c))
// TILES:           %[[CR:.+]] = linalg.generic {{.*}} ins(%[[PMAX]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// TILES:             %[[DIFF:.+]] = arith.subf
// TILES:             arith.subf %[[DIFF]], %[[QROOM]] : f32
// TILES:           %[[ROWEPS:.+]] = linalg.generic {{.*}} ins(%[[CR]] : tensor<4xf32>)
// TILES:             %[[TOTAL:.+]] = arith.addf %{{.*}}, %[[C]] : f32
// TILES:             %[[NEG:.+]] = arith.negf %[[TOTAL]] : f32
// TILES:             %[[FACTOR:.+]] = math.exp %[[NEG]] : f32
// TILES:             arith.mulf %[[FACTOR]], %[[EPS]] : f32
// r_r = 1 / (den_r + eps_r); O_r = num_r * r_r
// TILES:           %[[ROWEPS_REAL:.+]] = tensor.extract_slice %[[ROWEPS]]
// TILES:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %[[ROWEPS_REAL]] : tensor<?xf32>, tensor<?xf32>)
// TILES:           ^bb0(%[[DEN_E:[a-z0-9_]+]]: f32, %[[EPS_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES:             %[[DE:.+]] = arith.addf %[[DEN_E]], %[[EPS_E]] : f32
// TILES:             arith.divf %[[ONE]], %[[DE]] : f32
// TILES:           linalg.generic {{.*}} ins(%{{.*}}, %[[RECIPS]] : tensor<?x4xf32>, tensor<?xf32>)
// TILES:           ^bb0(%[[NUM_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// TILES:             arith.mulf %[[NUM_E]], %[[R_E]] : f32
func.func @favor_tiles(%q: !t, %k: !t, %v: !t, %w: tensor<6x4xf32>) -> !t {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<6x4xf32>) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// C19 without static tiles: bf16 Q, K and V are never widened whole; each
// 4-row tile is widened as it is loaded, inside the loops over the tiles
// (the state pass reads K and V tiles, the query pass Q tiles).
// TILES-LABEL: func.func @bf16_tiles(
// TILES-NOT:     arith.extf
// TILES:         scf.forall
// TILES:           linalg.generic {{.*}} ins(%{{.+}} : tensor<4x4xbf16>) outs(%{{.+}} : tensor<4x4xf32>)
// TILES-NEXT:      ^bb0(%[[X:.+]]: bf16, %{{.+}}: f32):
// TILES-NEXT:        arith.extf %[[X]] : bf16 to f32
// TILES:         scf.forall
// TILES:           linalg.generic {{.*}} ins(%{{.+}} : tensor<4x4xbf16>) outs(%{{.+}} : tensor<4x4xf32>)
// TILES-NEXT:      ^bb0(%[[Y:.+]]: bf16, %{{.+}}: f32):
// TILES-NEXT:        arith.extf %[[Y]] : bf16 to f32
// TILES:         return
func.func @bf16_tiles(%q: tensor<1x2x?x4xbf16>, %k: tensor<1x2x?x4xbf16>, %v: tensor<1x2x?x4xbf16>) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : tensor<1x2x?x4xbf16>, tensor<1x2x?x4xbf16>, tensor<1x2x?x4xbf16> -> !t
  return %0 : !t
}

// Linformer's projections in the CPU form: X' = E X per (batch, head) as
// register-tiled products over 4-row tiles of the sequence,
// X'_bh += (E^T)_t^T X_t, E^T built once and its row tiles (like X's) zero
// past N; one parallel iteration per (batch, head).
// TILES-LABEL: func.func @linformer_projection(
// TILES-SAME:    %[[K:[a-z0-9]+]]: tensor<1x2x?x4xf32>, %{{.*}}: tensor<1x2x?x4xf32>, %[[E:[a-z0-9]+]]: tensor<3x?xf32>
// TILES:         %[[M:.+]] = tensor.dim %[[K]], %c2
// TILES:         %[[ET:.+]] = linalg.generic {indexing_maps = [#[[TR]], #[[ID2]]], {{.*}}} ins(%[[E]] : tensor<3x?xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// TILES:         %[[ET4:.+]] = tensor.expand_shape %[[ET]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, %[[M]], 3]
// TILES:         %[[T:.+]] = arith.ceildivui %[[M]], %c4 : index
// TILES:         scf.forall (%[[H:.+]]) in (2) shared_outs
// TILES:           scf.for %{{.*}} = %c0 to %[[T]] step %c1 iter_args(%[[ACC:.+]] = %{{.*}}) -> (tensor<3x4xf32>)
// TILES:             %[[PT:.+]] = scf.if %{{.*}} -> (tensor<4x3xf32>)
// TILES:             %[[KT:.+]] = scf.if %{{.*}} -> (tensor<4x4xf32>)
// X'_bh += (E^T)_t^T K_t
// TILES:             linalg.generic {indexing_maps = [#[[AT]], #[[MM_B]], #[[MM_C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PT]], %[[KT]] : tensor<4x3xf32>, tensor<4x4xf32>) outs(%[[ACC]] : tensor<3x4xf32>)
// TILES:           tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, %[[H]], 0, 0] [1, 1, 3, 4]
func.func @linformer_projection(%k: !t, %v: !t, %e: tensor<3x?xf32>, %f: tensor<3x?xf32>, %q: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) project(%e, %f : tensor<3x?xf32>, tensor<3x?xf32>) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}
