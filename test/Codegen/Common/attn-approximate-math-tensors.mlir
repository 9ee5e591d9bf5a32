// RUN: attn-opt %s --attn-approximate-math=arith-only | FileCheck %s
// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=POLY

// Math on tensors is left alone (the expansions and the polynomials build
// scalar or vector constants: they made invalid IR of it, a verifier
// error at an unknown location); scalar math next to it is still rewritten.
// CHECK-LABEL: func.func @tensors(
// CHECK:         math.exp %{{.+}} : tensor<4xf32>
// CHECK:         math.floor %{{.+}} : tensor<4xf32>
// CHECK:         math.absf %{{.+}} : tensor<4xf32>
// CHECK:         math.fma %{{.+}} : tensor<4xf32>
// CHECK:         math.sin %{{.+}} : tensor<4xf32>
// CHECK-NOT:     math.
// CHECK:         return
// POLY-LABEL:  func.func @tensors(
// POLY:          math.exp %{{.+}} : tensor<4xf32>
// POLY:          math.sin %{{.+}} : tensor<4xf32>
// POLY-NOT:      math.exp
// POLY:          return
func.func @tensors(%t: tensor<4xf32>, %x: f32) -> (tensor<4xf32>, f32) {
  %0 = math.exp %t : tensor<4xf32>
  %1 = math.floor %0 : tensor<4xf32>
  %2 = math.absf %1 : tensor<4xf32>
  %3 = math.fma %2, %2, %2 : tensor<4xf32>
  %4 = math.sin %3 : tensor<4xf32>
  %5 = math.exp %x : f32
  return %4, %5 : tensor<4xf32>, f32
}
