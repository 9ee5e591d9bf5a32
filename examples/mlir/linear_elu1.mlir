// Linear attention (Katharopoulos et al., 2020) with feature map elu1:
// phi(Q) (phi(K)^T V) / (phi(Q) sum_j phi(k_j)); the order is left to the cost model.
func.func @linear_elu1(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term kernel elu1 (%q, %k, %v) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
