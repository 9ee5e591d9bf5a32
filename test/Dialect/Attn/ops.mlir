// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of the attn dialect, through the custom and the generic form:
// every score, feature map, mask, normalizer and order, every attn.term
// clause, attn.combine, the standalone attributes, and the DESIGN §1 seed
// variants. Clauses equal to their default (`order auto`, `chunk auto`) are
// omitted when printed.

!t = tensor<1x2x16x8xf32>
!x = tensor<1x2x32x8xf32>

//===----------------------------------------------------------------------===//
// Scores and feature maps
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scores(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[S0:.+]] = attn.term softmax (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[S1:.+]] = attn.term relu2 (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[S2:.+]] = attn.term kernel identity (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         return %[[S0]], %[[S1]], %[[S2]]
func.func @scores(%q: !t, %k: !t, %v: !t) -> (!t, !t, !t) {
  %0 = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  %1 = attn.term relu2 (%q, %k, %v) : !t, !t, !t -> !t
  %2 = attn.term kernel identity (%q, %k, %v) : !t, !t, !t -> !t
  return %0, %1, %2 : !t, !t, !t
}

// CHECK-LABEL: func.func @feature_maps(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<16x8xf32>)
// CHECK:         attn.term kernel identity (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel relu (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[K]], %[[V]]) omega(%[[W]] : tensor<16x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel cosformer (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @feature_maps(%q: !t, %k: !t, %v: !t, %w: tensor<16x8xf32>) -> (!t, !t, !t, !t, !t) {
  %0 = attn.term kernel identity (%q, %k, %v) : !t, !t, !t -> !t
  %1 = attn.term kernel relu (%q, %k, %v) : !t, !t, !t -> !t
  %2 = attn.term kernel elu1 (%q, %k, %v) : !t, !t, !t -> !t
  %3 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<16x8xf32>) : !t, !t, !t -> !t
  %4 = attn.term kernel cosformer (%q, %k, %v) : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4 : !t, !t, !t, !t, !t
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @masks(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) mask none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) mask block(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) mask block_causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel identity (%[[Q]], %[[K]], %[[V]]) mask prior_blocks(8) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @masks(%q: !t, %k: !t, %v: !t) -> (!t, !t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %k, %v) mask none : !t, !t, !t -> !t
  %1 = attn.term softmax (%q, %k, %v) mask causal : !t, !t, !t -> !t
  %2 = attn.term relu2 (%q, %k, %v) mask block(4) : !t, !t, !t -> !t
  %3 = attn.term relu2 (%q, %k, %v) mask block_causal(4) : !t, !t, !t -> !t
  %4 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(8) : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4 : !t, !t, !t, !t, !t
}

// Standalone #attn.mask attributes, on a func and in a term's attr-dict.
// CHECK-LABEL: func.func @mask_attrs(
// CHECK-SAME:    attributes {attn.masks = [#attn.mask<none>, #attn.mask<causal>, #attn.mask<block(2)>, #attn.mask<block_causal(16)>, #attn.mask<prior_blocks(1)>]}
// CHECK:         attn.term relu2 (%{{.+}}, %{{.+}}, %{{.+}}) mask block_causal(4) {attn.global = #attn.mask<prior_blocks(4)>, attn.local = #attn.mask<block_causal(4)>} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel identity (%{{.+}}, %{{.+}}, %{{.+}}) {attn.mask = #attn.mask<none>, attn.other = #attn.mask<causal>, attn.wide = #attn.mask<block(128)>} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @mask_attrs(%q: !t) -> (!t, !t) attributes {
    attn.masks = [#attn.mask<none>, #attn.mask<causal>, #attn.mask<block(2)>,
                  #attn.mask<block_causal(16)>, #attn.mask<prior_blocks(1)>]} {
  %0 = attn.term relu2 (%q, %q, %q) mask block_causal(4)
         {attn.local = #attn.mask<block_causal(4)>, attn.global = #attn.mask<prior_blocks(4)>}
         : !t, !t, !t -> !t
  %1 = attn.term kernel identity (%q, %q, %q)
         {attn.mask = #attn.mask<none>, attn.other = #attn.mask<causal>, attn.wide = #attn.mask<block(128)>}
         : !t, !t, !t -> !t
  return %0, %1 : !t, !t
}

//===----------------------------------------------------------------------===//
// Normalizers, scale and eps
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @normalizers(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) normalizer rows : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel relu (%[[Q]], %[[K]], %[[V]]) normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) normalizer rows eps 1.000000e-03 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @normalizers(%q: !t, %k: !t, %v: !t) -> (!t, !t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %k, %v) normalizer rows : !t, !t, !t -> !t
  %1 = attn.term relu2 (%q, %k, %v) normalizer length : !t, !t, !t -> !t
  %2 = attn.term kernel relu (%q, %k, %v) normalizer none : !t, !t, !t -> !t
  %3 = attn.term softmax (%q, %k, %v) normalizer length : !t, !t, !t -> !t
  %4 = attn.term relu2 (%q, %k, %v) normalizer rows eps 1.0e-3 : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4 : !t, !t, !t, !t, !t
}

