// Cross attention (encoder-decoder): N queries attend over M != N keys;
// N and M are independent dynamic sizes.
func.func @cross_attention(%q: tensor<2x8x?x64xf32>, %k: tensor<2x8x?x64xf32>, %v: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %o = attn.term softmax (%q, %k, %v) : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
  return %o : tensor<2x8x?x64xf32>
}
