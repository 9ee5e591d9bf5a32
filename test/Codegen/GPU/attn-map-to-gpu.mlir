// RUN: attn-opt %s -split-input-file --attn-map-to-gpu=stage-inputs=false --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-map-to-gpu="threads=32 stage-inputs=false" --cse | FileCheck %s --check-prefix=T32
// RUN: attn-opt %s -split-input-file --attn-map-to-gpu="shared-memory-limit=128 stage-inputs=false" --cse | FileCheck %s --check-prefix=LIMIT
// RUN: attn-opt %s -split-input-file --attn-map-to-gpu --cse | FileCheck %s --check-prefix=STAGE
// RUN: attn-opt %s -split-input-file --attn-map-to-gpu="precision=tf32 stage-inputs=false" --cse | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s -split-input-file --attn-map-to-gpu="precision=tf32 threads=100 stage-inputs=false" --cse | FileCheck %s --check-prefix=NOMMA

// A forall is one thread block per iteration: the 2x3 iteration space is a
// grid of 6 blocks on x, delinearised back into (i, j), the last dimension
// fastest. The tiles the body allocates become workgroup attributions,
// smallest first, cast back to the generic address space so that their users
// are unchanged. Each linalg op (and each memref.copy) becomes a loop strided
// by the thread id and followed by a barrier, also inside the scf.for; the
// scalar store runs on thread 0 only, then a barrier.
// CHECK-LABEL: func.func @forall_to_blocks(
// CHECK-NOT:     memref.alloc
// CHECK:         arith.ceildivui
// CHECK:         %[[NJ:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[TOTAL:.+]] = arith.muli %{{.+}}, %[[NJ]] : index
// CHECK-NEXT:    %[[NONEMPTY:.+]] = arith.cmpi ugt, %[[TOTAL]], %[[C0:.+]] : index
// CHECK-NEXT:    scf.if %[[NONEMPTY]] {
// CHECK-NEXT:      %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT:      gpu.launch blocks(%[[BX:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}}, %{{[a-zA-Z0-9_]+}}) in (%{{[a-zA-Z0-9_]+}} = %[[TOTAL]], %{{[a-zA-Z0-9_]+}} = %[[C1:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}} = %[[C1]])
// CHECK-SAME:        threads(%[[TX:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}}, %{{[a-zA-Z0-9_]+}}) in (%[[BDIM:[a-zA-Z0-9_]+]] = %[[C128]], %{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]])
// CHECK-SAME:        workgroup(%[[MAXW:[a-zA-Z0-9_]+]] : memref<4xf32, #gpu.address_space<workgroup>>, %[[ACCW:[a-zA-Z0-9_]+]] : memref<4x16xf32, #gpu.address_space<workgroup>>) {
// CHECK-NEXT:        arith.remui %[[BX]], %[[NJ]] : index
// CHECK-NEXT:        arith.divui %[[BX]], %[[NJ]] : index
// CHECK-DAG:         %[[ACC:.+]] = memref.memory_space_cast %[[ACCW]] : memref<4x16xf32, #gpu.address_space<workgroup>> to memref<4x16xf32>
// CHECK-DAG:         %[[MAX:.+]] = memref.memory_space_cast %[[MAXW]] : memref<4xf32, #gpu.address_space<workgroup>> to memref<4xf32>
// linalg.fill
// CHECK:             scf.for %{{.+}} = %[[TX]] to %{{.+}} step %[[BDIM]] {
// CHECK:               memref.store %{{.+}}, %[[MAX]][%{{.+}}] : memref<4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// memref.copy into the tile
// CHECK-NEXT:        %[[SRC:.+]] = memref.subview
// CHECK:             scf.for %{{.+}} = %[[TX]] to %{{.+}} step %[[BDIM]] {
// CHECK:               %[[V:.+]] = memref.load %[[SRC]][
// CHECK-NEXT:          memref.store %[[V]], %[[ACC]][%{{.+}}, %{{.+}}] : memref<4x16xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// the linalg.generic inside the scf.for: one barrier per iteration
// CHECK-NEXT:        scf.for %{{.+}} = %[[C0]] to %{{.+}} step %[[C1]] {
// CHECK-NEXT:          scf.for %{{.+}} = %[[TX]] to %{{.+}} step %[[BDIM]] {
// CHECK:                 math.exp
// CHECK-NEXT:            memref.store %{{.+}}, %[[ACC]][
// CHECK-NEXT:          }
// CHECK-NEXT:          gpu.barrier
// CHECK-NEXT:        }
// the scalar store
// CHECK-NEXT:        %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %[[C0]] : index
// CHECK-NEXT:        scf.if %[[FIRST]] {
// CHECK-NEXT:          memref.store %{{.+}}, %[[MAX]][%[[C0]]] : memref<4xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// memref.copy out of the tile; the deallocations are gone
// CHECK-NEXT:        %[[DST:.+]] = memref.subview
// CHECK-NEXT:        scf.for %{{.+}} = %[[TX]] to %{{.+}} step %[[BDIM]] {
// CHECK:               %[[W:.+]] = memref.load %[[ACC]][
// CHECK-NEXT:          memref.store %[[W]], %[[DST]][
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        gpu.terminator
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    return