// CHECK-LABEL: func.func @scale_eps(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<32x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) scale 1.250000e-01 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[Q]], %[[Q]]) scale 2.000000e+00 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[Q]], %[[Q]]) omega(%[[W]] : tensor<32x8xf32>) scale 2.500000e-01 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) eps 1.000000e-03 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) eps 0.000000e+00 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) scale 0.35355339059327373 eps 9.9999999999999995E-7 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel cosformer (%[[Q]], %[[Q]], %[[Q]]) normalizer rows eps 1.000000e-02 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @scale_eps(%q: !t, %w: tensor<32x8xf32>) -> (!t, !t, !t, !t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %q, %q) scale 0.125 : !t, !t, !t -> !t
  %1 = attn.term relu2 (%q, %q, %q) scale 2.0 : !t, !t, !t -> !t
  %2 = attn.term kernel favor_plus (%q, %q, %q) omega(%w : tensor<32x8xf32>) scale 0.25 : !t, !t, !t -> !t
  %3 = attn.term kernel elu1 (%q, %q, %q) eps 1.0e-3 : !t, !t, !t -> !t
  %4 = attn.term softmax (%q, %q, %q) eps 0.0 : !t, !t, !t -> !t
  %5 = attn.term softmax (%q, %q, %q) scale 0.35355339059327373 eps 1.0e-6 : !t, !t, !t -> !t
  %6 = attn.term kernel cosformer (%q, %q, %q) normalizer rows eps 1.0e-2 : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4, %5, %6 : !t, !t, !t, !t, !t, !t, !t
}

//===----------------------------------------------------------------------===//
// Order and chunk
//===----------------------------------------------------------------------===//

// `order auto` is the default and is not printed.
// CHECK-LABEL: func.func @orders(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) order qk_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) order qk_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[Q]], %[[Q]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @orders(%q: !t) -> (!t, !t, !t, !t, !t) {
  %0 = attn.term kernel elu1 (%q, %q, %q) order auto : !t, !t, !t -> !t
  %1 = attn.term kernel elu1 (%q, %q, %q) order qk_first : !t, !t, !t -> !t
  %2 = attn.term kernel elu1 (%q, %q, %q) order kv_first : !t, !t, !t -> !t
  %3 = attn.term softmax (%q, %q, %q) order qk_first : !t, !t, !t -> !t
  %4 = attn.term relu2 (%q, %q, %q) order auto : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4 : !t, !t, !t, !t, !t
}

// `chunk auto` is the default and is not printed.
// CHECK-LABEL: func.func @chunks(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) chunk 64 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) mask causal order kv_first chunk 1 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel relu (%[[Q]], %[[Q]], %[[Q]]) mask causal order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @chunks(%q: !t) -> (!t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %q, %q) chunk 64 : !t, !t, !t -> !t
  %1 = attn.term softmax (%q, %q, %q) chunk auto : !t, !t, !t -> !t
  %2 = attn.term kernel elu1 (%q, %q, %q) mask causal order kv_first chunk 1 : !t, !t, !t -> !t
  %3 = attn.term kernel relu (%q, %q, %q) chunk auto order kv_first mask causal : !t, !t, !t -> !t
  return %0, %1, %2, %3 : !t, !t, !t, !t
}

