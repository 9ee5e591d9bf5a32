// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=4 static-tiles=true" --canonicalize --cse | FileCheck %s

// Feature rows (FeatureMaps.cpp): phi(Q) and phi(K) are computed once per row
// on the whole [B, H, L, D] tensors, before any padding or tiling; softmax
// and relu2 instead scale the queries once, Q' = Q s. Linformer projects K
// and V first. The kernel terms use kv-first so that phi(K)^T is the
// transposed operand of the state pass. N = M = 8, D = 4.

!t = tensor<1x1x8x4xf32>

// phi(x) = x > 0 ? x + 1 : exp(x)   (elu + 1), as max(x, 0) + exp(min(x, 0)):
// max(x, 0) = x < 0 ? 0 : x and min(x, 0) = x > 0 ? 0 : x (a NaN x stays in both)
// CHECK-LABEL: func.func @elu1(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:         ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[BELOW:.+]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[POS:.+]] = arith.select %[[BELOW]], %[[ZERO]], %[[X]] : f32
// CHECK-NEXT:      %[[ABOVE:.+]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[NEG:.+]] = arith.select %[[ABOVE]], %[[ZERO]], %[[X]] : f32
// CHECK-NEXT:      %[[EXP:.+]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[PHI:.+]] = arith.addf %[[POS]], %[[EXP]] : f32
// CHECK-NEXT:      linalg.yield %[[PHI]] : f32
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// CHECK:           arith.cmpf olt
// CHECK:         %[[PHIKP25:.+]] = tensor.expand_shape %[[PHIK]] {{.*}} into tensor<1x1x2x4x4xf32>
// CHECK:         linalg.transpose ins(%[[PHIKP25]] : tensor<1x1x2x4x4xf32>) outs(%{{.*}} : tensor<1x1x2x4x4xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK:         scf.for
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[PHIQ]]
func.func @elu1(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// phi(x) = max(x, 0)
// CHECK-LABEL: func.func @relu(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:         ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[PHIKP48:.+]] = tensor.expand_shape %[[PHIK]] {{.*}} into tensor<1x1x2x4x4xf32>
// CHECK:         linalg.transpose ins(%[[PHIKP48]] : tensor<1x1x2x4x4xf32>) outs(%{{.*}} : tensor<1x1x2x4x4xf32>) permutation = [0, 1, 2, 4, 3]
func.func @relu(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel relu (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// FAVOR+ with m = 6 random features:
//   phi(x) = exp(w x' - |x'|^2 / 2) / sqrt(m),  x' = x s^(1/2), s = 1/sqrt(D)
// so s^(1/2) = 0.7071 and 1/sqrt(m) = 0.4082; W = 6.
// CHECK-LABEL: func.func @favor_plus(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<6x4xf32>
// CHECK-DAG:     %[[INV_ROOT_M:.+]] = arith.constant 0.408248276 : f32
// CHECK-DAG:     %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[ROOT_S:.+]] = arith.constant 0.707106769 : f32
// CHECK-DAG:     %[[QROOM:.+]] = arith.constant 2.000000e+01 : f32
// CHECK-DAG:     %[[KROOM:.+]] = arith.constant 3.600000e+01 : f32
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// The keys' stabiliser c = max(0, max_f |w_f|^2 / 2 - 36): every exponent
// w x' - |x'|^2 / 2 = |w|^2 / 2 - |x' - w|^2 / 2 is at most max_f |w_f|^2 / 2
// CHECK:         %[[WSQ:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[W]] : tensor<6x4xf32>) outs(%{{.*}} : tensor<6xf32>)
// CHECK:         %[[C:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[WSQ]] : tensor<6xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK:           %[[HALF_WSQ:.+]] = arith.mulf %{{.*}}, %[[HALF]] : f32
// CHECK:           %[[ABOVE:.+]] = arith.subf %[[HALF_WSQ]], %[[KROOM]] : f32
// CHECK:           arith.maximumf %{{.*}}, %[[ABOVE]] : f32
// w x' = sum_d w[f, d] x[i, d] s^(1/2)
// CHECK:         %[[PROJ:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[W]] : tensor<1x1x8x4xf32>, tensor<6x4xf32>) outs(%{{.*}} : tensor<1x1x8x6xf32>)
// CHECK:         ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[WV:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK:           %[[XS:.+]] = arith.mulf %[[X]], %[[ROOT_S]] : f32
// CHECK:           %[[WX:.+]] = arith.mulf %[[XS]], %[[WV]] : f32
// CHECK:           arith.addf %[[ACC]], %[[WX]] : f32
// |x'|^2 / 2 = sum_d (x[i, d] s^(1/2))^2 / 2
// CHECK:         %[[NORM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]] : tensor<1x1x8x4xf32>) outs(%{{.*}} : tensor<1x1x8xf32>)
// CHECK:         ^bb0(%[[X2:[a-z0-9_]+]]: f32, %[[ACC2:[a-z0-9_]+]]: f32):
// CHECK:           %[[XS2:.+]] = arith.mulf %[[X2]], %[[ROOT_S]] : f32
// CHECK:           %[[SQ:.+]] = arith.mulf %[[XS2]], %[[XS2]] : f32
// CHECK:           %[[HSQ:.+]] = arith.mulf %[[SQ]], %[[HALF]] : f32
// CHECK:           arith.addf %[[ACC2]], %[[HSQ]] : f32
// queries: m_i = max_f (w x')_f; c_i = m_i - |x'|^2 / 2 - 20;
// eps_i = eps exp(-(c_i + c)); phi(q) = exp(w x' - (m_i - 20)) / sqrt(m)
// CHECK:         %[[PMAX:.+]] = linalg.generic {{.*}} ins(%[[PROJ]] : tensor<1x1x8x6xf32>) outs(%{{.*}} : tensor<1x1x8xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[ROWEPS:.+]] = linalg.generic {{.*}} ins(%[[PMAX]], %[[NORM]], %[[C]] : tensor<1x1x8xf32>, tensor<1x1x8xf32>, tensor<1xf32>) outs(%{{.*}} : tensor<1x1x8x1xf32>)
// CHECK:           %[[D1:.+]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[CI:.+]] = arith.subf %[[D1]], %[[QROOM]] : f32
// CHECK:           %[[TOTAL:.+]] = arith.addf %[[CI]], %{{.*}} : f32
// CHECK:           %[[NEG:.+]] = arith.negf %[[TOTAL]] : f32
// CHECK:           %[[FACTOR:.+]] = math.exp %[[NEG]] : f32
// CHECK:           arith.mulf %[[FACTOR]], %[[EPS]] : f32
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[PROJ]], %[[PMAX]] : tensor<1x1x8x6xf32>, tensor<1x1x8xf32>) outs(%{{.*}} : tensor<1x1x8x6xf32>)
// CHECK:           %[[TOP:.+]] = arith.subf %{{.*}}, %[[QROOM]] : f32
// CHECK:           %[[QARG:.+]] = arith.subf %{{.*}}, %[[TOP]] : f32
// CHECK:           %[[E:.+]] = math.exp %[[QARG]] : f32
// CHECK:           arith.mulf %[[E]], %[[INV_ROOT_M]] : f32
// the same for K
// CHECK:         linalg.generic {{.*}} ins(%[[K]], %[[W]] : tensor<1x1x8x4xf32>, tensor<6x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// phi(k) = exp(w x' - |x'|^2 / 2 - c) / sqrt(m), c read as element 0
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[C]] : tensor<1x1x8x6xf32>, tensor<1x1x8xf32>, tensor<1xf32>)
// CHECK:         ^bb0(%[[KP:[a-z0-9_]+]]: f32, %[[KN:[a-z0-9_]+]]: f32, %[[KC:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:           %[[KARG:.+]] = arith.subf %[[KP]], %[[KN]] : f32
// CHECK:           %[[KSHIFT:.+]] = arith.subf %[[KARG]], %[[KC]] : f32
// CHECK:           math.exp %[[KSHIFT]] : f32
// CHECK:         %[[PHIKP89:.+]] = tensor.expand_shape %[[PHIK]] {{.*}} into tensor<1x1x2x4x6xf32>
// CHECK:         linalg.transpose ins(%[[PHIKP89]] : tensor<1x1x2x4x6xf32>) outs(%{{.*}} : tensor<1x1x2x6x4xf32>) permutation = [0, 1, 2, 4, 3]
// the state is W x E = 6 x 4
// CHECK:         scf.for {{.*}} -> (tensor<6x4xf32>, tensor<6xf32>)
// r = 1 / (den + eps_i), eps_i from the query tile's rows; O = num * r
// CHECK:         %[[RECIPS:.+]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4x1xf32>)
// CHECK:         ^bb0(%[[DEN_E:[a-z0-9_]+]]: f32, %[[EPS_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:           %[[DEN:.+]] = arith.addf %[[DEN_E]], %[[EPS_E]] : f32
// CHECK:           arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[RECIPS]] : tensor<4x4xf32>, tensor<4xf32>)
// CHECK:         ^bb0(%[[NUM_E:[a-z0-9_]+]]: f32, %[[R_E:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:           arith.mulf %[[NUM_E]], %[[R_E]] : f32
func.func @favor_plus(%q: !t, %k: !t, %v: !t, %w: tensor<6x4xf32>) -> !t {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<6x4xf32>) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// cosFormer: phi(x)_i = [relu(x_i) cos(pi i / 2L), relu(x_i) sin(pi i / 2L)],
// L = max(N, M) = 8, so pi / 2L = 0.19635; W = 2D = 8.
// CHECK-LABEL: func.func @cosformer(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ANGLE_SCALE:.+]] = arith.constant 0.196349546 : f32
// CHECK:         %[[ROWS:.+]] = tensor.empty() : tensor<1x1x8x8xf32>
// first half: relu(x) cos(pi i / 2L), i the sequence position
// CHECK:         %[[COS:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:         ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK:           %[[POS:.+]] = linalg.index 2 : index
// CHECK:           %[[POS64:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK:           %[[POSF:.+]] = arith.sitofp %[[POS64]] : i64 to f32
// CHECK:           %[[ANGLE:.+]] = arith.mulf %[[POSF]], %[[ANGLE_SCALE]] : f32
// CHECK:           %[[TRIG:.+]] = math.cos %[[ANGLE]] : f32
// CHECK:           %[[R:.+]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK:           arith.mulf %[[R]], %[[TRIG]] : f32
// CHECK:         %[[HALF1:.+]] = tensor.insert_slice %[[COS]] into %[[ROWS]][0, 0, 0, 0] [1, 1, 8, 4]
// second half: relu(x) sin(pi i / 2L), at column D
// CHECK:         %[[SIN:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:           math.sin
// CHECK:         %[[PHIQ:.+]] = tensor.insert_slice %[[SIN]] into %[[HALF1]][0, 0, 0, 4] [1, 1, 8, 4]
// CHECK:         linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// CHECK:           math.cos
// CHECK:         linalg.generic {{.*}} ins(%[[K]] : tensor<1x1x8x4xf32>)
// CHECK:           math.sin
// CHECK:         %[[PHIK:.+]] = tensor.insert_slice {{.*}}[0, 0, 0, 4] [1, 1, 8, 4]
// CHECK:         %[[PHIKP128:.+]] = tensor.expand_shape %[[PHIK]] {{.*}} into tensor<1x1x2x4x8xf32>
// CHECK:         linalg.transpose ins(%[[PHIKP128]] : tensor<1x1x2x4x8xf32>) outs(%{{.*}} : tensor<1x1x2x8x4xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK:         scf.for {{.*}} -> (tensor<8x4xf32>, tensor<8xf32>)
func.func @cosformer(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel cosformer (%q, %k, %v) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// softmax with `scale 0.25`: Q' = Q s once per row; K is not mapped.
// CHECK-LABEL: func.func @softmax_scale(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>
// CHECK-DAG:     %[[S:.+]] = arith.constant 2.500000e-01 : f32
// CHECK:         %[[QS:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:         ^bb0(%[[X:[a-z0-9_]+]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[XS:.+]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[XS]] : f32
// CHECK:         %[[KP147:.+]] = tensor.expand_shape %[[K]] {{.*}} into tensor<1x1x2x4x4xf32>
// CHECK:         linalg.transpose ins(%[[KP147]] : tensor<1x1x2x4x4xf32>) outs(%{{.*}} : tensor<1x1x2x4x4xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[QS]]
func.func @softmax_scale(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) scale 0.25 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x?xf32>

// Dynamic D: the default scale s = 1/sqrt(D) is computed at run time.
// CHECK-LABEL: func.func @softmax_dynamic_d(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x?xf32>
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[D:.+]] = tensor.dim %[[Q]], %c3 : tensor<1x1x8x?xf32>
// CHECK:         %[[D64:.+]] = arith.index_cast %[[D]] : index to i64
// CHECK:         %[[DF:.+]] = arith.sitofp %[[D64]] : i64 to f32
// CHECK:         %[[ROOT:.+]] = math.sqrt %[[DF]] : f32
// CHECK:         %[[S:.+]] = arith.divf %[[ONE]], %[[ROOT]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x?xf32>)
// CHECK:           arith.mulf %{{.*}}, %[[S]] : f32
func.func @softmax_dynamic_d(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>
!p = tensor<2x8xf32>

// Linformer: K' = E K and V' = F V (2 rows each) before anything else; the
// mask is gone, every query sees the 2 projected keys (j < 2), padded to
// one key tile.
// CHECK-DAG:   #[[P_MAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// CHECK-DAG:   #[[X_MAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[O_MAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @linformer(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[K:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[V:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %[[E:[a-z0-9]+]]: tensor<2x8xf32>, %[[F:[a-z0-9]+]]: tensor<2x8xf32>
// K'[b, h, r, d] = sum_j E[r, j] K[b, h, j, d]
// CHECK:         %[[KP:.+]] = linalg.generic {indexing_maps = [#[[P_MAP]], #[[X_MAP]], #[[O_MAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[E]], %[[K]] : tensor<2x8xf32>, tensor<1x1x8x4xf32>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK:           %[[EK:.+]] = arith.mulf
// CHECK:           arith.addf %{{.*}}, %[[EK]] : f32
// V'[b, h, r, e] = sum_j F[r, j] V[b, h, j, e]
// CHECK:         %[[VP:.+]] = linalg.generic {indexing_maps = [#[[P_MAP]], #[[X_MAP]], #[[O_MAP]]], {{.*}} ins(%[[F]], %[[V]] : tensor<2x8xf32>, tensor<1x1x8x4xf32>) outs(%{{.*}} : tensor<1x1x2x4xf32>)
// CHECK:         %[[QS:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>)
// CHECK:         %[[KPAD:.+]] = tensor.pad %[[KP]] low[0, 0, 0, 0] high[0, 0, 2, 0]
// CHECK:         %[[KPADP196:.+]] = tensor.expand_shape %[[KPAD]] {{.*}} into tensor<1x1x1x4x4xf32>
// CHECK:         linalg.transpose ins(%[[KPADP196]] : tensor<1x1x1x4x4xf32>) outs(%{{.*}} : tensor<1x1x1x4x4xf32>) permutation = [0, 1, 2, 4, 3]
// CHECK:         tensor.pad %[[VP]] low[0, 0, 0, 0] high[0, 0, 2, 0]
// CHECK:         scf.forall
// CHECK:           linalg.index 1 : index
// CHECK-NEXT:      %[[VISIBLE:.+]] = arith.cmpi ult, %{{.*}}, %c2 : index
// CHECK-NEXT:      arith.select %[[VISIBLE]]
func.func @linformer(%q: !t, %k: !t, %v: !t, %e: !p, %f: !p) -> !t {
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : !p, !p) : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x1x8x4xf32>

// RFA (DESIGN §1.2): phi(x) = [sin(w x^), cos(w x^)] / sqrt(m), x^ = x / |x|
// (0 for x = 0), as [B, H, L, 2, m] collapsed to width 2m = 6; m = 3.
// CHECK-LABEL: func.func @rfa(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x1x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x1x8x4xf32>, %{{[a-z0-9]+}}: tensor<1x1x8x4xf32>, %[[W:[a-z0-9]+]]: tensor<3x4xf32>
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[MHALF:.+]] = arith.constant -5.000000e-01 : f32
// 1 / sqrt(3)
// CHECK-DAG:     %[[INVROOTM:.+]] = arith.constant 0.577350259 : f32
// w x: [1, 1, 8, 3]
// CHECK:         %[[PROJ:.+]] = linalg.generic {{.*}} ins(%[[Q]], %[[W]] : tensor<1x1x8x4xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<1x1x8x3xf32>)
// |x|^2
// CHECK:         %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<1x1x8x4xf32>) outs(%{{.*}} : tensor<1x1x8xf32>)
// CHECK:         %[[BOTH:.+]] = linalg.generic {{.*}} ins(%[[PROJ]], %[[SQ]] : tensor<1x1x8x3xf32>, tensor<1x1x8xf32>) outs(%{{.*}} : tensor<1x1x8x2x3xf32>)
// CHECK:           %[[HALF:.+]] = linalg.index 3 : index
// CHECK:           %[[POS:.+]] = arith.cmpf ogt, %{{.*}}, %[[ZERO]] : f32
// 1 / |x| = exp(-log(|x|^2) / 2)
// CHECK:           %[[LOG:.+]] = math.log
// CHECK:           %[[HALF2:.+]] = arith.mulf %[[LOG]], %[[MHALF]] : f32
// CHECK:           %[[INV:.+]] = math.exp %[[HALF2]] : f32
// CHECK:           %[[INVN:.+]] = arith.select %[[POS]], %[[INV]], %[[ZERO]] : f32
// CHECK:           %[[ANGLE:.+]] = arith.mulf %{{.*}}, %[[INVN]] : f32
// CHECK:           %[[ISCOS:.+]] = arith.cmpi ne, %[[HALF]], %c0 : index
// CHECK:           %[[COS:.+]] = math.cos %[[ANGLE]] : f32
// CHECK:           %[[SIN:.+]] = math.sin %[[ANGLE]] : f32
// CHECK:           %[[TRIG:.+]] = arith.select %[[ISCOS]], %[[COS]], %[[SIN]] : f32
// CHECK:           arith.mulf %[[TRIG]], %[[INVROOTM]] : f32
// CHECK:         tensor.collapse_shape %[[BOTH]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x1x8x2x3xf32> into tensor<1x1x8x6xf32>
func.func @rfa(%q: !t, %k: !t, %v: !t, %w: tensor<3x4xf32>) -> !t {
  %o = attn.term kernel rfa (%q, %k, %v) omega(%w : tensor<3x4xf32>) order kv_first : !t, !t, !t -> !t
  return %o : !t
}
