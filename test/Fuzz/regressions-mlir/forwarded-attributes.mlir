// attn-lower-to-llvm and attn-lower-to-nvvm crashed (a call through a null
// function_ref in LLVM::CallOp::setPropertiesFromAttr) on a func.call or
// func.func carrying a discardable attribute named like a property of the
// LLVM op it is lowered to, of another kind: the func-to-LLVM patterns
// forward such attributes to the builders, which cannot report the error.
// Now attn-check-forwarded-attributes reports it at the op.

// Found by attn-mlir-fuzzer (outline-op, discardable-attr).
func.func private @outlined(tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
func.func @f(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = func.call @outlined(%v, %k, %q) {operandSegmentSizes = 9223372036854775807 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

func.func private @ext(tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
func.func @call_cconv(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %0 = func.call @ext(%q) {CConv = 1 : i64} : (tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

func.func @func_linkage(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> attributes {linkage = 1 : i64} {
  %0 = attn.term softmax (%q, %q, %q) : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}