// `crossover N` (set by attn-select-order for a dynamic N) keeps order auto.
// CHECK-LABEL: func.func @crossover(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x8xf32>)
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) mask causal chunk 64 crossover 207 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>{{$}}
func.func @crossover(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %0 = attn.term kernel elu1 (%q, %q, %q) crossover 207 mask causal chunk 64 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}

// Clauses are accepted in any order and printed in a canonical one, before
// the attr-dict.
// CHECK-LABEL: func.func @clause_order(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) mask causal normalizer rows scale 5.000000e-01 eps 1.000000e-03 order qk_first chunk 16 {attn.tag = "s"} : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[Q]], %[[Q]]) omega(%[[W]] : tensor<4x8xf32>) mask block_causal(8) normalizer none scale 1.000000e+00 order kv_first chunk 8 : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @clause_order(%q: !t, %w: tensor<4x8xf32>) -> (!t, !t) {
  %0 = attn.term softmax (%q, %q, %q) chunk 16 order qk_first eps 1.0e-3 scale 0.5 normalizer rows mask causal {attn.tag = "s"} : !t, !t, !t -> !t
  %1 = attn.term kernel favor_plus (%q, %q, %q) chunk 8 order kv_first scale 1.0 normalizer none mask block_causal(8) omega(%w : tensor<4x8xf32>) : !t, !t, !t -> !t
  return %0, %1 : !t, !t
}

//===----------------------------------------------------------------------===//
// Linformer projection
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @project(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x32x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x32x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x32xf32>, %[[F:[a-z0-9]+]]: tensor<4x32xf32>, %[[W:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) project(%[[E]], %[[F]] : tensor<4x32xf32>, tensor<4x32xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) project(%[[F]], %[[E]] : tensor<4x32xf32>, tensor<4x32xf32>) mask none chunk 2 : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[K]], %[[V]]) omega(%[[W]] : tensor<8x8xf32>) project(%[[E]], %[[F]] : tensor<4x32xf32>, tensor<4x32xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @project(%q: !t, %k: !x, %v: !x, %e: tensor<4x32xf32>, %f: tensor<4x32xf32>, %w: tensor<8x8xf32>) -> (!t, !t, !t) {
  %0 = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x32xf32>, tensor<4x32xf32>) : !t, !x, !x -> !t
  %1 = attn.term relu2 (%q, %k, %v) mask none chunk 2 project(%f, %e : tensor<4x32xf32>, tensor<4x32xf32>) : !t, !x, !x -> !t
  %2 = attn.term kernel favor_plus (%q, %k, %v) project(%e, %f : tensor<4x32xf32>, tensor<4x32xf32>) omega(%w : tensor<8x8xf32>) : !t, !x, !x -> !t
  return %0, %1, %2 : !t, !t, !t
}

//===----------------------------------------------------------------------===//
// Dynamic sizes and cross attention
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dynamic_length(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x?x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x?x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x8xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) mask causal : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>{{$}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[K]], %[[V]]) mask block_causal(64) order kv_first chunk 64 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>{{$}}
func.func @dynamic_length(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>)
    -> (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) {
  %0 = attn.term softmax (%q, %k, %v) mask causal
         : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %1 = attn.term kernel elu1 (%q, %k, %v) mask block_causal(64) order kv_first chunk 64
         : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %0, %1 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// Fully dynamic operands; with dynamic sizes the shape constraints cannot be
// checked, so causal masks, omega and the projection are accepted.
// CHECK-LABEL: func.func @fully_dynamic(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[W:[a-z0-9]+]]: tensor<?x?xf32>, %[[E:[a-z0-9]+]]: tensor<?x?xf32>)
// CHECK:         attn.term relu2 (%[[Q]], %[[Q]], %[[Q]]) mask causal : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>{{$}}
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[Q]], %[[Q]]) omega(%[[W]] : tensor<?x?xf32>) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) project(%[[E]], %[[E]] : tensor<?x?xf32>, tensor<?x?xf32>) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) mask block_causal(16) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @fully_dynamic(%q: tensor<?x?x?x?xf32>, %w: tensor<?x?xf32>, %e: tensor<?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, !t) {
  %0 = attn.term relu2 (%q, %q, %q) mask causal
         : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = attn.term kernel favor_plus (%q, %q, %q) omega(%w : tensor<?x?xf32>)
         : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %2 = attn.term softmax (%q, %q, %q) project(%e, %e : tensor<?x?xf32>, tensor<?x?xf32>)
         : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %3 = attn.term softmax (%q, %q, %q) mask block_causal(16)
         : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> !t
  return %0, %1, %2, %3 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, !t
}

