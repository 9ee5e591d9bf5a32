// RUN: attn-opt %s --split-input-file --attn-check-lowered --verify-diagnostics

// Only the LLVM and OpenMP dialects may be left.
llvm.func @ok(%arg0: f32) -> f32 {
  llvm.return %arg0 : f32
}

// -----

func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error@+1 {{the lowering left a 'attn.term' operation: the output must be the LLVM dialect only}}
  %0 = attn.term softmax (%q, %q, %q) : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

llvm.func @g(%arg0: f32) -> f32 {
  // expected-error@+1 {{the lowering left a 'arith.addf' operation}}
  %0 = arith.addf %arg0, %arg0 : f32
  llvm.return %0 : f32
}
