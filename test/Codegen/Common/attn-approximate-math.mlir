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

// An exp whose result would be subnormal gives 0 (x < ln(FLT_MIN)):
// subnormal arithmetic is ~100x slower on x86. NaN stays NaN (olt).
// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=FLUSH
// FLUSH-LABEL: func.func @masked(
// FLUSH-DAG:     %[[LIMIT:.+]] = arith.constant -87.3365{{[0-9]*}} : f32
// FLUSH-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// FLUSH:         %[[TINY:.+]] = arith.cmpf olt, %arg0, %[[LIMIT]] : f32
// FLUSH:         %[[R:.+]] = arith.select %[[TINY]], %[[ZERO]], %{{.+}} : f32
// FLUSH:         return %[[R]]
func.func @masked(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// f32 exp, the 21-op form: k = round(x log2 e) by adding and subtracting
// 1.5 * 2^23 (no float-to-int conversion), r = x - k ln2 in two steps,
// 2 exp(r) = 2 (1 + r + r^2 P(r)), scaled by 2^(k-1) (the sum's low bits
// shifted into the exponent field, biased by 126), +inf above ln(FLT_MAX).
// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=EXP
// EXP-LABEL: func.func @exp_f32(
// EXP-DAG:     %[[LOG2E:.+]] = arith.constant dense<1.44269502> : vector<8xf32>
// EXP-DAG:     %[[MAGIC:.+]] = arith.constant dense<0x4B400000> : vector<8xf32>
// EXP-DAG:     %[[LN2HI:.+]] = arith.constant dense<-0.693359375> : vector<8xf32>
// EXP-DAG:     %[[SHIFT:.+]] = arith.constant dense<23> : vector<8xi32>
// EXP-DAG:     %[[BIAS:.+]] = arith.constant dense<1056964608> : vector<8xi32>
// EXP-DAG:     %[[TWO:.+]] = arith.constant dense<2.000000e+00> : vector<8xf32>
// EXP-DAG:     %[[MAX:.+]] = arith.constant dense<88.7228394> : vector<8xf32>
// EXP:         %[[T:.+]] = arith.mulf %[[X:.+]], %[[LOG2E]] fastmath<contract>
// EXP:         %[[S:.+]] = arith.addf %[[T]], %[[MAGIC]] fastmath<contract>
// EXP:         %[[K:.+]] = arith.subf %[[S]], %[[MAGIC]] : vector<8xf32>
// EXP:         arith.mulf %[[K]], %[[LN2HI]] fastmath<contract>
// EXP-COUNT-5: arith.addf {{.*}} fastmath<contract>
// EXP:         %[[Y2:.+]] = arith.addf %{{.+}}, %[[TWO]] fastmath<contract>
// EXP:         %[[BITS:.+]] = arith.bitcast %[[S]] : vector<8xf32> to vector<8xi32>
// EXP:         %[[E:.+]] = arith.shli %[[BITS]], %[[SHIFT]]
// EXP:         %[[EB:.+]] = arith.addi %[[E]], %[[BIAS]]
// EXP:         %[[SCALE:.+]] = arith.bitcast %[[EB]] : vector<8xi32> to vector<8xf32>
// EXP:         %[[Y:.+]] = arith.mulf %[[Y2]], %[[SCALE]] fastmath<contract>
// EXP:         %[[OVER:.+]] = arith.cmpf ogt, %[[X]], %[[MAX]]
// EXP:         arith.select %[[OVER]], %{{.+}}, %[[Y]]
func.func @exp_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// arith-only: maxnumf becomes a compare and select (NaN b gives a); with
// nnan, the compare alone.
// ARITH-LABEL: func.func @maxnum(
// ARITH:         %[[GT:.+]] = arith.cmpf ogt, %arg0, %arg1 : f32
// ARITH:         %[[NAN:.+]] = arith.cmpf uno, %arg1, %arg1 : f32
// ARITH:         %[[PICK:.+]] = arith.ori %[[GT]], %[[NAN]] : i1
// ARITH:         arith.select %[[PICK]], %arg0, %arg1 : f32
// ARITH:         %[[GT2:.+]] = arith.cmpf ogt, %arg0, %arg1 : f32
// ARITH-NEXT:    arith.select %[[GT2]], %arg0, %arg1 : f32
func.func @maxnum(%a: f32, %b: f32) -> (f32, f32) {
  %0 = arith.maxnumf %a, %b : f32
  %1 = arith.maxnumf %a, %b fastmath<nnan> : f32
  return %0, %1 : f32, f32
}
