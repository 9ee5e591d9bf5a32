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

// f32 exp, the 14-op form: x clamped to [-87.5, 89] by compares and
// selects that keep a NaN (olt / ogt are false for it), so that the edges
// need no test of their own: below -86.99 (k = -126) the scale's exponent
// field is 0 and the result 0 (no subnormal: ~100x slower arithmetic on
// x86), at 89 (k = 128) the product overflows to +inf. k = round(x log2 e)
// by adding and subtracting 1.5 * 2^23 (no float-to-int conversion),
// r = x - k ln2 in two steps, 2 exp(r) by a degree-6 polynomial in Horner
// form (c_0 = c_1 = 2), scaled by 2^(k-1) (the sum's low bits shifted into
// the exponent field, biased by 126).
// RUN: attn-opt %s --attn-approximate-math | FileCheck %s --check-prefix=EXP
// EXP-LABEL: func.func @exp_f32(
// EXP-DAG:     %[[LO:.+]] = arith.constant dense<-8.750000e+01> : vector<8xf32>
// EXP-DAG:     %[[HI:.+]] = arith.constant dense<8.900000e+01> : vector<8xf32>
// EXP-DAG:     %[[LOG2E:.+]] = arith.constant dense<1.44269502> : vector<8xf32>
// EXP-DAG:     %[[MAGIC:.+]] = arith.constant dense<0x4B400000> : vector<8xf32>
// EXP-DAG:     %[[LN2HI:.+]] = arith.constant dense<-0.693359375> : vector<8xf32>
// EXP-DAG:     %[[SHIFT:.+]] = arith.constant dense<23> : vector<8xi32>
// EXP-DAG:     %[[BIAS:.+]] = arith.constant dense<1056964608> : vector<8xi32>
// EXP-DAG:     %[[TWO:.+]] = arith.constant dense<2.000000e+00> : vector<8xf32>
// EXP:         %[[BELOW:.+]] = arith.cmpf olt, %arg0, %[[LO]]
// EXP:         %[[X1:.+]] = arith.select %[[BELOW]], %[[LO]], %arg0
// EXP:         %[[ABOVE:.+]] = arith.cmpf ogt, %[[X1]], %[[HI]]
// EXP:         %[[X:.+]] = arith.select %[[ABOVE]], %[[HI]], %[[X1]]
// EXP:         %[[T:.+]] = arith.mulf %[[X]], %[[LOG2E]] fastmath<contract>
// EXP:         %[[S:.+]] = arith.addf %[[T]], %[[MAGIC]] fastmath<contract>
// EXP:         %[[K:.+]] = arith.subf %[[S]], %[[MAGIC]] : vector<8xf32>
// EXP:         arith.mulf %[[K]], %[[LN2HI]] fastmath<contract>
// EXP-COUNT-7: arith.mulf {{.*}} fastmath<contract>
// EXP:         %[[Y2:.+]] = arith.addf %{{.+}}, %[[TWO]] fastmath<contract>
// EXP:         %[[BITS:.+]] = arith.bitcast %[[S]] : vector<8xf32> to vector<8xi32>
// EXP:         %[[E:.+]] = arith.shli %[[BITS]], %[[SHIFT]]
// EXP:         %[[EB:.+]] = arith.addi %[[E]], %[[BIAS]]
// EXP:         %[[SCALE:.+]] = arith.bitcast %[[EB]] : vector<8xi32> to vector<8xf32>
// EXP:         %[[Y:.+]] = arith.mulf %[[Y2]], %[[SCALE]] fastmath<contract>
// EXP-NEXT:    return %[[Y]]
func.func @exp_f32(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// An operand known to stay at most 89 needs no overflow clamp: elu1's
// e^min(x, 0), with min(x, 0) as `x > 0 ? 0 : x` (a NaN x stays), or
// minimumf of a constant. Only the lower clamp is left. A bound above 89
// (or a select that is not a min) keeps both.
// EXP-LABEL: func.func @exp_of_bounded(
// EXP-DAG:     %[[LO:.+]] = arith.constant dense<-8.750000e+01> : vector<8xf32>
// EXP-DAG:     %[[HI:.+]] = arith.constant dense<8.900000e+01> : vector<8xf32>
// EXP:         %[[POS:.+]] = arith.cmpf ogt, %arg0, %{{.+}} : vector<8xf32>
// EXP:         %[[NEG:.+]] = arith.select %[[POS]], %{{.+}}, %arg0
// EXP:         %[[BELOW:.+]] = arith.cmpf olt, %[[NEG]], %[[LO]]
// EXP-NEXT:    %[[X:.+]] = arith.select %[[BELOW]], %[[LO]], %[[NEG]]
// EXP-NEXT:    arith.mulf %[[X]], %{{.+}} fastmath<contract>
// EXP:         %[[MIN:.+]] = arith.minimumf %arg0, %{{.+}} : vector<8xf32>
// EXP:         %[[BELOW2:.+]] = arith.cmpf olt, %[[MIN]], %[[LO]]
// EXP-NEXT:    %[[X2:.+]] = arith.select %[[BELOW2]], %[[LO]], %[[MIN]]
// EXP-NEXT:    arith.mulf %[[X2]], %{{.+}} fastmath<contract>
// EXP:         %[[BIG:.+]] = arith.select %{{.+}}, %{{.+}}, %arg0
// EXP:         %[[BELOW3:.+]] = arith.cmpf olt, %[[BIG]], %[[LO]]
// EXP-NEXT:    %[[X3:.+]] = arith.select %[[BELOW3]], %[[LO]], %[[BIG]]
// EXP-NEXT:    %[[ABOVE3:.+]] = arith.cmpf ogt, %[[X3]], %[[HI]]
// EXP-NEXT:    arith.select %[[ABOVE3]], %[[HI]], %[[X3]]
// EXP:         %[[NOTMIN:.+]] = arith.select %{{.+}}, %{{.+}}, %arg0
// EXP:         %[[BELOW4:.+]] = arith.cmpf olt, %[[NOTMIN]], %[[LO]]
// EXP-NEXT:    %[[X4:.+]] = arith.select %[[BELOW4]], %[[LO]], %[[NOTMIN]]
// EXP-NEXT:    arith.cmpf ogt, %[[X4]], %[[HI]]
func.func @exp_of_bounded(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %big = arith.constant dense<100.0> : vector<8xf32>
  %pos = arith.cmpf ogt, %x, %zero : vector<8xf32>
  %neg = arith.select %pos, %zero, %x : vector<8xi1>, vector<8xf32>
  %0 = math.exp %neg : vector<8xf32>
  %min = arith.minimumf %x, %zero : vector<8xf32>
  %1 = math.exp %min : vector<8xf32>
  %above = arith.cmpf ogt, %x, %big : vector<8xf32>
  %capped = arith.select %above, %big, %x : vector<8xi1>, vector<8xf32>
  %2 = math.exp %capped : vector<8xf32>
  %below = arith.cmpf olt, %x, %zero : vector<8xf32>
  %max = arith.select %below, %zero, %x : vector<8xi1>, vector<8xf32>
  %3 = math.exp %max : vector<8xf32>
  return %0, %1, %2, %3 : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
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
