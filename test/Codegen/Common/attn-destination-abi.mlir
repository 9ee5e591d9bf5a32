// The last split has an unsupported signature, so attn-opt fails overall.
// RUN: not attn-opt %s --attn-destination-abi --split-input-file 2>/dev/null | FileCheck %s
// RUN: not attn-opt %s --attn-destination-abi --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// Tensors in and out become memrefs in, then one output memref per result.
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[Q:.+]]: memref<1x2x?x8xf32> {attn.input = "q"},
// CHECK-SAME:    %[[OUT:.+]]: memref<1x2x?x8xf32>)
// CHECK-SAME:    attributes {llvm.emit_c_interface}
// CHECK:         %[[T:.+]] = bufferization.to_tensor %[[Q]] restrict : memref<1x2x?x8xf32> to tensor<1x2x?x8xf32>
// CHECK:         %[[R:.+]] = attn.term softmax (%[[T]], %[[T]], %[[T]])
// CHECK:         bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]]
// CHECK:         return{{$}}
func.func @f(%q: tensor<1x2x?x8xf32> {attn.input = "q"}) -> tensor<1x2x?x8xf32> {
  %0 = attn.term softmax (%q, %q, %q) : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}

// Private functions keep their signature.
// CHECK-LABEL: func.func private @helper(%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// ERR: error: attn-destination-abi: only ranked tensor arguments and results are supported, got 'f32'
func.func @scalar(%x: f32) -> f32 {
  return %x : f32
}
