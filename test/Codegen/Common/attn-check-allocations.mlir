// RUN: attn-opt %s --attn-check-allocations --split-input-file --verify-diagnostics | FileCheck %s

// A NULL malloc in the function counts the failure and returns before the
// pointer is used.
// CHECK:       llvm.mlir.global internal @__attn_allocation_failures(0 : i64)
// CHECK-LABEL: llvm.func @top(
// CHECK:         %[[P:.+]] = llvm.call @malloc(%{{.+}})
// CHECK:         %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[IS_NULL:.+]] = llvm.icmp "eq" %[[P]], %[[NULL]] : !llvm.ptr
// CHECK:         llvm.cond_br %[[IS_NULL]], ^[[FAILED:.+]], ^[[OK:[^ ]+]]
// CHECK:       ^[[FAILED]]:
// CHECK:         %[[COUNTER:.+]] = llvm.mlir.addressof @__attn_allocation_failures
// CHECK:         %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         llvm.atomicrmw add %[[COUNTER]], %[[ONE]] monotonic
// CHECK-NEXT:    llvm.return
// CHECK:       ^[[OK]]:
// CHECK:         llvm.store %{{.+}}, %[[P]]
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @top(%n: i64, %x: f32) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.store %x, %p : f32, !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// In an OpenMP loop the failing iteration ends (omp.yield); the loop, its
// barrier and the other iterations go on. A function with a result returns
// zero.
// CHECK-LABEL: llvm.func @in_loop(
// CHECK:         omp.loop_nest
// CHECK:           llvm.call @malloc
// CHECK:           llvm.cond_br %{{.+}}, ^[[FAILED:.+]], ^[[OK:[^ ]+]]
// CHECK:         ^[[FAILED]]:
// CHECK:           llvm.atomicrmw add
// CHECK-NEXT:      omp.yield
// CHECK:         ^[[OK]]:
// CHECK:           llvm.store
// CHECK:           omp.yield
// CHECK:       llvm.func @returns_value(
// CHECK:         %[[ZERO:.+]] = llvm.mlir.zero : i32
// CHECK-NEXT:    llvm.return %[[ZERO]] : i32
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @in_loop(%lb: i64, %ub: i64, %x: f32) {
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%lb) to (%ub) step (%lb) {
        %p = llvm.call @malloc(%i) : (i64) -> !llvm.ptr
        llvm.store %x, %p : f32, !llvm.ptr
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}
llvm.func @returns_value(%n: i64) -> i32 {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i32
  llvm.return %v : i32
}

// -----

// Where leaving early would skip a barrier, the pass refuses.
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @in_parallel(%n: i64, %x: f32) {
  omp.parallel {
    // expected-error @below {{attn-check-allocations: cannot leave a 'omp.parallel' region when the allocation fails}}
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.store %x, %p : f32, !llvm.ptr
    omp.terminator
  }
  llvm.return
}
