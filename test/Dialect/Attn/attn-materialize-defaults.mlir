// RUN: attn-opt %s --attn-materialize-defaults | FileCheck %s
// The output parses again, and the pass is idempotent.
// RUN: attn-opt %s --attn-materialize-defaults | attn-opt --attn-materialize-defaults | FileCheck %s

// attn-materialize-defaults writes the DESIGN §1 defaults of every attn.term
// explicitly: mask none; normalizer rows (softmax, kernel) or length (relu2);
// eps of a rows normalizer (0 for softmax and relu2, 1e-6 for kernel); and,
// for the terms that use a scale (softmax, relu2, kernel favor_plus) and have
// a static D, scale 1/sqrt(D). Explicit values are kept.

!t = tensor<1x2x16x64xf32>

// softmax: rows, eps 0, scale 1/sqrt(64) = 0.125.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x64xf32>)
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) mask none normalizer rows scale 1.250000e-01 eps 0.000000e+00 : {{.*}}{{$}}
func.func @softmax(%q: !t) -> !t {
  %0 = attn.term softmax (%q, %q, %q) : !t, !t, !t -> !t
  return %0 : !t
}

// 1/sqrt(D) for a D whose root is not exact.
// CHECK-LABEL: func.func @softmax_d8(
// CHECK:         attn.term softmax (%{{.+}}) mask none normalizer rows scale 0.35355339059327373 eps 0.000000e+00 : {{.*}}{{$}}
func.func @softmax_d8(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %0 = attn.term softmax (%q, %q, %q)
         : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// relu2: length, so no eps; scale.
// CHECK-LABEL: func.func @relu2(
// CHECK:         attn.term relu2 (%{{.+}}) mask none normalizer length scale 1.250000e-01 : {{.*}}{{$}}
func.func @relu2(%q: !t) -> !t {
  %0 = attn.term relu2 (%q, %q, %q) : !t, !t, !t -> !t
  return %0 : !t
}

// kernel elu1/identity/relu/cosformer: rows, eps 1e-6, and no scale (the
// feature map does not use one).
// CHECK-LABEL: func.func @kernels(
// CHECK:         attn.term kernel elu1 (%{{.+}}) mask none normalizer rows eps 9.9999999999999995E-7 : {{.*}}{{$}}
// CHECK:         attn.term kernel identity (%{{.+}}) mask none normalizer rows eps 9.9999999999999995E-7 : {{.*}}{{$}}
// CHECK:         attn.term kernel relu (%{{.+}}) mask none normalizer rows eps 9.9999999999999995E-7 : {{.*}}{{$}}
// CHECK:         attn.term kernel cosformer (%{{.+}}) mask none normalizer rows eps 9.9999999999999995E-7 : {{.*}}{{$}}
// CHECK-NOT:     scale
// CHECK:         return
func.func @kernels(%q: !t) -> (!t, !t, !t, !t) {
  %0 = attn.term kernel elu1 (%q, %q, %q) : !t, !t, !t -> !t
  %1 = attn.term kernel identity (%q, %q, %q) : !t, !t, !t -> !t
  %2 = attn.term kernel relu (%q, %q, %q) : !t, !t, !t -> !t
  %3 = attn.term kernel cosformer (%q, %q, %q) : !t, !t, !t -> !t
  return %0, %1, %2, %3 : !t, !t, !t, !t
}

// kernel favor_plus uses the scale (x' = x·s^(1/2)): rows, eps 1e-6, scale.
// CHECK-LABEL: func.func @favor_plus(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x64xf32>, %[[W:[a-z0-9]+]]: tensor<32x64xf32>)
// CHECK:         attn.term kernel favor_plus (%[[Q]], %[[Q]], %[[Q]]) omega(%[[W]] : tensor<32x64xf32>) mask none normalizer rows scale 1.250000e-01 eps 9.9999999999999995E-7 : {{.*}}{{$}}
func.func @favor_plus(%q: !t, %w: tensor<32x64xf32>) -> !t {
  %0 = attn.term kernel favor_plus (%q, %q, %q) omega(%w : tensor<32x64xf32>) : !t, !t, !t -> !t
  return %0 : !t
}

// Explicit values are kept; only the missing ones are added.
// CHECK-LABEL: func.func @explicit(
// CHECK:         attn.term softmax (%{{.+}}) mask causal normalizer rows scale 5.000000e-01 eps 1.000000e-03 : {{.*}}{{$}}
// CHECK:         attn.term softmax (%{{.+}}) mask block(4) normalizer length scale 1.250000e-01 : {{.*}}{{$}}
// CHECK:         attn.term relu2 (%{{.+}}) mask block_causal(4) normalizer rows scale 2.000000e+00 eps 0.000000e+00 : {{.*}}{{$}}
// CHECK:         attn.term kernel identity (%{{.+}}) mask prior_blocks(4) normalizer length : {{.*}}{{$}}
// CHECK:         attn.term kernel elu1 (%{{.+}}) mask none normalizer none : {{.*}}{{$}}
// CHECK:         attn.term kernel elu1 (%{{.+}}) mask none normalizer rows eps 1.000000e-02 : {{.*}}{{$}}
// CHECK:         attn.term softmax (%{{.+}}) mask none normalizer rows scale 1.250000e-01 eps 0.000000e+00 : {{.*}}{{$}}
func.func @explicit(%q: !t) -> (!t, !t, !t, !t, !t, !t, !t) {
  %0 = attn.term softmax (%q, %q, %q) mask causal scale 0.5 eps 1.0e-3 : !t, !t, !t -> !t
  %1 = attn.term softmax (%q, %q, %q) mask block(4) normalizer length : !t, !t, !t -> !t
  %2 = attn.term relu2 (%q, %q, %q) mask block_causal(4) normalizer rows scale 2.0 : !t, !t, !t -> !t
  %3 = attn.term kernel identity (%q, %q, %q) mask prior_blocks(4) normalizer length : !t, !t, !t -> !t
  %4 = attn.term kernel elu1 (%q, %q, %q) normalizer none : !t, !t, !t -> !t
  %5 = attn.term kernel elu1 (%q, %q, %q) mask none eps 1.0e-2 : !t, !t, !t -> !t
  %6 = attn.term softmax (%q, %q, %q) mask none normalizer rows eps 0.0 : !t, !t, !t -> !t
  return %0, %1, %2, %3, %4, %5, %6 : !t, !t, !t, !t, !t, !t, !t
}

// order, chunk, omega, the projection and discardable attributes are left
// alone.
// CHECK-LABEL: func.func @untouched(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<1x2x16x64xf32>, %[[E:[a-z0-9]+]]: tensor<4x16xf32>)
// CHECK:         attn.term kernel elu1 (%[[Q]], %[[Q]], %[[Q]]) mask causal normalizer rows eps 9.9999999999999995E-7 order kv_first chunk 8 {attn.tag = "t"} : {{.*}}{{$}}
// CHECK:         attn.term softmax (%[[Q]], %[[Q]], %[[Q]]) project(%[[E]], %[[E]] : tensor<4x16xf32>, tensor<4x16xf32>) mask none normalizer rows scale 1.250000e-01 eps 0.000000e+00 order qk_first : {{.*}}{{$}}
func.func @untouched(%q: !t, %e: tensor<4x16xf32>) -> (!t, !t) {
  %0 = attn.term kernel elu1 (%q, %q, %q) mask causal order kv_first chunk 8 {attn.tag = "t"} : !t, !t, !t -> !t
  %1 = attn.term softmax (%q, %q, %q) project(%e, %e : tensor<4x16xf32>, tensor<4x16xf32>) order qk_first : !t, !t, !t -> !t
  return %0, %1 : !t, !t
}

// With a dynamic D the default scale is only known at run time: it stays
// implicit. A dynamic N or M does not matter.
// CHECK-LABEL: func.func @dynamic(
// CHECK:         attn.term softmax (%{{.+}}) mask none normalizer rows eps 0.000000e+00 : tensor<1x2x16x?xf32>, {{.*}}{{$}}
// CHECK:         attn.term relu2 (%{{.+}}) mask none normalizer length : tensor<1x2x16x?xf32>, {{.*}}{{$}}
// CHECK:         attn.term kernel favor_plus (%{{.+}}) omega(%{{.+}} : tensor<32x?xf32>) mask none normalizer rows eps 9.9999999999999995E-7 : tensor<1x2x16x?xf32>, {{.*}}{{$}}
// CHECK:         attn.term softmax (%{{.+}}) mask causal normalizer rows scale 2.500000e-01 eps 0.000000e+00 : tensor<?x?x?x16xf32>, {{.*}}{{$}}
// CHECK:         attn.term softmax (%{{.+}}) mask none normalizer rows scale 3.000000e+00 eps 0.000000e+00 : tensor<?x?x?x?xf32>, {{.*}}{{$}}
func.func @dynamic(%q: tensor<1x2x16x?xf32>, %w: tensor<32x?xf32>, %n: tensor<?x?x?x16xf32>, %a: tensor<?x?x?x?xf32>)
    -> (tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>) {
  %0 = attn.term softmax (%q, %q, %q)
         : tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32> -> tensor<1x2x16x?xf32>
  %1 = attn.term relu2 (%q, %q, %q)
         : tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32> -> tensor<1x2x16x?xf32>
  %2 = attn.term kernel favor_plus (%q, %q, %q) omega(%w : tensor<32x?xf32>)
         : tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32> -> tensor<1x2x16x?xf32>
  %3 = attn.term softmax (%n, %n, %n) mask causal
         : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  %4 = attn.term softmax (%a, %a, %a) scale 3.0
         : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4
      : tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<1x2x16x?xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x?xf32>
}

// attn.combine has no defaults; the FLASH mixed-chunk spec gets its terms'.
// CHECK-LABEL: func.func @flash_mixed_chunk(
// CHECK-SAME:    %[[V:[a-z0-9]+]]: tensor<1x2x16x64xf32>, %[[G:[a-z0-9]+]]: tensor<1x2x16x64xf32>)
// CHECK:         %[[L:.+]] = attn.term relu2 (%[[V]], %[[V]], %[[V]]) mask block_causal(4) normalizer length scale 1.250000e-01 : {{.*}}{{$}}
// CHECK:         %[[R:.+]] = attn.term kernel identity (%[[V]], %[[V]], %[[V]]) mask prior_blocks(4) normalizer length : {{.*}}{{$}}
// CHECK:         attn.combine %[[L]], %[[R]] gate(%[[G]]) : tensor<1x2x16x64xf32>{{$}}
func.func @flash_mixed_chunk(%v: !t, %g: !t) -> !t {
  %l = attn.term relu2 (%v, %v, %v) mask block_causal(4) : !t, !t, !t -> !t
  %r = attn.term kernel identity (%v, %v, %v) mask prior_blocks(4) normalizer length : !t, !t, !t -> !t
  %o = attn.combine %l, %r gate(%g) : !t
  return %o : !t
}
