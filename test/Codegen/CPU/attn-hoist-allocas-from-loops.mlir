// RUN: attn-opt %s --attn-hoist-allocas-from-loops | FileCheck %s

// Static allocas leave the sequential loops around them (one buffer reused
// by every iteration, instead of new stack per iteration), also from an
// scf.if inside them, but not a parallel loop: each of its iterations
// keeps its own. A dynamic one stays.
// CHECK-LABEL: func.func @hoist(
// CHECK:         scf.parallel
// CHECK-NEXT:      %[[PER_ITERATION:.+]] = memref.alloca() : memref<16xf32>
// CHECK-NEXT:      %[[INNER:.+]] = memref.alloca() : memref<64xf32>
// CHECK-NEXT:      %[[BRANCH:.+]] = memref.alloca() : memref<8xf32>
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          memref.alloca(%{{.+}}) : memref<?xf32>
func.func @hoist(%n: index, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%p) = (%c0) to (%n) step (%c1) {
    %t = memref.alloca() : memref<16xf32>
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %u = memref.alloca() : memref<64xf32>
        %d = memref.alloca(%n) : memref<?xf32>
        scf.if %c {
          %b = memref.alloca() : memref<8xf32>
        }
      }
    }
    scf.reduce
  }
  return
}
