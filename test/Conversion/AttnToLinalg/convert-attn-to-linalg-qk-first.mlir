// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s --implicit-check-not="tensor<8x8xf32>"

// qk-first (QkFirst.cpp): one scf.forall iteration per query tile of T rows,
// a loop over the visible key tiles carrying the running maximum m (softmax),
// the running sum z and the accumulator acc, then O_t = acc / z. N = M = 8,
// T = 4: two query tiles, two key tiles, never an 8x8 score matrix.

!t = tensor<1x1x8x4xf32>

// CHECK-LABEL: func.func @softmax_online(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// Q' = Q s (s = 1/sqrt(D) = 0.5), once per row
// CHECK:         %[[QS:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]] : f32
// K^T once, tile by tile (panel t = K[tT:(t+1)T]^T, contiguous), so that
// every score tile is a plain matmul
// CHECK:         %[[KP:.+]] = tensor.expand_shape %[[K]] {{\[}}[0], [1], [2, 3], [4]] {{.*}} into tensor<1x1x2x4x4xf32>
// CHECK:         %[[KT:.+]] = linalg.transpose ins(%[[KP]] : tensor<1x1x2x4x4xf32>) {{.*}} permutation = [0, 1, 2, 4, 3]
// CHECK:         %[[RES:.+]] = scf.forall (%[[QT:.+]]) in (2) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<1x1x8x4xf32>)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// CHECK:           %[[QTILE:.+]] = tensor.extract_slice %[[QS]][0, 0, %[[ROW0]], 0] [1, 1, 4, 4] {{.*}} to tensor<4x4xf32>
// m = -inf, z = 0, acc = 0
// CHECK:           %[[M0:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) {{.*}} -> tensor<4xf32>
// CHECK:           %[[Z0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4xf32>
// CHECK:           %[[ACC0:.+]] = linalg.fill ins(%[[ZERO]] : f32) {{.*}} -> tensor<4x4xf32>
// The score tile and its row maximum are loop-carried scratch (refilled per
// key tile, one buffer for the loop, not a copy of a zero tile per tile).
// CHECK:           %[[LOOP:.+]]:5 = scf.for %[[KI:[a-z0-9]+]] = %c0 to %c2 step %c1 iter_args(%[[M:[a-z0-9]+]] = %[[M0]], %[[Z:[a-z0-9]+]] = %[[Z0]], %[[ACC:[a-z0-9]+]] = %[[ACC0]], %[[SBUF:[a-z0-9]+]] = %{{.*}}, %[[MBUF:[a-z0-9]+]] = %{{.*}}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>)
// CHECK:             %[[COL0:.+]] = arith.muli %[[KI]], %c4 : index
// CHECK:             %[[KTILE:.+]] = tensor.extract_slice %[[KT]][0, 0, %[[KI]], 0, 0] [1, 1, 1, 4, 4]
// CHECK:             %[[VTILE:.+]] = tensor.extract_slice %[[V]][0, 0, %[[COL0]], 0] [1, 1, 4, 4]
// S = Q_t K_t^T
// CHECK:             %[[S0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[SBUF]] : tensor<4x4xf32>)
// CHECK:             %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QTILE]], %[[KTILE]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[S0]] : tensor<4x4xf32>)
// CHECK:               %[[PROD:.+]] = arith.mulf
// CHECK:               arith.addf %{{.*}}, %[[PROD]]
// W = S where every key of the tile is real (col0 + T - 1 < M), else
// W = (col0 + c < M) ? S : -inf   (no mask: only padded keys are hidden)
// CHECK:             %[[LAST:.+]] = arith.addi %[[COL0]], %c3 : index
// CHECK:             %[[WHOLE:.+]] = arith.cmpi ult, %[[LAST]], %c8 : index
// CHECK:             %[[W:.+]] = scf.if %[[WHOLE]] -> (tensor<4x4xf32>) {
// CHECK:               scf.yield %[[S]] : tensor<4x4xf32>
// CHECK:             } else {
// CHECK:               %[[MASKED:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
// CHECK:                 %[[C:.+]] = linalg.index 1 : index
// CHECK:                 %[[J:.+]] = arith.addi %[[COL0]], %[[C]] : index
// CHECK:                 %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c8 : index
// CHECK:                 arith.select %[[IN_RANGE]], %{{.*}}, %[[NEG_INF]] : f32
// CHECK:               scf.yield %[[MASKED]] : tensor<4x4xf32>
// rowMax(W) (NaN-ignoring: a NaN weight makes its exp, and the row, NaN)
// CHECK:             %[[MAX0:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[MBUF]] : tensor<4xf32>)
// CHECK:             %[[ROWMAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[W]] : tensor<4x4xf32>) outs(%[[MAX0]] : tensor<4xf32>)
// CHECK:               arith.maxnumf {{.*}} fastmath<reassoc,nnan>
// c = (oldMax == -inf) ? 0 : exp(oldMax - max(oldMax, rowMax(W)))
// CHECK:             %[[CORR:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[ROWMAX]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:             ^bb0(%[[OLD:[a-z0-9_]+]]: f32, %[[TMAX:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:               %[[MAXS:.+]] = arith.maximumf %[[OLD]], %[[TMAX]] : f32
// CHECK:               %[[NONE:.+]] = arith.cmpf oeq, %[[OLD]], %[[NEG_INF]] : f32
// CHECK:               %[[DIFF:.+]] = arith.subf %[[OLD]], %[[MAXS]] : f32
// CHECK:               %[[EXP:.+]] = math.exp %[[DIFF]] : f32
// CHECK:               arith.select %[[NONE]], %[[ZERO]], %[[EXP]] : f32
// newMax = max(oldMax, rowMax(W)), written over oldMax
// CHECK:             %[[NEWMAX:.+]] = linalg.generic {{.*}} ins(%[[ROWMAX]] : tensor<4xf32>) outs(%[[M]] : tensor<4xf32>)
// CHECK:               arith.maximumf
// shift = (newMax == -inf) ? 0 : newMax, per row, written over rowMax(W);
// P = exp(W - shift), written over W (a row with newMax = -inf holds only -inf weights: P = 0)
// CHECK:             %[[SHIFTS:.+]] = linalg.generic {{.*}} ins(%[[NEWMAX]] : tensor<4xf32>) outs(%[[ROWMAX]] : tensor<4xf32>)
// CHECK:             ^bb0(%[[NM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:               %[[NONE2:.+]] = arith.cmpf oeq, %[[NM]], %[[NEG_INF]] : f32
// CHECK:               arith.select %[[NONE2]], %[[ZERO]], %[[NM]] : f32
// CHECK:             %[[P:.+]] = linalg.generic {{.*}} ins(%[[SHIFTS]] : tensor<4xf32>) outs(%[[W]] : tensor<4x4xf32>)
// CHECK:             ^bb0(%[[SH:[a-z0-9_]+]]: f32, %[[WS:[a-z0-9_]+]]: f32):
// CHECK-NEXT:          %[[SHIFT:.+]] = arith.subf %[[WS]], %[[SH]] : f32
// CHECK-NEXT:          %[[EXP2:.+]] = math.exp %[[SHIFT]] : f32
// CHECK-NEXT:          linalg.yield %[[EXP2]] : f32
// z = c z + rowSum(P)
// CHECK:             %[[ZC:.+]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<4xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK:               arith.mulf
// CHECK:             %[[NEWZ:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<4x4xf32>) outs(%[[ZC]] : tensor<4xf32>)
// CHECK:               arith.addf
// acc = c acc + P V_t on a wholly visible tile (WHOLE, as for the weights);
// on the others each hidden pair's P[r, c] V[c, e] is dropped (select, not
// a multiplication by 0: 0 * NaN = NaN). The CPU form also takes the plain
// product where V_t is finite (cpu-tiles test).
// CHECK:             %[[ACCC:.+]] = linalg.generic {{.*}} ins(%[[CORR]] : tensor<4xf32>) outs(%[[ACC]] : tensor<4x4xf32>)
// CHECK:               arith.mulf
// CHECK:             %[[NEWACC:.+]] = scf.if %[[WHOLE]] -> (tensor<4x4xf32>) {
// CHECK:               %[[PLAIN:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[VTILE]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[ACCC]] : tensor<4x4xf32>)
// CHECK:               scf.yield %[[PLAIN]]
// CHECK:             } else {
// CHECK:               %[[DROPPED:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[VTILE]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[ACCC]] : tensor<4x4xf32>)
// CHECK:               ^bb0(%[[PV:[a-z0-9_]+]]: f32, %[[VV:[a-z0-9_]+]]: f32, %[[AV:[a-z0-9_]+]]: f32):
// CHECK:                 %[[TERM:.+]] = arith.mulf %[[PV]], %[[VV]] : f32
// CHECK:                 %[[SUMV:.+]] = arith.addf %[[AV]], %[[TERM]] : f32
// CHECK:                 %[[SEEN:.+]] = arith.cmpi ult, %{{.*}}, %c8 : index
// CHECK:                 arith.select %[[SEEN]], %[[SUMV]], %[[AV]] : f32
// CHECK:               scf.yield %[[DROPPED]]
// CHECK:             scf.yield %[[NEWMAX]], %[[NEWZ]], %[[NEWACC]], %[[P]], %[[SHIFTS]] : tensor<4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>
// r = 1 / (z + eps), 0 where the denominator is 0 (eps = 0 for softmax);
// O_t = acc * r
// CHECK:           %[[R:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#1 : tensor<4xf32>)
// CHECK:           ^bb0(%[[SUM:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             %[[DEN:.+]] = arith.addf %[[SUM]], %[[ZERO]] : f32
// CHECK:             %[[IS_ZERO:.+]] = arith.cmpf oeq, %[[DEN]], %[[ZERO]] : f32
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK:             %[[R_S:.+]] = arith.select %[[IS_ZERO]], %[[ZERO]], %[[RECIP]] : f32
// CHECK:             linalg.yield %[[R_S]] : f32
// CHECK:           %[[O:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#2, %[[R]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[NUM:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             %[[O_E:.+]] = arith.mulf %[[NUM]], %[[R_E]] : f32
// CHECK:             linalg.yield %[[O_E]] : f32
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[O]] into %[[OUT]][0, 0, %[[ROW0]], 0] [1, 1, 4, 4]
// CHECK:         return %[[RES]]
func.func @softmax_online(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) order qk_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// relu2 has no maximum to track: two loop-carried values, and the weights
// are summed as they are.
// CHECK-LABEL: func.func @relu2_tiles(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[EIGHTH:.+]] = arith.constant 1.250000e-01 : f32
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           %[[LOOP:.+]]:3 = scf.for {{.*}} iter_args(%[[Z:[a-z0-9]+]] = %{{.*}}, %[[ACC:[a-z0-9]+]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:             %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// W = relu(S)^2 on a tile of real keys, else W = (j < M) ? relu(S)^2 : 0
// CHECK:             %[[W:.+]] = scf.if %{{.*}} -> (tensor<4x4xf32>) {
// CHECK:               %[[SQUARED:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
// CHECK:               ^bb0(%[[SV0:[a-z0-9_]+]]: f32):
// CHECK:                 %[[R0:.+]] = arith.maximumf %[[SV0]], %[[ZERO]] : f32
// CHECK:                 arith.mulf %[[R0]], %[[R0]] : f32
// CHECK:               scf.yield %[[SQUARED]]
// CHECK:             } else {
// CHECK:               %[[MASKED:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
// CHECK:               ^bb0(%[[SV:[a-z0-9_]+]]: f32):
// CHECK:                 %[[IN_RANGE:.+]] = arith.cmpi ult, %{{.*}}, %c8 : index
// CHECK:                 %[[R:.+]] = arith.maximumf %[[SV]], %[[ZERO]] : f32
// CHECK:                 %[[SQ:.+]] = arith.mulf %[[R]], %[[R]] : f32
// CHECK:                 arith.select %[[IN_RANGE]], %[[SQ]], %[[ZERO]] : f32
// CHECK:               scf.yield %[[MASKED]]
// z += rowSum(W)
// CHECK:             %[[NEWZ:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4x4xf32>) outs(%[[Z]] : tensor<4xf32>)
// acc += W V_t (the plain product where it is exact)
// CHECK:             %[[NEWACC:.+]] = scf.if %{{.*}} -> (tensor<4x4xf32>) {
// CHECK:               linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[ACC]] : tensor<4x4xf32>)
// CHECK:             scf.yield %[[NEWZ]], %[[NEWACC]]
// O = acc * r, r = 1 / (visible keys), the length normaliser of relu2: 8 for
// every row, so r folds to 1/8
// CHECK:           %[[R:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#0 : tensor<4xf32>)
// CHECK-NEXT:      ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:        linalg.yield %[[EIGHTH]] : f32
// CHECK:           linalg.generic {{.*}} ins(%[[LOOP]]#1, %[[R]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[ACC_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[ACC_E]], %[[R_E]] : f32
func.func @relu2_tiles(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term relu2 (%q, %k, %v) : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// `order qk_first chunk 2`: the chunk is the qk-first tile (2 rows per
// iteration, 2x2 score tiles) instead of the pass's tile-size. A kernel term
// scores phi(q) . phi(k).
// CHECK-LABEL: func.func @kernel_qk_first_chunk(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// phi(Q) = relu(Q), phi(K) = relu(K)
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[PHIKP:.+]] = tensor.expand_shape %[[PHIK]] {{.*}} into tensor<1x1x4x2x4xf32>
// CHECK:         %[[PHIKT:.+]] = linalg.transpose ins(%[[PHIKP]] : tensor<1x1x4x2x4xf32>) {{.*}} permutation = [0, 1, 2, 4, 3]
// CHECK:         scf.forall (%[[QT:.+]]) in (4)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c2 : index
// CHECK:           tensor.extract_slice %[[PHIQ]][0, 0, %[[ROW0]], 0] [1, 1, 2, 4]
// CHECK:           %[[LOOP:.+]]:3 = scf.for %{{.*}} = %c0 to %c4 step %c1 {{.*}} -> (tensor<2xf32>, tensor<2x4xf32>, tensor<2x2xf32>)
// S = phi(Q_t) phi(K_t)^T, 2x2
// CHECK:             tensor.extract_slice %[[PHIKT]]{{.*}} [1, 1, 1, 4, 2] {{.*}} to tensor<4x2xf32>
// CHECK:             linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x2xf32>) outs(%{{.*}} : tensor<2x2xf32>)
// r = 1 / (z + eps); O = acc * r
// CHECK:           %[[R:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#0 : tensor<2xf32>)
// CHECK:             %[[DE:.+]] = arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK:             arith.divf %[[ONE]], %[[DE]] : f32
// CHECK:           linalg.generic {{.*}} ins(%[[LOOP]]#1, %[[R]] : tensor<2x4xf32>, tensor<2xf32>)
// CHECK:           ^bb0(%[[ACC_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[ACC_E]], %[[R_E]] : f32
// CHECK:           tensor.parallel_insert_slice {{.*}} [1, 1, 2, 4]
func.func @kernel_qk_first_chunk(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel relu (%q, %k, %v) order qk_first chunk 2 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x?x4xf32>

// Dynamic N: Q, K and V are padded with zero rows to whole tiles, the forall
// runs over ceil(N / T) tiles and the result is sliced back to N rows. Causal:
// the loop stops at the key tile of the tile's last real row.
// CHECK-LABEL: func.func @softmax_dynamic(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x?x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x?x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x?x4xf32>
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[N:.+]] = tensor.dim %[[Q]], %c2
// CHECK:         %[[M:.+]] = tensor.dim %[[K]], %c2
// the rows' positions are offset by M - N (bottom-right, DESIGN §1.3)
// CHECK:         %[[OFF:.+]] = arith.subi %[[M]], %[[N]] : index
// CHECK:         %[[QTILES:.+]] = arith.ceildivui %[[N]], %c4 : index
// CHECK:         %[[KTILES:.+]] = arith.ceildivui %[[M]], %c4 : index
// padded rows = ceil(N / T) T
// CHECK:         %[[NPAD:.+]] = arith.muli %[[QTILES]], %c4 : index
// CHECK:         %[[QEXTRA:.+]] = arith.subi %[[NPAD]], %[[N]] : index
// CHECK:         %[[QPAD:.+]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, %[[QEXTRA]], 0]
// CHECK:           tensor.yield %[[ZERO]] : f32
// CHECK:         %[[MPAD:.+]] = arith.muli %[[KTILES]], %c4 : index
// CHECK:         %[[KEXTRA:.+]] = arith.subi %[[MPAD]], %[[M]] : index
// CHECK:         tensor.pad %[[K]] low[0, 0, 0, 0] high[0, 0, %[[KEXTRA]], 0]
// CHECK:         linalg.transpose
// CHECK:         tensor.pad %[[V]]
// CHECK:         %[[RES:.+]] = scf.forall (%[[QT:.+]]) in (%[[QTILES]])
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// lastPos = min(row0 + T, N) - 1 + (M - N);
// hi = min(keyTiles, ceil(max(lastPos + 1, 0) / T))
// CHECK:           %[[END:.+]] = arith.addi %[[ROW0]], %c4 : index
// CHECK:           %[[ENDN:.+]] = arith.minui %[[END]], %[[N]] : index
// CHECK:           %[[LAST:.+]] = arith.subi %[[ENDN]], %c1 : index
// CHECK:           %[[LASTPOS:.+]] = arith.addi %[[LAST]], %[[OFF]] : index
// CHECK:           %[[STOP:.+]] = arith.addi %[[LASTPOS]], %c1 : index
// CHECK:           %[[STOP0:.+]] = arith.maxsi %[[STOP]], %c0 : index
// CHECK:           %[[HI1:.+]] = arith.ceildivui %[[STOP0]], %c4 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[KTILES]], %[[HI1]] : index
// CHECK:           scf.for %[[KI:[a-z0-9]+]] = %c0 to %[[HI]] step %c1
// CHECK:             %[[COL0:.+]] = arith.muli %[[KI]], %c4 : index
// W = (j < M and j <= p_i) ? S : -inf, i = row0 + r, p_i = i + M - N,
// j = col0 + c
// CHECK:             linalg.generic
// CHECK:               %[[R:.+]] = linalg.index 0 : index
// CHECK:               %[[C:.+]] = linalg.index 1 : index
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %[[R]] : index
// CHECK:               %[[J:.+]] = arith.addi %[[COL0]], %[[C]] : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %[[M]] : index
// CHECK:               %[[P:.+]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK:               %[[CAUSAL:.+]] = arith.cmpi sle, %[[J]], %[[P]] : index
// CHECK:               %[[VISIBLE:.+]] = arith.andi %[[IN_RANGE]], %[[CAUSAL]] : i1
// CHECK:               arith.select %[[VISIBLE]], %{{.*}}, %[[NEG_INF]] : f32
// CHECK:         tensor.extract_slice %[[RES]][0, 0, 0, 0] [1, 1, %[[N]], 4] [1, 1, 1, 1] : tensor<1x1x?x4xf32> to tensor<1x1x?x4xf32>
func.func @softmax_dynamic(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) mask causal : !t, !t, !t -> !t
  return %0 : !t
}

// -----

// `lse` (DESIGN §1.3): with the output, per query tile its rows'
// log-sum-exp lse = m + log z, -inf where m = -inf (no visible key), into a
// second shared output [B, H, N].

// CHECK-LABEL: func.func @log_sum_exp(
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[RES:.+]]:2 = scf.forall (%[[QT:.+]]) in (2) shared_outs(%{{.*}} = %{{.*}}, %[[LSE_OUT:.+]] = %{{.*}}) -> (tensor<1x1x8x4xf32>, tensor<1x1x8xf32>)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// CHECK:           %[[LOOP:.+]]:5 = scf.for
// CHECK:           %[[LSE:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#0, %[[LOOP]]#1 : tensor<4xf32>, tensor<4xf32>)
// CHECK:             %[[EMPTY:.+]] = arith.cmpf oeq, %[[M:.+]], %[[NEG_INF]] : f32
// CHECK:             %[[LOG:.+]] = math.log %[[Z:.+]] : f32
// CHECK:             %[[SUM:.+]] = arith.addf %[[M]], %[[LOG]] : f32
// CHECK:             arith.select %[[EMPTY]], %[[NEG_INF]], %[[SUM]] : f32
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %[[LSE]] into %[[LSE_OUT]][0, 0, %[[ROW0]]] [1, 1, 4]
// CHECK:         return %[[RES]]#0, %[[RES]]#1
func.func @log_sum_exp(%q: tensor<1x1x8x4xf32>) -> (tensor<1x1x8x4xf32>, tensor<1x1x8xf32>) {
  %0:2 = attn.term softmax (%q, %q, %q) lse mask causal : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>, tensor<1x1x8xf32>
  return %0#0, %0#1 : tensor<1x1x8x4xf32>, tensor<1x1x8xf32>
}
