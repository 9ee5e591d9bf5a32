// FLASH mixed-chunk attention (Hua et al., 2022), causal: quadratic relu2
// attention inside each chunk of 256, plus linear attention over all earlier
// chunks, both divided by the number of keys they see, summed and gated.
func.func @flash_mixed_chunk(%ql: tensor<1x1x?x128xf32>, %kl: tensor<1x1x?x128xf32>, %qg: tensor<1x1x?x128xf32>, %kg: tensor<1x1x?x128xf32>, %v: tensor<1x1x?x256xf32>, %gate: tensor<1x1x?x256xf32>) -> tensor<1x1x?x256xf32> {
  %local = attn.term relu2 (%ql, %kl, %v) mask block_causal(256) : tensor<1x1x?x128xf32>, tensor<1x1x?x128xf32>, tensor<1x1x?x256xf32> -> tensor<1x1x?x256xf32>
  %global = attn.term kernel identity (%qg, %kg, %v) mask prior_blocks(256) normalizer length : tensor<1x1x?x128xf32>, tensor<1x1x?x128xf32>, tensor<1x1x?x256xf32> -> tensor<1x1x?x256xf32>
  %o = attn.combine %local, %global gate(%gate) : tensor<1x1x?x256xf32>
  return %o : tensor<1x1x?x256xf32>
}
