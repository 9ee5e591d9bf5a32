// RUN: attn-opt %s -split-input-file --attn-promote-tiles-to-stack | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-promote-tiles-to-stack=max-bytes=256 | FileCheck %s --check-prefix=SMALL

// A tile of each forall iteration goes to the stack.
// CHECK-LABEL: func.func @forall_tile(
// CHECK:         scf.forall
// CHECK-NEXT:      %[[T:.+]] = memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NEXT:      linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : memref<64xf32>)
// CHECK:           memref.copy %[[T]], %{{.+}}
// CHECK-NEXT:    }
// CHECK-NOT:     memref.alloc(
// A budget of 256 bytes takes the 64 floats (256 bytes) but no more.
// SMALL-LABEL: func.func @forall_tile(
// SMALL:         memref.alloca()
func.func @forall_tile(%q: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%h) in (8) {
    %tile = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.fill ins(%zero : f32) outs(%tile : memref<64xf32>)
    %row = memref.subview %q[%h, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.copy %tile, %row : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
  }
  return
}

// -----

// In a sequential loop: both branches' tiles (yielded by the scf.if, used
// in the iteration) go to the stack; the buffer the loop yields, one of a
// dynamic size and one beyond the budget stay on the heap.
// CHECK-LABEL: func.func @key_loop(
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK-NEXT:        memref.alloca() : memref<64xf32>
// CHECK:           } else {
// CHECK-NEXT:        memref.alloca() : memref<64xf32>
// CHECK:           %[[HEAP:.+]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT:      memref.alloc() : memref<1000000xf32>
// CHECK-NEXT:      memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:           scf.yield %[[HEAP]] : memref<64xf32>
// SMALL-LABEL: func.func @key_loop(
// SMALL:         scf.if
// SMALL-NEXT:      memref.alloca() : memref<64xf32>
// SMALL:         } else {
// SMALL-NEXT:      memref.alloc() : memref<64xf32>
func.func @key_loop(%n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> (memref<64xf32>) {
    %cond = arith.cmpi ult, %i, %m : index
    %t = scf.if %cond -> (memref<64xf32>) {
      %x = memref.alloc() : memref<64xf32>
      scf.yield %x : memref<64xf32>
    } else {
      %y = memref.alloc() : memref<64xf32>
      linalg.fill ins(%zero : f32) outs(%y : memref<64xf32>)
      scf.yield %y : memref<64xf32>
    }
    linalg.copy ins(%t : memref<64xf32>) outs(%a : memref<64xf32>)
    %kept = memref.alloc() : memref<64xf32>
    %big = memref.alloc() : memref<1000000xf32>
    %dyn = memref.alloc(%n) : memref<?xf32>
    linalg.fill ins(%zero : f32) outs(%big : memref<1000000xf32>)
    linalg.fill ins(%zero : f32) outs(%dyn : memref<?xf32>)
    scf.yield %kept : memref<64xf32>
  }
  return
}

// -----

// Outside any loop, and a tile whose buffer is stored elsewhere: heap.
// CHECK-LABEL: func.func @not_per_iteration(
// CHECK-NOT:     memref.alloca
func.func @not_per_iteration(%out: memref<8xmemref<4xf32>>) {
  %top = memref.alloc() : memref<4xf32>
  scf.forall (%i) in (8) {
    %t = memref.alloc() : memref<4xf32>
    memref.store %t, %out[%i] : memref<8xmemref<4xf32>>
  }
  return
}

// -----

// Index elements (no bit width) and a tile whose byte size overflows int64
// stay on the heap.
// CHECK-LABEL: func.func @heap_kinds(
// CHECK-NOT:     memref.alloca
func.func @heap_kinds() {
  scf.forall (%i) in (4) {
    %a = memref.alloc() : memref<4xindex>
    %b = memref.alloc() : memref<4611686018427387904x4xf32>
  }
  return
}