// T32-LABEL: func.func @forall_to_blocks(
// T32:         %[[T:.+]] = arith.constant 32 : index
// T32-NEXT:    gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[T]],

// Over the limit, the 256-byte accumulator goes to the scratch buffer
// instead: one 256-byte slice per block.
// LIMIT-LABEL: func.func @forall_to_blocks(
// LIMIT:         %[[SLICE:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// LIMIT:         scf.if
// LIMIT:           %[[BYTES:.+]] = arith.muli %[[TOTAL:.+]], %[[SLICE]] : index
// LIMIT-NEXT:      %[[SCRATCH:.+]] = gpu.alloc (%[[BYTES]]) : memref<?xi8>
// LIMIT-NEXT:      gpu.launch blocks(%[[BX:[a-zA-Z0-9_]+]], {{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[TOTAL]], {{.*}} workgroup(%{{[a-zA-Z0-9_]+}} : memref<4xf32, #gpu.address_space<workgroup>>) {
// LIMIT:             %[[BASE:.+]] = arith.muli %[[BX]], %[[SLICE]] : index
// LIMIT:             %[[OFFSET:.+]] = arith.addi %[[BASE]], %{{.+}} : index
// LIMIT-NEXT:        %[[ACC:.+]] = memref.view %[[SCRATCH]][%[[OFFSET]]][] : memref<?xi8> to memref<4x16xf32>
// LIMIT:             memref.store %{{.+}}, %[[ACC]][
// LIMIT:             gpu.terminator
// LIMIT-NEXT:      }
// LIMIT-NEXT:      gpu.dealloc %[[SCRATCH]] : memref<?xi8>
// LIMIT-NEXT:    }
func.func @forall_to_blocks(%in: memref<2x3x4x16xf32>, %out: memref<2x3x4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 3) {
    %acc = memref.alloc() : memref<4x16xf32>
    %max = memref.alloc() : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%max : memref<4xf32>)
    %src = memref.subview %in[%i, %j, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : memref<2x3x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %src, %acc : memref<4x16xf32, strided<[16, 1], offset: ?>> to memref<4x16xf32>
    scf.for %k = %c0 to %c2 step %c1 {
      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%acc : memref<4x16xf32>) {
      ^bb0(%x: f32):
        %y = math.exp %x : f32
        linalg.yield %y : f32
      }
    }
    memref.store %zero, %max[%c0] : memref<4xf32>
    %dst = memref.subview %out[%i, %j, 0, 0] [1, 1, 4, 16] [1, 1, 1, 1] : memref<2x3x4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %acc, %dst : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    memref.dealloc %acc : memref<4x16xf32>
    memref.dealloc %max : memref<4xf32>
  }
  return
}

// -----

