// Linformer (Wang et al., 2020): keys and values projected along the sequence
// to k = 128 rows (E, F: [k, N]) before softmax attention.
func.func @linformer_k128(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>, %e: tensor<128x4096xf32>, %f: tensor<128x4096xf32>) -> tensor<1x8x4096x64xf32> {
  %o = attn.term softmax (%q, %k, %v) project(%e, %f : tensor<128x4096xf32>, tensor<128x4096xf32>) : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %o : tensor<1x8x4096x64xf32>
}