// Cross attention: N = 16 queries, M = 32 keys, E = 4 != D = 8. Masks that
// need no N = M (block, prior_blocks) are allowed.
// CHECK-LABEL: func.func @cross(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x32x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x32x4xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>{{$}}
// CHECK:         attn.term relu2 (%[[Q]], %[[K]], %[[V]]) mask block(8) : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>{{$}}
// CHECK:         attn.term kernel identity (%[[Q]], %[[K]], %[[V]]) mask prior_blocks(8) normalizer length order kv_first : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>{{$}}
func.func @cross(%q: !t, %k: !x, %v: tensor<1x2x32x4xf32>)
    -> (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) {
  %0 = attn.term softmax (%q, %k, %v) : !t, !x, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>
  %1 = attn.term relu2 (%q, %k, %v) mask block(8) : !t, !x, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>
  %2 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(8) normalizer length order kv_first
         : !t, !x, tensor<1x2x32x4xf32> -> tensor<1x2x16x4xf32>
  return %0, %1, %2 : tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>
}

//===----------------------------------------------------------------------===//
// attn.combine
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @combine_one(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[O:.+]] = attn.combine %[[A]] : tensor<1x2x16x8xf32>{{$}}
// CHECK:         return %[[O]]
func.func @combine_one(%a: !t) -> !t {
  %0 = attn.combine %a : !t
  return %0 : !t
}

// CHECK-LABEL: func.func @combine_many(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[B:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[C:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         attn.combine %[[A]], %[[B]], %[[C]], %[[A]] : tensor<1x2x16x8xf32>{{$}}
func.func @combine_many(%a: !t, %b: !t, %c: !t) -> !t {
  %0 = attn.combine %a, %b, %c, %a : !t
  return %0 : !t
}

