// cosFormer (Qin et al., 2022): relu features re-weighted by cos(pi (i - j) / 2L),
// decomposed into cos/sin halves so that the product form stays linear.
func.func @cosformer(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = attn.term kernel cosformer (%q, %k, %v) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
