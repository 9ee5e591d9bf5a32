// Causal linear attention with feature map elu1: prefix sums of phi(k_j) v_j^T,
// computed chunk by chunk when associated kv-first.
func.func @linear_elu1_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term kernel elu1 (%q, %k, %v) mask causal : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
