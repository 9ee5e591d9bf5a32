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

// -----

// Warp instructions: each block is an OpenMP parallel region of one host
// thread per GPU thread (the thread id is omp_get_thread_num), between
// attn_emu_block_begin and attn_emu_block_end; gpu.barrier is omp.barrier;
// mma.sync (f16: its registers bitcast to i32), ldmatrix (.trans from the
// col layout) and shfl.sync (bfly = mode 2) are calls into the warp runtime
// whose results come back through one i32 x 4 stack slot per thread,
// allocated once at the top of the region; cp.async is a call, its
// commit/wait groups go.
// CHECK-LABEL: func.func @warp_launch(
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK-NEXT:          %[[THREADS:.+]] = arith.index_cast %[[C64]] : index to i32
// CHECK-NEXT:          func.call @attn_emu_block_begin(%[[THREADS]]) : (i32) -> ()
// CHECK-NEXT:          omp.parallel num_threads(%[[THREADS]] : i32) {
// CHECK-NEXT:            %[[T:.+]] = func.call @omp_get_thread_num() : () -> i32
// CHECK:                 %[[SLOT:.+]] = llvm.alloca %{{.+}} x i32
// CHECK:                 func.call @attn_emu_cp_async(
// CHECK-NOT:             nvvm.
// CHECK:                 omp.barrier
// CHECK:                 func.call @attn_emu_ldmatrix(%[[T]], %{{.+}}, %{{.+}}, %{{.+}}, %[[SLOT]]) : (i32, i32, i32, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:                 llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK:                 func.call @attn_emu_mma_m16n8k16(%[[T]], %{{.+}}) : (i32, i32, i32, i32, i32, i32, i32, i32, f32, f32, f32, f32, !llvm.ptr) -> ()
// CHECK:                 func.call @attn_emu_shfl(%[[T]], %{{.+}}) : (i32, i32, i32, i32, i32, i32, !llvm.ptr) -> i32
// CHECK:                 omp.terminator
// CHECK:               func.call @attn_emu_block_end() : () -> i32
// CHECK-NOT:     gpu.
// CHECK-NOT:     nvvm.
// CHECK:         return
func.func @warp_launch(%in: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%w : memref<256xf16, #gpu.address_space<workgroup>>) {
    %tile = memref.memory_space_cast %w : memref<256xf16, #gpu.address_space<workgroup>> to memref<256xf16>
    %base = memref.extract_aligned_pointer_as_index %tile : memref<256xf16> -> index
    %bits = arith.index_cast %base : index to i64
    %generic = llvm.inttoptr %bits : i64 to !llvm.ptr
    %shared = llvm.addrspacecast %generic : !llvm.ptr to !llvm.ptr<3>
    %src = memref.extract_aligned_pointer_as_index %in : memref<64xf32> -> index
    %srcBits = arith.index_cast %src : index to i64
    %global = llvm.inttoptr %srcBits : i64 to !llvm.ptr<1>
    nvvm.cp.async.shared.global %shared, %global, 16, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    gpu.barrier
    %pair = nvvm.ldmatrix %shared {num = 2 : i32, layout = #nvvm.mma_layout<col>,
      shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>}
      : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
    %r0 = llvm.extractvalue %pair[0] : !llvm.struct<(i32, i32)>
    %r1 = llvm.extractvalue %pair[1] : !llvm.struct<(i32, i32)>
    %h = llvm.bitcast %r0 : i32 to vector<2xf16>
    %z = arith.constant 0.0 : f32
    %acc = nvvm.mma.sync A[%h, %h, %h, %h] B[%h, %h] C[%z, %z, %z, %z]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32)>
    %all = arith.constant -1 : i32
    %one = arith.constant 1 : i32
    %clamp = arith.constant 31 : i32
    %x = nvvm.shfl.sync bfly %all, %d0, %one, %clamp : f32 -> f32
    %i = arith.remui %tx, %c64 : index
    memref.store %x, %out[%i] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// Warp instructions the runtime does not implement are refused.
func.func @unknown_warp_instruction() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'nvvm.read.ptx.sreg.laneid' op is not a warp instruction that attn-emulate-gpu can emulate}}
    %lane = nvvm.read.ptx.sreg.laneid : i32
    gpu.terminator
  }
  return
}

// -----

func.func @mma_m8n8k4() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %h = arith.constant dense<1.0> : vector<2xf16>
    %z = arith.constant 0.0 : f32
    // expected-error@+1 {{'nvvm.mma.sync' op is not an mma.sync attn-emulate-gpu can emulate (row.col, 4 A and 2 B registers, f32 accumulators)}}
    %acc = nvvm.mma.sync A[%h, %h] B[%h] C[%z, %z, %z, %z]
      {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
       shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    gpu.terminator
  }
  return
}
