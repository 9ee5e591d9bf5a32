// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-emulate-gpu | FileCheck %s

// A launch with barriers (a thread block of attn-map-to-gpu): loops over the
// blocks (z, y, x), the workgroup tile a host buffer, and a loop over the
// threads around each loop strided by the thread id, nested loops included;
// `thread == 0` is thread 0's work, done once; the barriers go.
// CHECK-LABEL: func.func @block_launch(
// CHECK-SAME:      %[[OUT:[a-zA-Z0-9_]+]]: memref<?x16xf32>, %[[N:[a-zA-Z0-9_]+]]: index)
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[C128:.+]] = arith.constant 128 : index
// CHECK:         %[[TILE:.+]] = memref.alloc() : memref<16xf32>
// CHECK:         scf.for %{{.+}} = %[[ZERO:.+]] to %[[C1:.+]] step %{{.+}} {
// CHECK-NEXT:      scf.for %{{.+}} = %[[ZERO]] to %[[C1]] step %{{.+}} {
// CHECK-NEXT:        scf.for %[[BX:.+]] = %[[ZERO]] to %[[N]] step %{{.+}} {
// CHECK:               scf.for %[[T0:.+]] = %{{.+}} to %[[C128]] step %{{.+}} {
// CHECK-NEXT:            scf.for %[[I0:.+]] = %[[T0]] to %[[C16]] step %[[C128]] {
// CHECK-NEXT:              memref.store %{{.+}}, %[[TILE]][%[[I0]]] : memref<16xf32>
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:                 scf.for %[[T1:.+]] = %{{.+}} to %[[C128]] step %{{.+}} {
// CHECK-NEXT:              scf.for %[[I1:.+]] = %[[T1]] to %[[C16]] step %[[C128]] {
// CHECK:                     math.exp
// CHECK:                   }
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[FIRST:.+]] = arith.cmpi eq, %[[ZERO]], %{{.+}} : index
// CHECK-NEXT:          scf.if %[[FIRST]] {
// CHECK-NEXT:            memref.store %{{.+}}, %[[TILE]][
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[ROW:.+]] = memref.subview %[[OUT]][%[[BX]], 0]
// CHECK:               scf.for %[[T2:.+]] = %{{.+}} to %[[C128]] step %{{.+}} {
// CHECK-NEXT:            scf.for %{{.+}} = %[[T2]] to %[[C16]] step %[[C128]] {
// CHECK:                   memref.store %{{.+}}, %[[ROW]][
// CHECK-NOT:     gpu.
// CHECK:         return
func.func @block_launch(%out: memref<?x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1)
             workgroup(%w : memref<16xf32, #gpu.address_space<workgroup>>) {
    %tile = memref.memory_space_cast %w : memref<16xf32, #gpu.address_space<workgroup>> to memref<16xf32>
    scf.for %i = %tx to %c16 step %sx {
      memref.store %zero, %tile[%i] : memref<16xf32>
    }
    gpu.barrier
    scf.for %k = %c0 to %c2 step %c1 {
      scf.for %i = %tx to %c16 step %sx {
        %v = memref.load %tile[%i] : memref<16xf32>
        %e = math.exp %v : f32
        memref.store %e, %tile[%i] : memref<16xf32>
      }
      gpu.barrier
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %zero, %tile[%c0] : memref<16xf32>
    }
    gpu.barrier
    %row = memref.subview %out[%bx, 0] [1, 16] [1, 1] : memref<?x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    scf.for %i = %tx to %c16 step %sx {
      %v = memref.load %tile[%i] : memref<16xf32>
      memref.store %v, %row[%i] : memref<16xf32, strided<[1], offset: ?>>
    }
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// A launch without barriers (a grid-strided kernel): the whole body runs
// once per thread, the thread id the loop's induction variable; the grid and
// block sizes are the launch operands. gpu.alloc and gpu.dealloc are
// memref.alloc and memref.dealloc.
// CHECK-LABEL: func.func @grid_launch(
// CHECK-SAME:      %[[TOTAL:[a-zA-Z0-9_]+]]: index, %[[GRID:[a-zA-Z0-9_]+]]: index)
// CHECK:         %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT:    %[[TMP:.+]] = memref.alloc(%[[TOTAL]]) : memref<?xf32>
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for %[[BX:.+]] = %{{.+}} to %[[GRID]] step %{{.+}} {
// CHECK-NEXT:          scf.for %[[TX:.+]] = %{{.+}} to %[[C128]] step %{{.+}} {
// CHECK-NEXT:            %[[BASE:.+]] = arith.muli %[[BX]], %[[C128]] : index
// CHECK-NEXT:            %[[START:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT:            %[[STRIDE:.+]] = arith.muli %[[GRID]], %[[C128]] : index
// CHECK-NEXT:            scf.for %{{.+}} = %[[START]] to %[[TOTAL]] step %[[STRIDE]] {
// CHECK:                   memref.store %{{.+}}, %[[TMP]][
// CHECK-NOT:     gpu.
// CHECK:         memref.dealloc %[[TMP]] : memref<?xf32>
// CHECK-NEXT:    return
func.func @grid_launch(%in: memref<?xf32>, %out: memref<?xf32>, %total: index, %grid: index) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %tmp = gpu.alloc (%total) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %grid, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %start = arith.addi %base, %tx : index
    %stride = arith.muli %gx, %sx : index
    scf.for %i = %start to %total step %stride {
      %v = memref.load %in[%i] : memref<?xf32>
      %e = math.exp %v : f32
      memref.store %e, %tmp[%i] : memref<?xf32>
    }
    gpu.terminator
  }
  gpu.dealloc %tmp : memref<?xf32>
  return
}

// -----

// With barriers, each thread's share must be a loop starting at its id.
func.func @thread_id_arithmetic(%a: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'arith.addi' op uses the thread id in a way attn-emulate-gpu cannot emulate}}
    %i = arith.addi %tx, %c128 : index
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %a[%i] : memref<256xf32>
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @thread_id_as_step(%a: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'scf.for' op uses the thread id in a way attn-emulate-gpu cannot emulate}}
    scf.for %i = %c0 to %c256 step %tx {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %a[%i] : memref<256xf32>
    }
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @two_thread_dimensions() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error@+1 {{'gpu.launch' op uses more than one thread dimension}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c2, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @private_memory() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'gpu.launch' op is not a launch made by attn-map-to-gpu}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             private(%p : memref<4xf32, #gpu.address_space<private>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @workgroup_without_cast() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) {
    // expected-error@+1 {{'memref.store' op uses workgroup memory other than through a cast to the generic space}}
    memref.store %zero, %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

func.func @async_alloc() {
  // expected-error@+1 {{'gpu.alloc' op async allocations are not emulated}}
  %m, %t = gpu.alloc async () : memref<8xf32>
  return
}

// -----

// `thread == 1` is not thread 0's work: refused, not dropped.
func.func @thread_one(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %x = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'arith.cmpi' op uses the thread id in a way attn-emulate-gpu cannot emulate}}
    %is1 = arith.cmpi eq, %tx, %c1 : index
    scf.if %is1 {
      memref.store %x, %a[%c1] : memref<4xf32>
    }
    gpu.barrier
    gpu.terminator
  }
  return
}
