// Performer FAVOR+ (Choromanski et al., 2021): positive random features,
// phi(q).phi(k) ~ exp(q.k/sqrt(d)) with m = 256 orthogonal Gaussian rows omega.
func.func @performer(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %omega: tensor<256x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term kernel favor_plus (%q, %k, %v) omega(%omega : tensor<256x64xf32>) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