// CHECK-LABEL: func.func @combine_gate(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[B:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[G:[a-z0-9]+]]: tensor<?x?x?x?xf32>)
// CHECK:         attn.combine %[[A]] gate(%[[G]]) : tensor<?x?x?x?xf32>{{$}}
// CHECK:         attn.combine %[[A]], %[[B]] gate(%[[G]]) {attn.tag = "mixed"} : tensor<?x?x?x?xf32>{{$}}
func.func @combine_gate(%a: tensor<?x?x?x?xf32>, %b: tensor<?x?x?x?xf32>, %g: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = attn.combine %a gate(%g) : tensor<?x?x?x?xf32>
  %1 = attn.combine %a, %b gate(%g) {attn.tag = "mixed"} : tensor<?x?x?x?xf32>
  return %0, %1 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// Standalone enum attributes
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @enum_attrs()
// CHECK-SAME:    attn.feature_maps = [#attn.feature_map<identity>, #attn.feature_map<relu>, #attn.feature_map<elu1>, #attn.feature_map<favor_plus>, #attn.feature_map<cosformer>]
// CHECK-SAME:    attn.normalizers = [#attn.normalizer<rows>, #attn.normalizer<length>, #attn.normalizer<none>]
// CHECK-SAME:    attn.orders = [#attn.order<auto>, #attn.order<qk_first>, #attn.order<kv_first>]
// CHECK-SAME:    attn.scores = [#attn.score<softmax>, #attn.score<relu2>, #attn.score<kernel>]
func.func @enum_attrs() attributes {
    attn.scores = [#attn.score<softmax>, #attn.score<relu2>, #attn.score<kernel>],
    attn.feature_maps = [#attn.feature_map<identity>, #attn.feature_map<relu>,
                         #attn.feature_map<elu1>, #attn.feature_map<favor_plus>,
                         #attn.feature_map<cosformer>],
    attn.normalizers = [#attn.normalizer<rows>, #attn.normalizer<length>, #attn.normalizer<none>],
    attn.orders = [#attn.order<auto>, #attn.order<qk_first>, #attn.order<kv_first>]} {
  return
}

//===----------------------------------------------------------------------===//
// DESIGN §1 seed variants
//===----------------------------------------------------------------------===//

// Standard softmax attention.
// CHECK-LABEL: func.func @seed_softmax(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term softmax (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[O:.+]] = attn.combine %[[T]] : tensor<1x2x16x8xf32>
// CHECK:         return %[[O]]
func.func @seed_softmax(%q: !t, %k: !t, %v: !t) -> !t {
  %t = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// Causal softmax attention.
// CHECK-LABEL: func.func @seed_causal_softmax(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term softmax (%[[Q]], %[[K]], %[[V]]) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_causal_softmax(%q: !t, %k: !t, %v: !t) -> !t {
  %t = attn.term softmax (%q, %k, %v) mask causal : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// Linear attention, elu(x)+1 features (Katharopoulos et al.), causal.
// CHECK-LABEL: func.func @seed_linear_elu1(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term kernel elu1 (%[[Q]], %[[K]], %[[V]]) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_linear_elu1(%q: !t, %k: !t, %v: !t) -> !t {
  %t = attn.term kernel elu1 (%q, %k, %v) mask causal : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// Linear attention, relu features.
// CHECK-LABEL: func.func @seed_linear_relu(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term kernel relu (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_linear_relu(%q: !t, %k: !t, %v: !t) -> !t {
  %t = attn.term kernel relu (%q, %k, %v) : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// Performer: FAVOR+ with m = 64 random features.
// CHECK-LABEL: func.func @seed_performer(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[W:[a-z0-9]+]]: tensor<64x8xf32>)
// CHECK:         %[[T:.+]] = attn.term kernel favor_plus (%[[Q]], %[[K]], %[[V]]) omega(%[[W]] : tensor<64x8xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_performer(%q: !t, %k: !t, %v: !t, %w: tensor<64x8xf32>) -> !t {
  %t = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<64x8xf32>) : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// cosFormer.
// CHECK-LABEL: func.func @seed_cosformer(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term kernel cosformer (%[[Q]], %[[K]], %[[V]]) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_cosformer(%q: !t, %k: !t, %v: !t) -> !t {
  %t = attn.term kernel cosformer (%q, %k, %v) : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// Linformer: softmax over k = 4 projected keys.
// CHECK-LABEL: func.func @seed_linformer(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[E:[a-z0-9]+]]: tensor<4x16xf32>, %[[F:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK:         %[[T:.+]] = attn.term softmax (%[[Q]], %[[K]], %[[V]]) project(%[[E]], %[[F]] : tensor<4x16xf32>, tensor<4x16xf32>) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[T]] : tensor<1x2x16x8xf32>
func.func @seed_linformer(%q: !t, %k: !t, %v: !t, %e: tensor<4x16xf32>, %f: tensor<4x16xf32>) -> !t {
  %t = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<4x16xf32>, tensor<4x16xf32>) : !t, !t, !t -> !t
  %o = attn.combine %t : !t
  return %o : !t
}

// FLASH-Quad: relu2 scores, length normaliser, GAU gate.
// CHECK-LABEL: func.func @seed_flash_quad(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[T:.+]] = attn.term relu2 (%[[Q]], %[[K]], %[[V]]) mask causal normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[O:.+]] = attn.combine %[[T]] gate(%[[G]]) : tensor<1x2x16x8xf32>{{$}}
// CHECK:         return %[[O]]
func.func @seed_flash_quad(%q: !t, %k: !t, %v: !t, %g: !t) -> !t {
  %t = attn.term relu2 (%q, %k, %v) mask causal normalizer length : !t, !t, !t -> !t
  %o = attn.combine %t gate(%g) : !t
  return %o : !t
}

// FLASH mixed chunk: a quadratic relu2 term inside each chunk plus a linear
// kernel identity term over the earlier chunks, summed and gated.
// CHECK-LABEL: func.func @seed_flash_mixed_chunk(
// CHECK-SAME:    %[[QL:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[KL:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[QG:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[KG:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[LOCAL:.+]] = attn.term relu2 (%[[QL]], %[[KL]], %[[V]]) mask block_causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[GLOBAL:.+]] = attn.term kernel identity (%[[QG]], %[[KG]], %[[V]]) mask prior_blocks(4) normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[O:.+]] = attn.combine %[[LOCAL]], %[[GLOBAL]] gate(%[[G]]) : tensor<1x2x16x8xf32>{{$}}
// CHECK:         return %[[O]]
func.func @seed_flash_mixed_chunk(%ql: !t, %kl: !t, %qg: !t, %kg: !t, %v: !t, %g: !t) -> !t {
  %local = attn.term relu2 (%ql, %kl, %v) mask block_causal(4) : !t, !t, !t -> !t
  %global = attn.term kernel identity (%qg, %kg, %v) mask prior_blocks(4) normalizer length : !t, !t, !t -> !t
  %o = attn.combine %local, %global gate(%g) : !t
  return %o : !t
}

// FLASH mixed chunk, non-causal form: block(c) locally, no mask globally.
// CHECK-LABEL: func.func @seed_flash_mixed_chunk_bidirectional(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x16x8xf32>)
// CHECK:         %[[LOCAL:.+]] = attn.term relu2 (%[[Q]], %[[K]], %[[V]]) mask block(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[GLOBAL:.+]] = attn.term kernel identity (%[[Q]], %[[K]], %[[V]]) mask none normalizer length : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         attn.combine %[[LOCAL]], %[[GLOBAL]] gate(%[[G]]) : tensor<1x2x16x8xf32>{{$}}
func.func @seed_flash_mixed_chunk_bidirectional(%q: !t, %k: !t, %v: !t, %g: !t) -> !t {
  %local = attn.term relu2 (%q, %k, %v) mask block(4) : !t, !t, !t -> !t
  %global = attn.term kernel identity (%q, %k, %v) mask none normalizer length : !t, !t, !t -> !t
  %o = attn.combine %local, %global gate(%g) : !t
  return %o : !t
}

// Decay (DESIGN §1.2): a number, one γ per head [H], one g per token
// [B, H, N]; key weight κ [B, H, M] (RFA's gate: decay g, key weight 1 − g).
// CHECK-LABEL: func.func @decay_rate(
// CHECK:         attn.term kernel identity (%{{.*}}, %{{.*}}, %{{.*}}) decay 9.000000e-01 mask causal normalizer none : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @decay_rate(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) mask causal normalizer none decay 0.9 : !t, !t, !t -> !t
  return %o : !t
}

// CHECK-LABEL: func.func @decay_per_head(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<2xf32>
// CHECK:         attn.term kernel identity (%{{.*}}, %{{.*}}, %{{.*}}) decay(%[[G]] : tensor<2xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @decay_per_head(%q: !t, %k: !t, %v: !t, %g: tensor<2xf32>) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay(%g : tensor<2xf32>) mask causal : !t, !t, !t -> !t
  return %o : !t
}

// CHECK-LABEL: func.func @decay_per_token_key_weight(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<1x2x16xf32>, %[[W:[a-z0-9]+]]: tensor<1x2x16xf32>
// CHECK:         attn.term kernel elu1 (%{{.*}}, %{{.*}}, %{{.*}}) decay(%[[G]] : tensor<1x2x16xf32>) key_weight(%[[W]] : tensor<1x2x16xf32>) mask block_causal(4) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @decay_per_token_key_weight(%q: !t, %k: !t, %v: !t, %g: tensor<1x2x16xf32>, %w: tensor<1x2x16xf32>) -> !t {
  %o = attn.term kernel elu1 (%q, %k, %v) key_weight(%w : tensor<1x2x16xf32>) decay(%g : tensor<1x2x16xf32>) mask block_causal(4) : !t, !t, !t -> !t
  return %o : !t
}

// Random Feature Attention, gated causal: decay g, key weight 1 − g.
// CHECK-LABEL: func.func @rfa_gated(
// CHECK:         attn.term kernel rfa (%{{.*}}, %{{.*}}, %{{.*}}) omega(%{{.*}} : tensor<4x8xf32>) decay(%{{.*}} : tensor<1x2x16xf32>) key_weight(%{{.*}} : tensor<1x2x16xf32>) mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @rfa_gated(%q: !t, %k: !t, %v: !t, %w: tensor<4x8xf32>, %g: tensor<1x2x16xf32>, %kw: tensor<1x2x16xf32>) -> !t {
  %o = attn.term kernel rfa (%q, %k, %v) omega(%w : tensor<4x8xf32>) decay(%g : tensor<1x2x16xf32>) key_weight(%kw : tensor<1x2x16xf32>) mask causal : !t, !t, !t -> !t
  return %o : !t
}

