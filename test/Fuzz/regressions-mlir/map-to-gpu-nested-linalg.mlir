// attn-lower-to-nvvm: heap-use-after-free in attn-map-to-gpu (mapToGrid): a
// linalg op in the body of another was lowered to loops, and freed, with
// its parent's body, then mapped. Now: an error at the inner op.

func.func @nested(%q: tensor<4xf32>) -> tensor<4xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%q : tensor<4xf32>) {
  ^bb0(%a: f32):
    %e = tensor.empty() : tensor<8xf32>
    %f = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<8xf32>) {
    ^bb0(%b: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i32
      %fi = arith.sitofp %ii : i32 to f32
      %s = arith.addf %fi, %a : f32
      %x = math.exp %s : f32
      linalg.yield %x : f32
    } -> tensor<8xf32>
    %c3 = arith.constant 3 : index
    %x = tensor.extract %f[%c3] : tensor<8xf32>
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// The issue's reproducer: an attn.term inside a linalg.generic body.
!t = tensor<1x2x16x8xf32>
func.func @term_in_linalg_body(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%o : !t) {
  ^bb0(%a: f32):
    %x = attn.term kernel elu1 (%q, %k, %v) mask causal : !t, !t, !t -> !t
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %e = tensor.extract %x[%i0, %i1, %i2, %i3] : !t
    linalg.yield %e : f32
  } -> !t
  return %g : !t
}
