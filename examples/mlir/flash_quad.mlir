// FLASH-Quad / GAU (Hua et al., 2022): one head, relu(QK^T/sqrt(s))^2 / n weights
// (the 'length' normaliser is the default of relu2) and an elementwise gate.
func.func @flash_quad(%q: tensor<1x1x?x128xf32>, %k: tensor<1x1x?x128xf32>, %v: tensor<1x1x?x256xf32>, %gate: tensor<1x1x?x256xf32>) -> tensor<1x1x?x256xf32> {
  %t = attn.term relu2 (%q, %k, %v) : tensor<1x1x?x128xf32>, tensor<1x1x?x128xf32>, tensor<1x1x?x256xf32> -> tensor<1x1x?x256xf32>
  %o = attn.combine %t gate(%gate) : tensor<1x1x?x256xf32>
  return %o : tensor<1x1x?x256xf32>
}
