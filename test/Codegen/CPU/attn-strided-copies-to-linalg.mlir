// RUN: attn-opt %s --attn-strided-copies-to-linalg | FileCheck %s

// A copy into a strided subview (the padding of Q, K and V to whole tiles)
// becomes linalg.copy; a copy between contiguous buffers stays a memcpy.
// CHECK-LABEL: func.func @pad_copy(
// CHECK-SAME:    %[[SRC:[a-z0-9]+]]: memref<1x8x?x64xf32>, %[[DST:[a-z0-9]+]]: memref<1x8x?x64xf32>,
// CHECK:         %[[VIEW:.+]] = memref.subview %[[DST]]
// CHECK-NEXT:    linalg.copy ins(%[[SRC]] : memref<1x8x?x64xf32>) outs(%[[VIEW]] : memref<1x8x?x64xf32, strided<[?, ?, 64, 1]>>)
// CHECK-NEXT:    memref.copy %[[SRC]], %{{.+}} : memref<1x8x?x64xf32> to memref<1x8x?x64xf32>
// CHECK-NOT:     linalg.copy
func.func @pad_copy(%src: memref<1x8x?x64xf32>, %dst: memref<1x8x?x64xf32>, %other: memref<1x8x?x64xf32>, %n: index) {
  %view = memref.subview %dst[0, 0, 0, 0] [1, 8, %n, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<1x8x?x64xf32, strided<[?, ?, 64, 1]>>
  memref.copy %src, %view : memref<1x8x?x64xf32> to memref<1x8x?x64xf32, strided<[?, ?, 64, 1]>>
  memref.copy %src, %other : memref<1x8x?x64xf32> to memref<1x8x?x64xf32>
  return
}
