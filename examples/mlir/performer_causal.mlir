// Causal Performer FAVOR+ (Choromanski et al., 2021), m = 256 random features.
func.func @performer_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %omega: tensor<256x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term kernel favor_plus (%q, %k, %v) omega(%omega : tensor<256x64xf32>) mask causal : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