// A linalg op outside any forall is a kernel of its own: enough blocks of
// `threads` threads to cover its iterations (at most 2^20), a grid-strided
// loop, no barrier, all behind `scf.if (iterations > 0)`.
// CHECK-LABEL: func.func @host_kernel(
// CHECK:         arith.ceildivui
// CHECK:         %[[NCOLS:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[TOTAL:.+]] = arith.muli %{{.+}}, %[[NCOLS]] : index
// CHECK-NEXT:    %[[C128:.+]] = arith.constant 128 : index
// CHECK-NEXT:    %[[BLOCKS:.+]] = arith.ceildivui %[[TOTAL]], %[[C128]] : index
// CHECK-NEXT:    %[[MAXBLOCKS:.+]] = arith.constant 1048576 : index
// CHECK-NEXT:    %[[GRID:.+]] = arith.minui %[[BLOCKS]], %[[MAXBLOCKS]] : index
// CHECK-NEXT:    %[[NONEMPTY:.+]] = arith.cmpi ugt, %[[TOTAL]], %{{.+}} : index
// CHECK-NEXT:    scf.if %[[NONEMPTY]] {
// CHECK-NEXT:      gpu.launch blocks(%[[BX:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}}, %{{[a-zA-Z0-9_]+}}) in (%[[GX:[a-zA-Z0-9_]+]] = %[[GRID]], %{{[a-zA-Z0-9_]+}} = %[[C1:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}} = %[[C1]])
// CHECK-SAME:        threads(%[[TX:[a-zA-Z0-9_]+]], %{{[a-zA-Z0-9_]+}}, %{{[a-zA-Z0-9_]+}}) in (%[[BDIM:[a-zA-Z0-9_]+]] = %[[C128]], %{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]]) {
// CHECK-NEXT:        %[[BASE:.+]] = arith.muli %[[BX]], %[[BDIM]] : index
// CHECK-NEXT:        %[[START:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT:        %[[STRIDE:.+]] = arith.muli %[[GX]], %[[BDIM]] : index
// CHECK-NEXT:        scf.for %{{.+}} = %[[START]] to %[[TOTAL]] step %[[STRIDE]] {
// CHECK:               math.exp
// CHECK-NOT:         gpu.barrier
// CHECK:             gpu.terminator

