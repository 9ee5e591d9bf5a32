// RUN: attn-opt %s --attn-lower-alloca-scopes | FileCheck %s

// The scope's body runs between a stack save and a restore; its result is
// the value it returned. Nested scopes are lowered too.
// CHECK-LABEL: func.func @scopes(
// CHECK:         scf.for
// CHECK-NEXT:      %[[OUTER:.+]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT:      %[[T:.+]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT:      %[[INNER:.+]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT:      memref.alloca() : memref<16xf32>
// CHECK-NEXT:      llvm.intr.stackrestore %[[INNER]] : !llvm.ptr
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[T]]
// CHECK-NEXT:      llvm.intr.stackrestore %[[OUTER]] : !llvm.ptr
// CHECK-NEXT:      scf.yield %[[V]] : f32
// CHECK-NOT:     memref.alloca_scope
func.func @scopes(%n: index, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (f32) {
    %v = memref.alloca_scope -> (f32) {
      %t = memref.alloca() : memref<64xf32>
      memref.alloca_scope {
        %u = memref.alloca() : memref<16xf32>
      }
      %x = memref.load %t[%c0] : memref<64xf32>
      memref.alloca_scope.return %x : f32
    }
    scf.yield %v : f32
  }
  return %r : f32
}
