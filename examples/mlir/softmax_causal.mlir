// Causal (decoder) softmax attention: key j is visible to query i when j <= i.
func.func @softmax_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term softmax (%q, %k, %v) mask causal : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