// T32-LABEL: func.func @host_kernel(
// T32:         %[[T:.+]] = arith.constant 32 : index
// T32-NEXT:    arith.ceildivui %{{.+}}, %[[T]] : index
// T32:         gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[T]],
func.func @host_kernel(%a: memref<?x8xf32>, %b: memref<?x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x8xf32>) outs(%b : memref<?x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A loop of the top level that reads memory is the body of a (batch, head)
// forall the canonicalizer removed (B * H = 1): it runs as one block of its
// own, its scalar read on the device, its linalg ops spread over the block.
// CHECK-LABEL: func.func @sequential_loop(
// CHECK-NOT:     memref.load
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK-NEXT:        %[[G:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<1xf32>
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               arith.mulf %{{.+}}, %[[G]] : f32
// CHECK:             gpu.barrier
func.func @sequential_loop(%gamma: memref<1xf32>, %a: memref<4x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %g = memref.load %gamma[%c0] : memref<1xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%a : memref<4x16xf32>) {
    ^bb0(%x: f32):
      %y = arith.mulf %x, %g : f32
      linalg.yield %y : f32
    }
  }
  return
}

// -----

// A scalar read at the top level, and the arithmetic on it (a decay's
// log rate when no loop is left around it), is computed where it is used:
// in the kernel, not on the host.
// CHECK-LABEL: func.func @host_scalar(
// CHECK-NOT:     memref.load %arg0
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             %[[X:.+]] = memref.load %arg1
// CHECK-NEXT:        %[[G:.+]] = memref.load %arg0[%{{.+}}] : memref<1xf32>
// CHECK-NEXT:        %[[LOG:.+]] = math.log %[[G]] : f32
// CHECK-NEXT:        %[[RATE:.+]] = arith.maximumf %[[LOG]], %{{.+}} : f32
// CHECK-NEXT:        arith.mulf %[[X]], %[[RATE]] : f32
func.func @host_scalar(%gamma: memref<1xf32>, %a: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %floor = arith.constant -80.0 : f32
  %g = memref.load %gamma[%c0] : memref<1xf32>
  %log = math.log %g : f32
  %rate = arith.maximumf %log, %floor : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%a : memref<4x16xf32>) {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %rate : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// A reduction with no parallel dimension runs on one thread of one block.
// CHECK-LABEL: func.func @host_reduction(
// CHECK:         %[[C1:.+]] = arith.constant 1 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]]) threads({{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]], %{{[a-zA-Z0-9_]+}} = %[[C1]]) {
// CHECK-NEXT:      scf.for
// CHECK:             arith.addf
func.func @host_reduction(%a: memref<8xf32>, %b: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<8xf32>) outs(%b : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tiles with a size known only at run time live in a gpu.alloc'd scratch
// buffer with one slice per block (each tile rounded up to 256 bytes), seen
// through memref.view; the scratch is freed after the launch. Under
// shared-memory-limit=128 the 256-byte static tile joins it.
// CHECK-LABEL: func.func @scratch(
// CHECK-SAME:      %{{[a-zA-Z0-9_]+}}: memref<?x64xf32>, %[[N:[a-zA-Z0-9_]+]]: index, %[[M:[a-zA-Z0-9_]+]]: index)
// CHECK:         %[[C4:.+]] = arith.constant 4 : index
// CHECK-NEXT:    %[[DYNBYTES:.+]] = arith.muli %[[C4]], %[[M]] : index
// CHECK-NEXT:    %[[C256:.+]] = arith.constant 256 : index
// CHECK-NEXT:    %[[ROWS:.+]] = arith.ceildivui %[[DYNBYTES]], %[[C256]] : index
// CHECK-NEXT:    %[[ALIGNED:.+]] = arith.muli %[[ROWS]], %[[C256]] : index
// CHECK-NEXT:    %[[SLICE:.+]] = arith.addi %[[C0:.+]], %[[ALIGNED]] : index
// CHECK:         scf.if
// CHECK:           %[[BYTES:.+]] = arith.muli %[[TOTAL:.+]], %[[SLICE]] : index
// CHECK-NEXT:      %[[SCRATCH:.+]] = gpu.alloc (%[[BYTES]]) : memref<?xi8>
// CHECK-NEXT:      gpu.launch blocks(%[[BX:[a-zA-Z0-9_]+]], {{.*}}) in (%{{[a-zA-Z0-9_]+}} = %[[TOTAL]],
// CHECK-SAME:        workgroup(%[[SMALLW:[a-zA-Z0-9_]+]] : memref<16xf32, #gpu.address_space<workgroup>>, %[[BIGW:[a-zA-Z0-9_]+]] : memref<64xf32, #gpu.address_space<workgroup>>) {
// CHECK:             %[[BASE:.+]] = arith.muli %[[BX]], %[[SLICE]] : index
// CHECK-NEXT:        %[[SMALL:.+]] = memref.memory_space_cast %[[SMALLW]] :
// CHECK-NEXT:        %[[BIG:.+]] = memref.memory_space_cast %[[BIGW]] :
// CHECK-NEXT:        %[[OFFSET:.+]] = arith.addi %[[BASE]], %[[C0]] : index
// CHECK-NEXT:        %[[DYN:.+]] = memref.view %[[SCRATCH]][%[[OFFSET]]][%[[M]]] : memref<?xi8> to memref<?xf32>
// CHECK:             memref.store %{{.+}}, %[[SMALL]][
// CHECK:             gpu.barrier
// CHECK:             memref.store %{{.+}}, %[[BIG]][
// CHECK:             gpu.barrier
// CHECK:             memref.store %{{.+}}, %[[DYN]][
// CHECK:             gpu.barrier
// CHECK-NEXT:        gpu.terminator
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.dealloc %[[SCRATCH]] : memref<?xi8>
// CHECK-NEXT:    }
// CHECK-NEXT:    return

// LIMIT-LABEL: func.func @scratch(
// LIMIT:         %[[DYNSLICE:.+]] = arith.addi %[[C0:.+]], %{{.+}} : index
// LIMIT:         %[[SLICE:.+]] = arith.addi %[[DYNSLICE]], %{{.+}} : index
// LIMIT:           %[[SCRATCH:.+]] = gpu.alloc (%{{.+}}) : memref<?xi8>
// LIMIT-NEXT:      gpu.launch
// LIMIT-SAME:        workgroup(%[[SMALLW:[a-zA-Z0-9_]+]] : memref<16xf32, #gpu.address_space<workgroup>>) {
// LIMIT:             %[[BASE:.+]] = arith.muli %{{.+}}, %[[SLICE]] : index
// LIMIT-NEXT:        memref.memory_space_cast %[[SMALLW]] :
// LIMIT-NEXT:        %[[BIGOFFSET:.+]] = arith.addi %[[BASE]], %[[DYNSLICE]] : index
// LIMIT-NEXT:        memref.view %[[SCRATCH]][%[[BIGOFFSET]]][] : memref<?xi8> to memref<64xf32>
// LIMIT-NEXT:        %[[DYNOFFSET:.+]] = arith.addi %[[BASE]], %[[C0]] : index
// LIMIT-NEXT:        memref.view %[[SCRATCH]][%[[DYNOFFSET]]][%{{.+}}] : memref<?xi8> to memref<?xf32>
// LIMIT:           gpu.dealloc %[[SCRATCH]] : memref<?xi8>
func.func @scratch(%in: memref<?x64xf32>, %n: index, %m: index) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (%n) {
    %small = memref.alloc() : memref<16xf32>
    %big = memref.alloc() : memref<64xf32>
    %dyn = memref.alloc(%m) : memref<?xf32>
    linalg.fill ins(%zero : f32) outs(%small : memref<16xf32>)
    linalg.fill ins(%zero : f32) outs(%big : memref<64xf32>)
    linalg.fill ins(%zero : f32) outs(%dyn : memref<?xf32>)
  }
  return
}

// -----

// Host allocations are device allocations, freed (once) at the end of the
// block that owns them: here the function body, for the buffer and for the
// scf.if that yields a view of one of two buffers. The memref.dealloc goes
// and the memref.copy ops are copy kernels.
// CHECK-LABEL: func.func @host_buffers(
// CHECK-NOT:     memref.alloc
// CHECK:         %[[N:.+]] = memref.dim
// CHECK-NEXT:    %[[TMP:.+]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK:         gpu.launch
// CHECK:         %[[R:.+]] = scf.if %{{.+}} -> (memref<?x8xf32, strided<[?, 1], offset: ?>>) {
// CHECK-NEXT:      %[[WIDE:.+]] = gpu.alloc (%[[N]]) : memref<?x16xf32>
// CHECK-NEXT:      %[[VIEW:.+]] = memref.subview %[[WIDE]][
// CHECK-NEXT:      %[[CAST:.+]] = memref.cast %[[VIEW]] :
// CHECK-NEXT:      scf.yield %[[CAST]] :
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[PLAIN:.+]] = gpu.alloc (%[[N]]) : memref<?x8xf32>
// CHECK-NEXT:      %[[CAST:.+]] = memref.cast %[[PLAIN]] :
// CHECK-NEXT:      scf.yield %[[CAST]] :
// CHECK-NEXT:    }
// CHECK-NOT:     memref.copy
// CHECK:         gpu.launch
// CHECK:           memref.load %[[TMP]][
// CHECK-NEXT:      memref.store %{{.+}}, %[[R]][
// CHECK:         gpu.launch
// CHECK:           memref.load %[[R]][
// CHECK-NEXT:      memref.store
// CHECK-NOT:     memref.dealloc
// CHECK:         gpu.dealloc %[[TMP]] : memref<?x8xf32>
// CHECK-NEXT:    gpu.dealloc %[[R]] : memref<?x8xf32, strided<[?, 1], offset: ?>>
// CHECK-NEXT:    return
func.func @host_buffers(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %tmp = memref.alloc(%n) : memref<?x8xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<?x8xf32>)
  %r = scf.if %flag -> memref<?x8xf32, strided<[?, 1], offset: ?>> {
    %wide = memref.alloc(%n) : memref<?x16xf32>
    %view = memref.subview %wide[0, 8] [%n, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1], offset: 8>>
    %cast = memref.cast %view : memref<?x8xf32, strided<[16, 1], offset: 8>> to memref<?x8xf32, strided<[?, 1], offset: ?>>
    scf.yield %cast : memref<?x8xf32, strided<[?, 1], offset: ?>>
  } else {
    %plain = memref.alloc(%n) : memref<?x8xf32>
    %cast = memref.cast %plain : memref<?x8xf32> to memref<?x8xf32, strided<[?, 1], offset: ?>>
    scf.yield %cast : memref<?x8xf32, strided<[?, 1], offset: ?>>
  }
  memref.copy %tmp, %r : memref<?x8xf32> to memref<?x8xf32, strided<[?, 1], offset: ?>>
  memref.copy %r, %b : memref<?x8xf32, strided<[?, 1], offset: ?>> to memref<?x8xf32>
  memref.dealloc %tmp : memref<?x8xf32>
  return
}

