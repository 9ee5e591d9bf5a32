// RUN: attn-opt %s --attn-approximate-math | FileCheck %s

// exp becomes plain arithmetic (which LLVM vectorizes); other math ops stay.
// CHECK-LABEL: func.func @f(
// CHECK-NOT:     math.exp
// CHECK:         arith.mulf
// CHECK:         math.sqrt
func.func @f(%x: f32) -> (f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.sqrt %x : f32
  return %0, %1 : f32, f32
}