// The recurrent order.
// CHECK-LABEL: func.func @recurrent(
// CHECK:         attn.term kernel elu1 (%{{.*}}, %{{.*}}, %{{.*}}) mask causal order recurrent : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>{{$}}
func.func @recurrent(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel elu1 (%q, %k, %v) mask causal order recurrent : !t, !t, !t -> !t
  return %o : !t
}

// State in and out (DESIGN §1.2): S0 [B, H, F, E] and z0 [B, H, F] for rows,
// the final state and norm after the output.
// CHECK-LABEL: func.func @state_in_out(
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}} = attn.term kernel elu1 (%{{.*}}, %{{.*}}, %{{.*}}) state(%{{.*}}, %{{.*}} : tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) final_state mask causal order recurrent : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>{{$}}
func.func @state_in_out(%q: !t, %k: !t, %v: !t, %s: tensor<1x2x8x8xf32>, %z: tensor<1x2x8xf32>) -> (!t, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) {
  %o, %s1, %z1 = attn.term kernel elu1 (%q, %k, %v) state(%s, %z : tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) final_state mask causal order recurrent : !t, !t, !t -> !t, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>
  return %o, %s1, %z1 : !t, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>
}

//===----------------------------------------------------------------------===//
// DESIGN §1.3: grouped heads, query positions, windows, soft-capping, ALiBi
// and sinks
//===----------------------------------------------------------------------===//

