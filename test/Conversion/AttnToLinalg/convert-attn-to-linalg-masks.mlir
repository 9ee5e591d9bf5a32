// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s

// Masks (Masks.cpp), read three ways by qk-first: the range of key tiles a
// query tile [row0, row0 + T) can see (the loop bounds, so invisible tiles
// cost nothing), the predicate `query i sees key j` inside a score tile
// (i = row0 + r, j = col0 + c, and j < M for the padding), and the number
// of keys query i sees (the `length` normaliser, relu2's default).
// N = M = 8, T = 4, block c = 4: two query tiles, two key tiles.

!t = tensor<1x1x8x4xf32>

// causal: j <= i.
// CHECK-LABEL: func.func @causal(
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         scf.forall (%[[QT:.+]]) in (2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// key tiles [0, min(keyTiles, ceil(max(lastPos + 1, 0) / T))), lastPos =
// min(row0 + T, N) - 1 + (M - N), the last row's position (M = N here)
// CHECK:           %[[END:.+]] = arith.addi %[[ROW0]], %c4 : index
// CHECK:           %[[ENDN:.+]] = arith.minui %[[END]], %c8 : index
// CHECK:           %[[CLAMPED:.+]] = arith.maxsi %[[ENDN]], %c0 : index
// CHECK:           %[[HI1:.+]] = arith.ceildivui %[[CLAMPED]], %c4 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[HI1]], %c2 : index
// CHECK:           scf.for %[[KI:[a-z0-9]+]] = %c0 to %[[HI]] step %c1
// CHECK:             %[[COL0:.+]] = arith.muli %[[KI]], %c4 : index
// visible(i, j) = j < M and j <= p_i (signed), p_i = i + M - N = i
// CHECK:               %[[R:.+]] = linalg.index 0 : index
// CHECK:               %[[C:.+]] = linalg.index 1 : index
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %[[R]] : index
// CHECK:               %[[J:.+]] = arith.addi %[[COL0]], %[[C]] : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c8 : index
// CHECK:               %[[CAUSAL:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK:               %[[VIS:.+]] = arith.andi %[[IN_RANGE]], %[[CAUSAL]] : i1
// CHECK:               arith.select %[[VIS]]
// acc += W V_t drops a hidden pair's term by the same predicate on a tile
// that is not wholly visible (visibleProduct)
// CHECK:             } else {
// CHECK:               arith.select
// r(i) = 1 / length(i), length(i) = max(0, min(p_i + 1, M)); O = acc * r
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%{{.*}}#0 : tensor<4xf32>)
// CHECK:             %[[R2:.+]] = linalg.index 0 : index
// CHECK:             %[[I2:.+]] = arith.addi %[[ROW0]], %[[R2]] : index
// CHECK:             %[[I1:.+]] = arith.addi %[[I2]], %c1 : index
// CHECK:             %[[MIN:.+]] = arith.minsi %[[I1]], %c8 : index
// CHECK:             %[[COUNT:.+]] = arith.maxsi %[[MIN]], %c0 : index
// CHECK:             %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:             %[[COUNTF:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[COUNTF]] : f32
// CHECK:             arith.select %{{.*}}, %{{.*}}, %[[RECIP]] : f32
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}#1, %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[ACC_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[ACC_E]], %[[R_E]] : f32
func.func @causal(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term relu2 (%q, %k, %v) mask causal : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// block(c): i / c == j / c.
// CHECK-LABEL: func.func @block(
// CHECK:         scf.forall (%[[QT:.+]]) in (2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// key tiles [firstBlockStart / T, min(keyTiles, ceil((lastBlockStart + c) / T))),
// blockStart(x) = (x / c) c
// CHECK:           %[[END:.+]] = arith.addi %[[ROW0]], %c4 : index
// CHECK:           %[[ENDN:.+]] = arith.minui %[[END]], %c8 : index
// CHECK:           %[[LAST:.+]] = arith.subi %[[ENDN]], %c1 : index
// CHECK:           %[[FB:.+]] = arith.divui %[[ROW0]], %c4 : index
// CHECK:           %[[FIRST:.+]] = arith.muli %[[FB]], %c4 : index
// CHECK:           %[[LB:.+]] = arith.divui %[[LAST]], %c4 : index
// CHECK:           %[[LASTSTART:.+]] = arith.muli %[[LB]], %c4 : index
// CHECK:           %[[LO:.+]] = arith.divui %[[FIRST]], %c4 : index
// CHECK:           %[[LASTEND:.+]] = arith.addi %[[LASTSTART]], %c4 : index
// CHECK:           %[[HI1:.+]] = arith.ceildivui %[[LASTEND]], %c4 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[HI1]], %c2 : index
// an empty range must not run backwards: from min(lo, hi)
// CHECK:           %[[FROM:.+]] = arith.minui %[[LO]], %[[HI]] : index
// CHECK:           scf.for %{{.*}} = %[[FROM]] to %[[HI]] step %c1
// a tile of real keys wholly inside one block needs no mask; the others:
// visible(i, j) = j < M and i / c == j / c
// CHECK:             } else {
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:               %[[J:.+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c8 : index
// CHECK:               %[[BI:.+]] = arith.divui %[[I]], %c4 : index
// CHECK:               %[[BJ:.+]] = arith.divui %[[J]], %c4 : index
// CHECK:               %[[SAME:.+]] = arith.cmpi eq, %[[BI]], %[[BJ]] : index
// CHECK:               %[[VIS:.+]] = arith.andi %[[IN_RANGE]], %[[SAME]] : i1
// CHECK:               arith.select %[[VIS]]
// acc += W V_t drops a hidden pair's term by the same predicate on a tile
// that is not wholly visible (visibleProduct)
// CHECK:             } else {
// CHECK:               arith.select
// length(i) = min(start + c, M) - min(start, min(start + c, M)), start = (i / c) c
// CHECK:             %[[I2:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:             %[[B2:.+]] = arith.divui %[[I2]], %c4 : index
// CHECK:             %[[START:.+]] = arith.muli %[[B2]], %c4 : index
// CHECK:             %[[BEND:.+]] = arith.addi %[[START]], %c4 : index
// CHECK:             %[[BENDM:.+]] = arith.minui %[[BEND]], %c8 : index
// CHECK:             %[[CLAMPED:.+]] = arith.minui %[[START]], %[[BENDM]] : index
// CHECK:             %[[COUNT:.+]] = arith.subi %[[BENDM]], %[[CLAMPED]] : index
// CHECK:             arith.index_cast %[[COUNT]] : index to i64
func.func @block(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term relu2 (%q, %k, %v) mask block(4) : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// block_causal(c): i / c == j / c and j <= i.
// CHECK-LABEL: func.func @block_causal(
// CHECK:         scf.forall (%[[QT:.+]]) in (2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// key tiles [firstBlockStart / T, min(keyTiles, lastRow / T + 1))
// CHECK:           %[[LAST:.+]] = arith.subi %{{.*}}, %c1 : index
// CHECK:           %[[FB:.+]] = arith.divui %[[ROW0]], %c4 : index
// CHECK:           %[[FIRST:.+]] = arith.muli %[[FB]], %c4 : index
// CHECK:           %[[LO:.+]] = arith.divui %[[FIRST]], %c4 : index
// CHECK:           %[[LASTTILE:.+]] = arith.divui %[[LAST]], %c4 : index
// CHECK:           %[[HI1:.+]] = arith.addi %[[LASTTILE]], %c1 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[HI1]], %c2 : index
// CHECK:           %[[FROM:.+]] = arith.minui %[[LO]], %[[HI]] : index
// CHECK:           scf.for %{{.*}} = %[[FROM]] to %[[HI]] step %c1
// CHECK:             } else {
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:               %[[J:.+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c8 : index
// CHECK:               %[[BI:.+]] = arith.divui %[[I]], %c4 : index
// CHECK:               %[[BJ:.+]] = arith.divui %[[J]], %c4 : index
// CHECK:               %[[SAME:.+]] = arith.cmpi eq, %[[BI]], %[[BJ]] : index
// CHECK:               %[[CAUSAL:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK:               %[[BOTH:.+]] = arith.andi %[[SAME]], %[[CAUSAL]] : i1
// CHECK:               %[[VIS:.+]] = arith.andi %[[IN_RANGE]], %[[BOTH]] : i1
// CHECK:               arith.select %[[VIS]]
// acc += W V_t drops a hidden pair's term by the same predicate on a tile
// that is not wholly visible (visibleProduct)
// CHECK:             } else {
// CHECK:               arith.select
// length(i) = min(i + 1, M) - min(start, min(i + 1, M)), start = (i / c) c
// CHECK:             %[[I2:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:             %[[B2:.+]] = arith.divui %[[I2]], %c4 : index
// CHECK:             %[[START:.+]] = arith.muli %[[B2]], %c4 : index
// CHECK:             %[[I1:.+]] = arith.addi %[[I2]], %c1 : index
// CHECK:             %[[END:.+]] = arith.minui %[[I1]], %c8 : index
// CHECK:             %[[CLAMPED:.+]] = arith.minui %[[START]], %[[END]] : index
// CHECK:             %[[COUNT:.+]] = arith.subi %[[END]], %[[CLAMPED]] : index
// CHECK:             arith.index_cast %[[COUNT]] : index to i64
func.func @block_causal(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal(4) : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// prior_blocks(c): j / c < i / c (the blocks strictly before the query's).
// CHECK-LABEL: func.func @prior_blocks_length(
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.forall (%[[QT:.+]]) in (2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// key tiles [0, min(keyTiles, ceil(lastBlockStart / T)))
// CHECK:           %[[LAST:.+]] = arith.subi %{{.*}}, %c1 : index
// CHECK:           %[[LB:.+]] = arith.divui %[[LAST]], %c4 : index
// CHECK:           %[[LASTSTART:.+]] = arith.muli %[[LB]], %c4 : index
// CHECK:           %[[HI1:.+]] = arith.ceildivui %[[LASTSTART]], %c4 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[HI1]], %c2 : index
// CHECK:           scf.for %{{.*}} = %c0 to %[[HI]] step %c1
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:               %[[J:.+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c8 : index
// CHECK:               %[[BJ:.+]] = arith.divui %[[J]], %c4 : index
// CHECK:               %[[BI:.+]] = arith.divui %[[I]], %c4 : index
// CHECK:               %[[PRIOR:.+]] = arith.cmpi ult, %[[BJ]], %[[BI]] : index
// CHECK:               %[[VIS:.+]] = arith.andi %[[IN_RANGE]], %[[PRIOR]] : i1
// CHECK:               arith.select %[[VIS]]
// acc += W V_t drops a hidden pair's term by the same predicate on a tile
// that is not wholly visible (visibleProduct)
// CHECK:             } else {
// CHECK:               arith.select
// r(i) = 1 / length(i), length(i) = min((i / c) c, M); 0 (no key) gives
// r = 0, not NaN; O = num * r
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%{{.*}}#0 : tensor<4xf32>)
// CHECK:             %[[I2:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:             %[[B2:.+]] = arith.divui %[[I2]], %c4 : index
// CHECK:             %[[START:.+]] = arith.muli %[[B2]], %c4 : index
// CHECK:             %[[COUNT:.+]] = arith.minui %[[START]], %c8 : index
// CHECK:             %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:             %[[COUNTF:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK:             %[[NONE:.+]] = arith.cmpi eq, %[[COUNT64]], %c0_i64 : i64
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[COUNTF]] : f32
// CHECK:             arith.select %[[NONE]], %[[ZERO]], %[[RECIP]] : f32
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}#1, %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[NUM_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[NUM_E]], %[[R_E]] : f32
func.func @prior_blocks_length(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(4) normalizer length order qk_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

// window(2, 1) with N = 8 queries at the end of M = 12 keys (DESIGN §1.3):
// row i sits at position p_i = i + M - N = i + 4 and sees p_i - 2 <= j <=
// p_i + 1.
// CHECK-LABEL: func.func @window(
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         scf.forall (%[[QT:.+]]) in (2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// key tiles [max(p_row0 - 2, 0) / T, min(keyTiles, ceil(max(p_last + 2, 0) / T)))
// with p_row0 - 2 = row0 + 2 and p_last + 2 = min(row0 + T, N) - 1 + 4 + 2
// CHECK:           %[[END:.+]] = arith.addi %[[ROW0]], %c4 : index
// CHECK:           %[[ENDN:.+]] = arith.minui %[[END]], %c8 : index
// CHECK:           %[[FIRST:.+]] = arith.addi %[[ROW0]], %c2 : index
// CHECK:           %[[FIRST0:.+]] = arith.maxsi %[[FIRST]], %c0 : index
// CHECK:           %[[LO:.+]] = arith.divui %[[FIRST0]], %c4 : index
// CHECK:           %[[STOP:.+]] = arith.addi %[[ENDN]], %c5 : index
// CHECK:           %[[STOP0:.+]] = arith.maxsi %[[STOP]], %c0 : index
// CHECK:           %[[HI1:.+]] = arith.ceildivui %[[STOP0]], %c4 : index
// CHECK:           %[[HI:.+]] = arith.minui %[[HI1]], %c3 : index
// CHECK:           %[[FROM:.+]] = arith.minui %[[LO]], %[[HI]] : index
// CHECK:           scf.for %[[KI:[a-z0-9]+]] = %[[FROM]] to %[[HI]] step %c1
// CHECK:             %[[COL0:.+]] = arith.muli %[[KI]], %c4 : index
// a whole tile of real keys is visible when p_last - 2 <= col0 and
// lastCol <= p_row0 + 1 (both row0 + 5)
// CHECK:             %[[LASTCOL:.+]] = arith.addi %[[COL0]], %c3 : index
// CHECK:             %[[REAL:.+]] = arith.cmpi ult, %[[LASTCOL]], %c12 : index
// CHECK:             %[[BOUND:.+]] = arith.addi %[[ROW0]], %c5 : index
// CHECK:             %[[LEFTOK:.+]] = arith.cmpi sle, %[[BOUND]], %[[COL0]] : index
// CHECK:             %[[RIGHTOK:.+]] = arith.cmpi sle, %[[LASTCOL]], %[[BOUND]] : index
// CHECK:             %[[BOTH:.+]] = arith.andi %[[LEFTOK]], %[[RIGHTOK]] : i1
// CHECK:             %[[FULL:.+]] = arith.andi %[[REAL]], %[[BOTH]] : i1
// CHECK:             scf.if %[[FULL]]
// visible(i, j) = j < M and i + 2 <= j <= i + 5
// CHECK:             } else {
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:               %[[J:.+]] = arith.addi %[[COL0]], %{{.*}} : index
// CHECK:               %[[IN_RANGE:.+]] = arith.cmpi ult, %[[J]], %c12 : index
// CHECK:               %[[LOWEST:.+]] = arith.addi %[[I]], %c2 : index
// CHECK:               %[[HIGHEST:.+]] = arith.addi %[[I]], %c5 : index
// CHECK:               %[[GE:.+]] = arith.cmpi sge, %[[J]], %[[LOWEST]] : index
// CHECK:               %[[LE:.+]] = arith.cmpi sle, %[[J]], %[[HIGHEST]] : index
// r(i) = 1 / length(i), length(i) = max(0, min(i + 6, M) - max(i + 2, 0));
// O = acc * r
// CHECK:           %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%{{.*}}#0 : tensor<4xf32>)
// CHECK:             %[[I2:.+]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK:             %[[START:.+]] = arith.addi %[[I2]], %c2 : index
// CHECK:             %[[STOPK:.+]] = arith.addi %[[I2]], %c6 : index
// CHECK:             %[[START0:.+]] = arith.maxsi %[[START]], %c0 : index
// CHECK:             %[[STOPM:.+]] = arith.minsi %[[STOPK]], %c12 : index
// CHECK:             %[[SPAN:.+]] = arith.subi %[[STOPM]], %[[START0]] : index
// CHECK:             %[[COUNT:.+]] = arith.maxsi %[[SPAN]], %c0 : index
// CHECK:             %[[COUNT64:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:             %[[COUNTF:.+]] = arith.sitofp %[[COUNT64]] : i64 to f32
// CHECK:             %[[RECIP:.+]] = arith.divf %[[ONE]], %[[COUNTF]] : f32
// CHECK:             arith.select %{{.*}}, %{{.*}}, %[[RECIP]] : f32
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}#1, %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:           ^bb0(%[[ACC_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:             arith.mulf %[[ACC_E]], %[[R_E]] : f32
func.func @window(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x12x4xf32>, %v: tensor<1x1x12x4xf32>) -> tensor<1x1x8x4xf32> {
  %0 = attn.term relu2 (%q, %k, %v) mask window(2, 1) : tensor<1x1x8x4xf32>, tensor<1x1x12x4xf32>, tensor<1x1x12x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

// Lengths (DESIGN §1.3) under a causal mask, B = 2, N = M = 8, T = 4: per
// batch element b, K_b = min(M, ceil(max(L_b, 0))) keys (0 for NaN) and
// Q_b rows likewise. A query tile loops over the key tiles below
// min(causal end, ceil(K_b / T)), none when row0 >= Q_b; a tile is whole when
// its last key < K_b and its last row < Q_b, else each pair tests
// j < K_b, j <= i and i < Q_b.

// CHECK-LABEL: func.func @lengths(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<2x1x8x4xf32>, %{{[a-z0-9]+}}: tensor<2x1x8x4xf32>, %{{[a-z0-9]+}}: tensor<2x1x8x4xf32>, %[[LK:[a-z0-9]+]]: tensor<2xf32>, %[[LQ:[a-z0-9]+]]: tensor<2xf32>)
// CHECK:         scf.forall (%[[B:.+]], %[[QT:.+]]) in (2, 2)
// CHECK:           %[[ROW0:.+]] = arith.muli %[[QT]], %c4 : index
// CHECK:           %[[L:.+]] = tensor.extract %[[LK]][%[[B]]] : tensor<2xf32>
// CHECK:           %[[POS:.+]] = arith.cmpf ogt, %[[L]], %[[ZERO:.+]] : f32
// CHECK:           %[[NONNEG:.+]] = arith.select %[[POS]], %[[L]], %[[ZERO]] : f32
// CHECK:           %[[CLAMPED:.+]] = arith.minimumf %[[NONNEG]], %{{.+}} : f32
// ceil(x) = trunc(x) + (trunc(x) < x)
// CHECK:           %[[TRUNC:.+]] = arith.fptoui %[[CLAMPED]] : f32 to i64
// CHECK:           %[[BACK:.+]] = arith.uitofp %[[TRUNC]] : i64 to f32
// CHECK:           %[[FRACTION:.+]] = arith.cmpf olt, %[[BACK]], %[[CLAMPED]] : f32
// CHECK:           %[[ONE:.+]] = arith.extui %[[FRACTION]] : i1 to i64
// CHECK:           %[[INT:.+]] = arith.addi %[[TRUNC]], %[[ONE]] : i64
// CHECK:           %[[IDX:.+]] = arith.index_castui %[[INT]] : i64 to index
// CHECK:           %[[KEYS:.+]] = arith.minui %[[IDX]], %c8 : index
// CHECK:           tensor.extract %[[LQ]][%[[B]]] : tensor<2xf32>
// CHECK:           %[[ROWS:.+]] = arith.minui %{{.+}}, %c8 : index
// CHECK:           %[[CAUSAL_END:.+]] = arith.minui %{{.+}}, %c2 : index
// CHECK:           %[[KEY_TILES:.+]] = arith.ceildivui %[[KEYS]], %c4 : index
// CHECK:           %[[END:.+]] = arith.minui %[[CAUSAL_END]], %[[KEY_TILES]] : index
// CHECK:           %[[KEPT:.+]] = arith.cmpi ult, %[[ROW0]], %[[ROWS]] : index
// CHECK:           %[[HI:.+]] = arith.select %[[KEPT]], %[[END]], %c0 : index
// CHECK:           scf.for %[[KT:.+]] = %c0 to %[[HI]] step %c1
// CHECK:             %[[COL0:.+]] = arith.muli %[[KT]], %c4 : index
// CHECK:             %[[LAST_ROW:.+]] = arith.addi %[[ROW0]], %c3 : index
// CHECK:             %[[LAST_COL:.+]] = arith.addi %[[COL0]], %c3 : index
// CHECK:             %[[REAL:.+]] = arith.cmpi ult, %[[LAST_COL]], %[[KEYS]] : index
// CHECK:             %[[ROWS_KEPT:.+]] = arith.cmpi ult, %[[LAST_ROW]], %[[ROWS]] : index
// CHECK:             arith.andi %[[REAL]], %[[ROWS_KEPT]] : i1
// CHECK:             } else {
// CHECK:               %[[I:.+]] = arith.addi %[[ROW0]], %{{.+}} : index
// CHECK:               %[[J:.+]] = arith.addi %[[COL0]], %{{.+}} : index
// CHECK:               %[[JREAL:.+]] = arith.cmpi ult, %[[J]], %[[KEYS]] : index
// CHECK:               %[[JCAUSAL:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK:               %[[IKEPT:.+]] = arith.cmpi ult, %[[I]], %[[ROWS]] : index
// CHECK:               %[[MASK:.+]] = arith.andi %[[IKEPT]], %[[JCAUSAL]] : i1
// CHECK:               arith.andi %[[JREAL]], %[[MASK]] : i1
func.func @lengths(%q: tensor<2x1x8x4xf32>, %k: tensor<2x1x8x4xf32>, %v: tensor<2x1x8x4xf32>, %lk: tensor<2xf32>, %lq: tensor<2xf32>) -> tensor<2x1x8x4xf32> {
  %0 = attn.term relu2 (%q, %k, %v) key_lengths(%lk : tensor<2xf32>) query_lengths(%lq : tensor<2xf32>) mask causal : tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32> -> tensor<2x1x8x4xf32>
  return %0 : tensor<2x1x8x4xf32>
}