// -----

// An allocation in a host loop (an alloca too) is freed at the end of the
// loop body.
// CHECK-LABEL: func.func @alloc_in_loop(
// CHECK:         scf.for
// CHECK-NEXT:      %[[T:.+]] = gpu.alloc () : memref<8xf32>
// CHECK:           gpu.launch
// CHECK:             memref.store %{{.+}}, %[[T]][
// CHECK:           gpu.launch
// CHECK:             memref.load %[[T]][
// CHECK:           gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.dealloc %[[T]] : memref<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @alloc_in_loop(%b: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloca() : memref<8xf32>
    linalg.copy ins(%b : memref<8xf32>) outs(%t : memref<8xf32>)
    linalg.copy ins(%t : memref<8xf32>) outs(%b : memref<8xf32>)
  }
  return
}

// -----

// A lone memref.copy (no linalg op loaded yet) becomes a copy kernel.
// CHECK-LABEL: func.func @lone_copy(
// CHECK:         gpu.launch
// CHECK:           memref.load %arg0
// CHECK:           memref.store {{.*}}, %arg1
func.func @lone_copy(%a: memref<8xf32>, %b: memref<8xf32>) {
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  return
}

// -----

// Every thread reads t[0], then thread 0 overwrites it: a barrier comes
// between, or a slow thread could read the new value.
// CHECK-LABEL: func.func @read_then_write(
// CHECK:         gpu.barrier
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[T:.+]][%{{.+}}] : memref<16xf32>
// CHECK-NEXT:    %[[W:.+]] = arith.addf %[[V]]
// CHECK-NEXT:    gpu.barrier
// CHECK-NEXT:    %[[FIRST:.+]] = arith.cmpi eq
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      memref.store %[[W]], %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.barrier
func.func @read_then_write(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    %t = memref.alloc() : memref<16xf32>
    linalg.fill ins(%one : f32) outs(%t : memref<16xf32>)
    %v = memref.load %t[%c0] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %t[%c0] : memref<16xf32>
    %row = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<4x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.fill ins(%v : f32) outs(%row : memref<16xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// With stage-inputs (the default), the tiles of device buffers a block only
// reads are copied into shared memory first: the loop-invariant query tile,
// then the key tile of each step; the tile it writes is not staged. Past
// 48 KiB the tiles are views of dynamic shared memory.
// STAGE-LABEL: func.func @stage_inputs(
// STAGE:         gpu.launch {{.*}} workgroup(%[[QW:[a-zA-Z0-9_]+]] : memref<8x16xf32, #gpu.address_space<workgroup>>, %[[KW:[a-zA-Z0-9_]+]] : memref<8x16xf32, #gpu.address_space<workgroup>>)
// STAGE-DAG:     %[[Q:.+]] = memref.memory_space_cast %[[QW]]
// STAGE-DAG:     %[[QS:.+]] = memref.subview %arg0
// STAGE:         scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// STAGE:           %[[QV:.+]] = memref.load %[[QS]][
// STAGE-NEXT:      memref.store %[[QV]], %[[Q]][
// STAGE:         gpu.barrier
// STAGE:         scf.for
// STAGE:           %[[KS:.+]] = memref.subview %arg1
// STAGE:           %[[K:.+]] = memref.memory_space_cast %[[KW]]
// STAGE:           memref.load %[[KS]]
// STAGE:           gpu.barrier
// STAGE:           memref.load %[[Q]]
// STAGE:           memref.load %[[K]]
// STAGE:           gpu.barrier
// STAGE-NOT:     memref.load %arg0
func.func @stage_inputs(%q: memref<4x8x16xf32>, %k: memref<4x32x16xf32>, %out: memref<4x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.forall (%h) in (4) {
    %qt = memref.subview %q[%h, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %o = memref.subview %out[%h, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    scf.for %j = %c0 to %c4 step %c1 {
      %row = arith.muli %j, %c4 : index
      %kt = memref.subview %k[%h, %row, 0] [1, 8, 16] [1, 1, 1] : memref<4x32x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(i, d) -> (i, d)>, affine_map<(i, d) -> (i, d)>, affine_map<(i, d) -> (i, d)>],
                      iterator_types = ["parallel", "parallel"]}
          ins(%qt, %kt : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<8x16xf32, strided<[16, 1], offset: ?>>)
          outs(%o : memref<8x16xf32, strided<[16, 1], offset: ?>>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }
    }
  }
  return
}

// -----

// Tiles beyond 48 KiB: dynamic shared memory, one view per tile.
// STAGE-LABEL: func.func @dynamic_shared(
// STAGE:         %[[BYTES:.+]] = arith.constant {{[0-9]+}} : i32
// STAGE:         gpu.launch {{.*}} dynamic_shared_memory_size %[[BYTES]]
// STAGE:           %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// STAGE:           memref.view %[[SMEM]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x128xf32, #gpu.address_space<workgroup>>
func.func @dynamic_shared(%out: memref<4x128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%h) in (4) {
    %t = memref.alloc() : memref<128x128xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<128x128xf32>)
    %o = memref.subview %out[%h, 0, 0] [1, 128, 128] [1, 1, 1] : memref<4x128x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
    memref.copy %t, %o : memref<128x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
  }
  return
}

