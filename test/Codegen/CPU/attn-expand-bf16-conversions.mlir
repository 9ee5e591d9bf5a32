// RUN: attn-opt %s --attn-expand-bf16-conversions | FileCheck %s

// f32 -> bf16, round to nearest even on the 16 dropped bits:
//   bits(x) + 0x7fff + ((bits(x) >> 16) & 1), then the upper 16 bits;
//   a NaN becomes the quiet NaN 0x7fc0 (32704).
// CHECK-LABEL: func.func @truncate(
// CHECK-SAME:    %[[X:.+]]: f32)
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-DAG:     %[[SIXTEEN:.+]] = arith.constant 16 : i32
// CHECK-DAG:     %[[QNAN:.+]] = arith.constant 32704 : i16
// CHECK-DAG:     %[[HALF:.+]] = arith.constant 32767 : i32
// CHECK:         %[[ISNAN:.+]] = arith.cmpf une, %[[X]], %[[X]] : f32
// CHECK:         %[[BITS:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK:         %[[HIGH:.+]] = arith.shrui %[[BITS]], %[[SIXTEEN]] : i32
// CHECK:         %[[LSB:.+]] = arith.andi %[[HIGH]], %[[ONE]] : i32
// CHECK:         %[[BIAS:.+]] = arith.addi %[[LSB]], %[[HALF]] : i32
// CHECK:         %[[ROUNDED:.+]] = arith.addi %[[BITS]], %[[BIAS]] : i32
// CHECK:         %[[UPPER:.+]] = arith.shrui %[[ROUNDED]], %[[SIXTEEN]] : i32
// CHECK:         %[[NARROW:.+]] = arith.trunci %[[UPPER]] : i32 to i16
// CHECK:         %[[PICK:.+]] = arith.select %[[ISNAN]], %[[QNAN]], %[[NARROW]] : i16
// CHECK:         %[[R:.+]] = arith.bitcast %[[PICK]] : i16 to bf16
// CHECK:         return %[[R]]
func.func @truncate(%x: f32) -> bf16 {
  %0 = arith.truncf %x : f32 to bf16
  return %0 : bf16
}

// bf16 -> f32 is exact: the 16 bits become the upper half.
// CHECK-LABEL: func.func @extend(
// CHECK-SAME:    %[[Y:.+]]: vector<8xbf16>)
// CHECK:         %[[B:.+]] = arith.bitcast %[[Y]] : vector<8xbf16> to vector<8xi16>
// CHECK:         %[[W:.+]] = arith.extui %[[B]] : vector<8xi16> to vector<8xi32>
// CHECK:         %[[S:.+]] = arith.shli %[[W]], %{{.+}} : vector<8xi32>
// CHECK:         arith.bitcast %[[S]] : vector<8xi32> to vector<8xf32>
// CHECK-NOT:     arith.extf
func.func @extend(%y: vector<8xbf16>) -> vector<8xf32> {
  %0 = arith.extf %y : vector<8xbf16> to vector<8xf32>
  return %0 : vector<8xf32>
}

// f16 conversions stay (F16C converts them).
// CHECK-LABEL: func.func @half(
// CHECK:         arith.truncf %{{.+}} : vector<8xf32> to vector<8xf16>
// CHECK:         arith.extf %{{.+}} : f16 to f32
func.func @half(%v: vector<8xf32>, %h: f16) -> (vector<8xf16>, f32) {
  %0 = arith.truncf %v : vector<8xf32> to vector<8xf16>
  %1 = arith.extf %h : f16 to f32
  return %0, %1 : vector<8xf16>, f32
}