// Four query heads over two key/value heads; a window; a causal block of
// four queries at the end of 32 keys (bottom-right alignment).
// CHECK-LABEL: func.func @grouped_windows(
// CHECK:         attn.term softmax (%{{.*}}, %{{.*}}, %{{.*}}) mask window(127, 0) : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>{{$}}
// CHECK:         attn.term relu2 (%{{.*}}, %{{.*}}, %{{.*}}) mask window(3, 2) : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>{{$}}
// CHECK:         attn.term softmax (%{{.*}}, %{{.*}}, %{{.*}}) mask causal : tensor<1x4x4x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x4x4x8xf32>{{$}}
func.func @grouped_windows(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                           %v: tensor<1x2x16x8xf32>, %q4: tensor<1x4x4x8xf32>,
                           %k32: tensor<1x2x32x8xf32>, %v32: tensor<1x2x32x8xf32>)
    -> (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x4x8xf32>) {
  %0 = attn.term softmax (%q, %k, %v) mask window(127, 0) : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
  %1 = attn.term relu2 (%q, %k, %v) mask window(3, 2) : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
  %2 = attn.term softmax (%q4, %k32, %v32) mask causal : tensor<1x4x4x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x4x4x8xf32>
  return %0, %1, %2 : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x4x8xf32>
}

