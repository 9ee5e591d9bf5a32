// Generic-form attn.term whose operandSegmentSizes put q, k and v in one
// group: TermOp::verify read past the operands (heap-buffer-overflow in
// getKey(); fixed in e597b65, kept here).

func.func @segments(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = "attn.term"(%q, %q, %q) <{operandSegmentSizes = array<i32: 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, order = #attn.order<auto>, score = #attn.score<softmax>}> : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @segments_two_keys(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %0 = "attn.term"(%q, %q, %q) <{operandSegmentSizes = array<i32: 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>, order = #attn.order<auto>, score = #attn.score<softmax>}> : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}
