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

// -----

// A cast left where a conversion met an op it could not convert is only a
// symptom: the op is reported (the first left in walk order that is neither
// a cast nor a terminator; found by attn-mlir-fuzzer, a gpu.launch in the
// CPU pipeline was reported as a cast at an unknown location).
llvm.func @cast(%arg0: i64) {
  %0 = builtin.unrealized_conversion_cast %arg0 : i64 to index
  // expected-error@+1 {{the lowering left a 'gpu.launch' operation}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %0, %gy = %0, %gz = %0) threads(%tx, %ty, %tz) in (%sx = %0, %sy = %0, %sz = %0) {
    gpu.terminator
  }
  llvm.return
}

// -----

// Only casts left: the first is reported.
llvm.func @only_cast(%arg0: i64) -> i64 {
  // expected-error@+1 {{the lowering left a 'builtin.unrealized_conversion_cast' operation}}
  %0 = builtin.unrealized_conversion_cast %arg0 : i64 to index
  %1 = builtin.unrealized_conversion_cast %0 : index to i64
  llvm.return %1 : i64
}

// -----

// An op without a location (the canonicalizer hoists constants without
// one) is reported at the nearest enclosing op that has one.
// expected-error@+1 {{the lowering left a 'arith.constant' operation}}
llvm.func @unknown_location() -> f32 {
  %0 = arith.constant 1.0 : f32 loc(unknown)
  llvm.return %0 : f32
}
