// Sizes whose byte size overflows int64 (here 1·8·2^62·64 elements of 4
// bytes) verified, and tile-and-vectorize and the GPU mapping multiplied
// them out (signed overflow). Now the verifier rejects them (C1).

func.func @huge(%q: tensor<1x8x4611686018427387904x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>) -> tensor<1x8x4611686018427387904x64xf32> {
  %0 = attn.term softmax (%q, %k, %v) : tensor<1x8x4611686018427387904x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x4611686018427387904x64xf32>
  return %0 : tensor<1x8x4611686018427387904x64xf32>
}

// -----

func.func @huge_combine(%a: tensor<2x2x2305843009213693952x1xf32>) -> tensor<2x2x2305843009213693952x1xf32> {
  %0 = attn.combine %a, %a : tensor<2x2x2305843009213693952x1xf32>
  return %0 : tensor<2x2x2305843009213693952x1xf32>
}
