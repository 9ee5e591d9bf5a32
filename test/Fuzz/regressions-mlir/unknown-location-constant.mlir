// attn-lower-to-nvvm rejected this with an error at an unknown location:
// the canonicalizer hoists the constant without a location, and the
// memref.get_global bufferized from it, which attn-map-to-gpu reports, has
// none either. Now the error is at the enclosing function.

func.func @constant_key(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %k = arith.constant dense<1.0> : tensor<1x2x16x8xf32>
  %o = attn.term softmax (%q, %k, %v) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