// s <- 50 tanh(s / 50), then the ALiBi bias (the standard slopes or an
// operand [H]), then the mask; a sink logit per head; key and query lengths
// [B] (printed keys first).
// CHECK-LABEL: func.func @score_modifications(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x8xf32>, %[[SL:[a-z0-9]+]]: tensor<2xf32>, %[[L:[a-z0-9]+]]: tensor<1xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) softcap 5.000000e+01 mask causal : {{.*}}
// CHECK:         attn.term relu2 (%[[Q]], %[[Q]], %[[Q]]) alibi mask causal : {{.*}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) softcap 3.000000e+01 alibi(%[[SL]] : tensor<2xf32>) sink(%[[SL]] : tensor<2xf32>) mask window(7, 0) : {{.*}}
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) key_lengths(%[[L]] : tensor<1xf32>) query_lengths(%[[L]] : tensor<1xf32>) mask causal : {{.*}}
func.func @score_modifications(%q: !t, %slopes: tensor<2xf32>, %lengths: tensor<1xf32>) -> (!t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %q, %q) softcap 50.0 mask causal : !t, !t, !t -> !t
  %1 = attn.term relu2 (%q, %q, %q) alibi mask causal : !t, !t, !t -> !t
  %2 = attn.term softmax (%q, %q, %q) mask window(7, 0) sink(%slopes : tensor<2xf32>) alibi(%slopes : tensor<2xf32>) softcap 30.0 : !t, !t, !t -> !t
  %3 = attn.term kernel elu1 (%q, %q, %q) query_lengths(%lengths : tensor<1xf32>) mask causal key_lengths(%lengths : tensor<1xf32>) : !t, !t, !t -> !t
  return %0, %1, %2, %3 : !t, !t, !t, !t
}

// The log-sum-exp of a softmax term's rows as a second result (C18).
// CHECK-LABEL: func.func @log_sum_exp(
// CHECK:         %[[O:.+]], %[[LSE:.+]] = attn.term softmax (%{{.*}}, %{{.*}}, %{{.*}}) lse mask causal : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
// CHECK:         return %[[O]], %[[LSE]]
func.func @log_sum_exp(%q: tensor<1x2x16x8xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16xf32>) {
  %0:2 = attn.term softmax (%q, %q, %q) mask causal lse : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  return %0#0, %0#1 : tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
}

//===----------------------------------------------------------------------===//
// Element types (C19, combine C4): f16 / bf16 queries, keys and values,
// f32 arithmetic, an f32 or narrow result
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @element_types(
// CHECK:         %[[T0:.+]] = attn.term softmax (%{{.+}}, %{{.+}}, %{{.+}}) : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x16x8xf32>{{$}}
// CHECK:         %[[T1:.+]] = attn.term kernel elu1 (%{{.+}}, %{{.+}}, %{{.+}}) : tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16> -> tensor<1x2x16x8xf16>{{$}}
// CHECK:         attn.combine %[[T0]], %[[T0]] : tensor<1x2x16x8xf32> -> tensor<1x2x16x8xbf16>{{$}}
// CHECK:         attn.combine %[[T0]] : tensor<1x2x16x8xf32>{{$}}
func.func @element_types(%q: tensor<1x2x16x8xbf16>, %h: tensor<1x2x16x8xf16>)
    -> (tensor<1x2x16x8xf16>, tensor<1x2x16x8xbf16>, !t) {
  %0 = attn.term softmax (%q, %q, %q) : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16> -> !t
  %1 = attn.term kernel elu1 (%h, %h, %h) : tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16> -> tensor<1x2x16x8xf16>
  %2 = attn.combine %0, %0 : !t -> tensor<1x2x16x8xbf16>
  %3 = attn.combine %0 : !t -> !t
  return %1, %2, %3 : tensor<1x2x16x8xf16>, tensor<1x2x16x8xbf16>, !t
}
