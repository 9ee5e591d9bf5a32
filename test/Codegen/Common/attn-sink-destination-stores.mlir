// RUN: attn-opt %s --attn-sink-destination-stores --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-sink-destination-stores --eliminate-empty-tensors --split-input-file | FileCheck %s --check-prefix=INPLACE

// A run-time crossover: out = (N >= c) ? kv_first(...) : qk_first(...).
// The store moves into both branches, so each branch's output is computed
// in the destination (both tensor.empty become the destination).
// CHECK-LABEL: func.func @crossover(
// CHECK-SAME:    %[[C:.+]]: i1, %[[OUT:.+]]: memref<4xf32>)
// CHECK:         scf.if %[[C]] {
// CHECK:           %[[A:.+]] = linalg.fill
// CHECK:           bufferization.materialize_in_destination %[[A]] in restrict writable %[[OUT]]
// CHECK-NEXT:    } else {
// CHECK:           %[[B:.+]] = linalg.fill
// CHECK:           bufferization.materialize_in_destination %[[B]] in restrict writable %[[OUT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// INPLACE-LABEL: func.func @crossover(
// INPLACE:       %[[D1:.+]] = bufferization.to_tensor %{{.+}} restrict writable
// INPLACE:       linalg.fill ins(%{{.+}} : f32) outs(%[[D1]] : tensor<4xf32>)
// INPLACE:       } else {
// INPLACE:       %[[D2:.+]] = bufferization.to_tensor %{{.+}} restrict writable
// INPLACE:       linalg.fill ins(%{{.+}} : f32) outs(%[[D2]] : tensor<4xf32>)
func.func @crossover(%c: i1, %out: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %r = scf.if %c -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  } else {
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%two : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Nested ifs: the store reaches every leaf.
// CHECK-LABEL: func.func @nested(
// CHECK-COUNT-3: bufferization.materialize_in_destination
// CHECK-NOT:     bufferization.materialize_in_destination
func.func @nested(%c: i1, %d: i1, %x: tensor<4xf32>, %y: tensor<4xf32>, %out: memref<4xf32>) {
  %r = scf.if %c -> tensor<4xf32> {
    %s = scf.if %d -> tensor<4xf32> {
      scf.yield %x : tensor<4xf32>
    } else {
      scf.yield %y : tensor<4xf32>
    }
    scf.yield %s : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// The if's result has another use: the store stays where it is.
// CHECK-LABEL: func.func @other_use(
// CHECK:         %[[R:.+]] = scf.if
// CHECK:         bufferization.materialize_in_destination %[[R]]
// CHECK:         return %[[R]]
func.func @other_use(%c: i1, %x: tensor<4xf32>, %y: tensor<4xf32>, %out: memref<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %y : tensor<4xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4xf32>, memref<4xf32>) -> ()
  return %r : tensor<4xf32>
}
