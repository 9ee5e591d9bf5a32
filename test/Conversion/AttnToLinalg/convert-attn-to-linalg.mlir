// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg=static-tiles=true --canonicalize | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-linalg="tile-size=32 static-tiles=true" --canonicalize | FileCheck %s --check-prefix=TILE32
// RUN: not attn-opt %s --split-input-file --convert-attn-to-linalg=tile-size=0 2>&1 | FileCheck %s --check-prefix=BADTILE

!t = tensor<1x2x100x16xf32>

// qk-first softmax: features (q·s), K transposed once, one forall iteration
// per (batch, head, query tile), a loop over the visible key tiles carrying
// (max, sum, acc), and never a 100x100 score matrix.
// CHECK-LABEL: func.func @softmax_causal(
// CHECK-NOT:     tensor<1x2x100x100xf32>
// CHECK:         linalg.transpose
// (canonicalization drops the unit batch dimension of the forall)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<64x64xf32>, tensor<64xf32>)
// CHECK:             linalg.generic
// CHECK:             math.exp
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice {{.*}} [1, 1, 64, 16]
// CHECK:         tensor.extract_slice {{.*}} [1, 2, 100, 16]
// TILE32-LABEL: func.func @softmax_causal(
// TILE32:         scf.forall (%{{.*}}, %{{.*}}) in (2, 4)
// BADTILE: convert-attn-to-linalg: tile-size must be positive, got 0
func.func @softmax_causal(%q: !t) -> !t {
  %0 = attn.term softmax (%q, %q, %q) mask causal : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x100x16xf32>

// kv-first without a mask: a state pass per (batch, head), then a query pass.
// CHECK-LABEL: func.func @linear_kv_first(
// CHECK:         scf.forall (%{{.*}}) in (2) shared_outs({{.*}}, {{.*}}) -> (tensor<1x2x16x16xf32>, tensor<1x2x16xf32>)
// CHECK:           scf.for {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>)
// CHECK:         scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
func.func @linear_kv_first(%q: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %q, %q) order kv_first : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x100x16xf32>

// Causal kv-first: one loop over chunks per (batch, head) carrying the
// 16x16 state and its normaliser.
// CHECK-LABEL: func.func @linear_causal_kv_first(
// CHECK:         scf.forall (%{{.*}}) in (2)
// CHECK:           scf.for {{.*}} -> (tensor<16x16xf32>, tensor<16xf32>, tensor<128x16xf32>)
func.func @linear_causal_kv_first(%q: !t) -> !t {
  %0 = attn.term kernel relu (%q, %q, %q) mask causal order kv_first chunk 32 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x?x16xf32>

// A crossover emits both orders behind a run-time test on N.
// CHECK-LABEL: func.func @crossover(
// CHECK:         %[[N:.+]] = tensor.dim
// CHECK:         %[[USE_KV:.+]] = arith.cmpi uge, %[[N]], %c49
// CHECK:         scf.if %[[USE_KV]]
// CHECK:         } else {
func.func @crossover(%q: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %q, %q) crossover 49 : !t, !t, !t -> !t
  return %0 : !t
}

// -----

!t = tensor<1x2x100x16xf32>
!p = tensor<8x100xf32>

// Linformer projects K and V to 8 rows first; attn.combine is one
// elementwise sum times the gate.
// CHECK-LABEL: func.func @linformer_gated(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x100x16xf32>, %[[E:[a-z0-9]+]]: tensor<8x100xf32>, %[[F:[a-z0-9]+]]: tensor<8x100xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[E]], %[[Q]] : {{.*}}) outs({{.*}} : tensor<1x2x8x16xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[F]], %[[Q]] : {{.*}}) outs({{.*}} : tensor<1x2x8x16xf32>)
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK-NOT:     attn.
func.func @linformer_gated(%q: !t, %e: !p, %f: !p, %g: !t) -> !t {
  %0 = attn.term softmax (%q, %q, %q) project(%e, %f : !p, !p) : !t, !t, !t -> !t
  %1 = attn.term relu2 (%q, %q, %q) : !t, !t, !t -> !t
  %2 = attn.combine %0, %1 gate(%g) : !t
  return %2 : !t
}

// -----

// C19: bf16 q, k, v stay bf16 until the strategy loads them: Q widens in the
// generic that scales it (q·s), K and V in the copies that pad them to whole
// tiles (here, with static tiles; with dynamic ones each tile widens as it is
// loaded); the term is the f32 lowering, and a bf16 result is the f32 result
// rounded once at the end (arith.truncf).
// CHECK-LABEL: func.func @bf16_in_bf16_out(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x100x16xbf16>) -> tensor<1x2x100x16xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<1x2x100x16xbf16>) outs(%{{.+}} : tensor<1x2x100x16xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.+]]: bf16, %{{.+}}: f32):
// CHECK-NEXT:      %[[E:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      %[[S:.+]] = arith.mulf %[[E]], %{{.+}} : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         linalg.generic {{.*}} ins(%[[Q]] : tensor<1x2x100x16xbf16>) outs(%{{.+}} : tensor<1x2x100x16xf32>)
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: bf16, %{{.+}}: f32):
// CHECK-NEXT:      %[[K:.+]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:      linalg.yield %[[K]] : f32
// CHECK:         linalg.transpose
// CHECK:         arith.extf %{{.+}} : bf16 to f32
// CHECK-NOT:     arith.extf
// CHECK:         scf.forall
// CHECK:           math.exp
// CHECK:         %[[OUT:.+]] = tensor.extract_slice {{.*}} [1, 2, 100, 16]
// CHECK:         linalg.generic {{.*}} ins(%[[OUT]] : tensor<1x2x100x16xf32>) outs(%{{.+}} : tensor<1x2x100x16xbf16>)
// CHECK-NEXT:    ^bb0(%[[Z:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT:      %[[T:.+]] = arith.truncf %[[Z]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[T]] : bf16
func.func @bf16_in_bf16_out(%q: tensor<1x2x100x16xbf16>) -> tensor<1x2x100x16xbf16> {
  %0 = attn.term softmax (%q, %q, %q) : tensor<1x2x100x16xbf16>, tensor<1x2x100x16xbf16>, tensor<1x2x100x16xbf16> -> tensor<1x2x100x16xbf16>
  return %0 : tensor<1x2x100x16xbf16>
}

// -----

// C19 with f16 keys and values distinct from the queries: each is widened
// once, and the result stays f32 (no rounding at the end).
// CHECK-LABEL: func.func @f16_in_f32_out(
// CHECK-COUNT-3: arith.extf %{{.+}} : f16 to f32
// CHECK-NOT:     arith.truncf
// CHECK:         return
func.func @f16_in_f32_out(%q: tensor<1x2x100x16xf16>, %k: tensor<1x2x100x16xf16>, %v: tensor<1x2x100x16xf16>) -> tensor<1x2x100x16xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) order kv_first : tensor<1x2x100x16xf16>, tensor<1x2x100x16xf16>, tensor<1x2x100x16xf16> -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}

// -----

// combine C4: the f32 sum times the gate, rounded once to the result's type.
// CHECK-LABEL: func.func @combine_to_f16(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[G:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[S]], %[[G]] : f32
// CHECK-NEXT:      %[[H:.+]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT:      linalg.yield %[[H]] : f16
!t = tensor<1x2x100x16xf32>
func.func @combine_to_f16(%a: !t, %b: !t, %g: !t) -> tensor<1x2x100x16xf16> {
  %0 = attn.combine %a, %b gate(%g) : !t -> tensor<1x2x100x16xf16>
  return %0 : tensor<1x2x100x16xf16>
}
