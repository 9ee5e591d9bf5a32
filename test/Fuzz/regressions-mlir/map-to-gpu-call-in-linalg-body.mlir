// attn-lower-to-nvvm: a call in a linalg.generic body bufferizes to
// memref.copy there, which attn-map-to-gpu turns into a linalg.copy after
// its check for linalg ops nested in linalg bodies; the copy was freed with
// its parent's body and then mapped (segfault in CopyOp). Now: an error at
// the copy.

!t = tensor<1x1x8x4xf32>
func.func private @callee(!t, !t, !t) -> !t
func.func @call_in_body(%q: !t, %k: !t, %v: !t) -> !t {
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32):
    %x = func.call @callee(%v, %k, %q) : (!t, !t, !t) -> !t
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %0 = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  return %0 : !t
}
