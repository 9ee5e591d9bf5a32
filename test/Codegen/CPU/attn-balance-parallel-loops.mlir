// RUN: attn-opt %s --split-input-file --convert-scf-to-openmp --attn-balance-parallel-loops | FileCheck %s

// Iterations of unequal work (a causal query tile t sees t + 1 key tiles;
// a padded batch element of length L does L^2 of it) are handed out one at a
// time: schedule(dynamic, 1), the chunk in the loop's index type.

// CHECK-LABEL: func.func @tiles(
// CHECK:         omp.parallel
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:      omp.wsloop schedule(dynamic = %[[ONE]] : index)
// CHECK-NEXT:        omp.loop_nest
func.func @tiles(%n: index, %m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// A loop that already has a schedule keeps it.

// CHECK-LABEL: func.func @scheduled(
// CHECK:         omp.wsloop schedule(static)
func.func @scheduled(%lb: index, %ub: index, %step: index) {
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%lb) to (%ub) step (%step) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
