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

// With arith-only (what attn-lower-to-nvvm runs on its kernels), the fma
// and floor the polynomials use, and absf, become arithmetic too, so that
// convert-gpu-to-nvvm has no libdevice call to make.
// RUN: attn-opt %s --attn-approximate-math=arith-only | FileCheck %s --check-prefix=ARITH
// ARITH-LABEL: func.func @g(
// ARITH-NOT:     math.
// ARITH:         arith.fptosi {{.*}} : f32 to i32
// ARITH:         arith.sitofp {{.*}} : i32 to f32
// ARITH:         arith.cmpf ogt
// ARITH:         arith.cmpf olt, {{.*}}, %cst
// ARITH:         arith.mulf {{.*}} fastmath<contract>
// ARITH:         arith.addf {{.*}} fastmath<contract>
// ARITH:         arith.andi {{.*}} : i32
// ARITH-NOT:     math.
func.func @g(%x: f32, %y: f32, %z: f32) -> (f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.floor %x : f32
  %2 = math.fma %x, %y, %z : f32
  %3 = math.absf %y : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// An exp whose result would be subnormal gives 0 (x < ln(FLT_MIN), or NaN
// from -inf - -inf): subnormal arithmetic is ~100x slower on x86.
// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=FLUSH
// FLUSH-LABEL: func.func @masked(
// FLUSH-DAG:     %[[LIMIT:.+]] = arith.constant -87.3365{{[0-9]*}} : f32
// FLUSH-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// FLUSH:         %[[TINY:.+]] = arith.cmpf ult, %arg0, %[[LIMIT]] : f32
// FLUSH:         %[[R:.+]] = arith.select %[[TINY]], %[[ZERO]], %{{.+}} : f32
// FLUSH:         return %[[R]]
func.func @masked(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}