// -----

// With precision=tf32 (or a bf16 / f16 argument), a block's contractions go
// to the tensor cores: C (40 x 20) += A (40 x 24) B (24 x 20) as ⌈40/16⌉ ·
// ⌈20/8⌉ = 9 fragments of 16 x 8, taken by the block's 4 warps in turn
// (fragment f: rows 16 ⌊f / 3⌋ + g, + 8; columns 8 (f mod 3) + 2t, + 1),
// each C + Σ over ⌈24/8⌉ = 3 steps of mma.sync m16n8k8: A registers (g, t),
// (g + 8, t), (g, t + 4), (g + 8, t + 4), B (t, g), (t + 4, g), rounded to
// tf32, 0 past the sizes; C's elements inside stored back. A product under
// a mask of m and k (k ≤ m: select(mask, out + a b, out)) masks A's loads.
// One iteration per thread, then a barrier, as for any op of the block.
// MMA-LABEL: func.func @products_on_tensor_cores(
// MMA:         gpu.launch
// MMA:           scf.for %[[THREAD:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// MMA:             %[[WARP:.+]] = arith.divui %{{.+}}, %c32 : index
// MMA-NEXT:        %[[LANE:.+]] = arith.remui %{{.+}}, %c32 : index
// MMA:             %[[G:.+]] = arith.divui %[[LANE]], %c4 : index
// MMA-NEXT:        %[[T:.+]] = arith.remui %[[LANE]], %c4 : index
// MMA-NEXT:        %[[WARPS:.+]] = arith.divui %{{.+}}, %c32 : index
// MMA:             %[[ROW_TILES:.+]] = arith.ceildivui %c40, %c16 : index
// MMA:             %[[COLUMN_TILES:.+]] = arith.ceildivui %c20, %c8 : index
// MMA-NEXT:        %[[K_STEPS:.+]] = arith.ceildivui %c24, %c8 : index
// MMA-NEXT:        %[[FRAGMENTS:.+]] = arith.muli %[[ROW_TILES]], %[[COLUMN_TILES]] : index
// MMA-NEXT:        scf.for %{{.+}} = %[[WARP]] to %[[FRAGMENTS]] step %[[WARPS]] {
// MMA-COUNT-4:       memref.load %{{.+}} : memref<40x20xf32, strided<[20, 1], offset: ?>>
// MMA:               %[[SUMS:.+]]:4 = scf.for %{{.+}} = %c0 to %[[K_STEPS]] step %c1 iter_args(
// MMA-COUNT-4:         nvvm.convert.float.to.tf32
// MMA:                 nvvm.convert.float.to.tf32
// MMA:                 nvvm.convert.float.to.tf32
// MMA-NEXT:            nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// MMA:               scf.if
// MMA-NEXT:            memref.store %[[SUMS]]#0
// MMA:               scf.if
// MMA-NEXT:            memref.store %[[SUMS]]#1
// MMA:               scf.if
// MMA-NEXT:            memref.store %[[SUMS]]#2
// MMA:               scf.if
// MMA-NEXT:            memref.store %[[SUMS]]#3
// MMA:           gpu.barrier
// the masked product: k <= m decides A's loads
// MMA:             scf.for
// MMA:               scf.for
// MMA:                 %[[KEEP:.+]] = arith.cmpi ule, %{{.+}}, %{{.+}} : index
// MMA-NEXT:            %[[BOTH:.+]] = arith.andi %{{.+}}, %[[KEEP]] : i1
// MMA:                 memref.load
// MMA-NEXT:            arith.select %[[BOTH]], %{{.+}}, %{{.+}} : f32
// MMA:                 nvvm.mma.sync
// MMA:           gpu.barrier
// A block of 100 threads (not whole warps) keeps the loops.
// NOMMA-LABEL: func.func @products_on_tensor_cores(
// NOMMA-NOT:     nvvm.mma.sync
func.func @products_on_tensor_cores(%a: memref<2x40x24xf32>, %b: memref<2x24x20xf32>, %c: memref<2x40x20xf32>) {
  scf.forall (%i) in (2) {
    %as = memref.subview %a[%i, 0, 0] [1, 40, 24] [1, 1, 1] : memref<2x40x24xf32> to memref<40x24xf32, strided<[24, 1], offset: ?>>
    %bs = memref.subview %b[%i, 0, 0] [1, 24, 20] [1, 1, 1] : memref<2x24x20xf32> to memref<24x20xf32, strided<[20, 1], offset: ?>>
    %cs = memref.subview %c[%i, 0, 0] [1, 40, 20] [1, 1, 1] : memref<2x40x20xf32> to memref<40x20xf32, strided<[20, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%as, %bs : memref<40x24xf32, strided<[24, 1], offset: ?>>, memref<24x20xf32, strided<[20, 1], offset: ?>>) outs(%cs : memref<40x20xf32, strided<[20, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%as, %bs : memref<40x24xf32, strided<[24, 1], offset: ?>>, memref<24x20xf32, strided<[20, 1], offset: ?>>) outs(%cs : memref<40x20xf32, strided<[20, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = linalg.index 0 : index
      %k = linalg.index 2 : index
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %o, %p : f32
      %keep = arith.cmpi ule, %k, %m : index
      %r = arith.select %keep, %s, %o : f32
      linalg.yield %r : f32
    }
  }
  return
}
