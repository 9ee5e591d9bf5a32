// attn-lower-to-llvm (the CPU pipeline) cannot lower a gpu.launch of the
// input; attn-check-lowered reported the unrealized cast left next to it,
// at an unknown location. Now it reports the gpu.launch, at its line.

func.func @launch(%q: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = attn.term kernel elu1 (%q, %q, %q) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    gpu.terminator
  }
  %o = attn.term softmax (%q, %q, %q) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}
