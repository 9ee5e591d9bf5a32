// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-map-to-gpu
// RUN: not attn-opt %s -split-input-file --attn-map-to-gpu=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS0
// RUN: not attn-opt %s -split-input-file --attn-map-to-gpu=threads=1025 2>&1 | FileCheck %s --check-prefix=THREADS1025
// RUN: not attn-opt %s -split-input-file --attn-map-to-gpu=shared-memory-limit=-1 2>&1 | FileCheck %s --check-prefix=SHARED

// Every diagnostic of attn-map-to-gpu.

// THREADS0: error: attn-map-to-gpu: threads must be in [1, 1024], got 0
// THREADS1025: error: attn-map-to-gpu: threads must be in [1, 1024], got 1025
// SHARED: error: attn-map-to-gpu: shared-memory-limit must not be negative, got -1

// Only bufferized foralls (no shared_outs) are thread blocks.
func.func @forall_results(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'scf.forall' op with results cannot be mapped to the GPU (bufferize first)}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> tensor<4xf32> {
    scf.forall.in_parallel {
    }
  }
  return %r : tensor<4xf32>
}

// -----

// Workgroup attributions and scratch views have identity layouts.
func.func @tile_layout() {
  scf.forall (%i) in (4) {
    // expected-error@+1 {{'memref.alloc' op allocates a tile with a layout; attn-map-to-gpu needs identity-layout tiles}}
    %tile = memref.alloc() : memref<4x4xf32, strided<[1, 4]>>
  }
  return
}

// -----

// The scratch is sized before the launch, from values defined outside the
// forall.
func.func @tile_size_inside(%n: index) {
  scf.forall (%i) in (%n) {
    // expected-error@+1 {{'memref.alloc' op allocates a tile whose size is computed inside the thread block; it cannot be reserved before the launch}}
    %tile = memref.alloc(%i) : memref<?xf32>
  }
  return
}

// -----

// Scalar accesses on the host would read or write device memory.
func.func @host_load(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'memref.load' op would access device memory from the host; attn-map-to-gpu maps only linalg ops and scf.forall loops onto the GPU}}
  %v = memref.load %a[%c0] : memref<8xf32>
  return %v : f32
}

// -----

func.func @host_store(%a: memref<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'memref.store' op would access device memory from the host}}
  memref.store %v, %a[%c0] : memref<8xf32>
  return
}

// -----

// A global lives in host memory, which the kernels cannot reach.
memref.global "private" constant @table : memref<4xf32> = dense<1.0>

func.func @host_global() -> memref<4xf32> {
  // expected-error@+1 {{'memref.get_global' op would access device memory from the host}}
  %g = memref.get_global @table : memref<4xf32>
  return %g : memref<4xf32>
}

// -----

// A device buffer is freed at the end of the block that owns it, so it may
// leave that block only through an scf.if.
func.func @escapes_function() -> memref<8xf32> {
  // expected-error@+1 {{'gpu.alloc' op escapes the function, a loop, or an scf.if whose other branch yields a buffer it does not own; attn-map-to-gpu frees device buffers at the end of the block that owns them}}
  %t = memref.alloc() : memref<8xf32>
  return %t : memref<8xf32>
}

// -----

func.func @escapes_loop(%init: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %init) -> memref<8xf32> {
    // expected-error@+1 {{'gpu.alloc' op escapes the function, a loop}}
    %t = memref.alloc() : memref<8xf32>
    scf.yield %t : memref<8xf32>
  }
  return
}

// -----

// A zero-rank linalg op has no loop to spread over threads, on the host or
// in a thread block.
func.func @zero_rank(%a: memref<f32>, %b: memref<f32>) {
  // expected-error@+1 {{'linalg.generic' op cannot be lowered to loops for the GPU}}
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%a : memref<f32>) outs(%b : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

func.func @zero_rank_in_block(%a: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %t = memref.alloc() : memref<f32>
    %s = memref.subview %a[%i] [1] [1] : memref<4xf32> to memref<f32, strided<[], offset: ?>>
    // expected-error@+1 {{'linalg.copy' op cannot be lowered to loops for the GPU}}
    linalg.copy ins(%s : memref<f32, strided<[], offset: ?>>) outs(%t : memref<f32>)
  }
  return
}

// -----

// A writing op whose result every thread uses cannot run on thread 0 only.
func.func @guard_with_results(%out: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    // expected-error@+1 {{'memref.atomic_rmw' op writes memory and yields values every thread would need}}
    %old = memref.atomic_rmw addf %one, %out[%i] : (f32, memref<4xf32>) -> f32
    memref.store %old, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// Only one branch allocates: freeing the scf.if's result could free %a.
func.func @maybe_argument(%a: memref<8xf32>, %flag: i1) {
  %r = scf.if %flag -> memref<8xf32> {
    // expected-error@+1 {{'gpu.alloc' op escapes the function, a loop, or an scf.if whose other branch yields a buffer it does not own}}
    %t = memref.alloc() : memref<8xf32>
    scf.yield %t : memref<8xf32>
  } else {
    scf.yield %a : memref<8xf32>
  }
  linalg.copy ins(%a : memref<8xf32>) outs(%r : memref<8xf32>)
  return
}

// -----

// A linalg op in the body of another would be lowered to loops, and freed,
// with its parent's body before it is mapped (heap-use-after-free in
// mapToGrid, found by attn-mlir-fuzzer).
func.func @nested_linalg(%out: memref<4xf32>, %tmp: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%out : memref<4xf32>) {
  ^bb0(%a: f32):
    // expected-error@+1 {{'linalg.fill' op is inside the body of the 'linalg.generic' op; attn-map-to-gpu maps linalg ops and scf.forall loops only outside linalg bodies and kernels}}
    linalg.fill ins(%a : f32) outs(%tmp : memref<8xf32>)
    linalg.yield %a : f32
  }
  return
}

// -----

// A forall in a linalg body, likewise.
func.func @forall_in_linalg(%out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%out : memref<4xf32>) {
  ^bb0(%a: f32):
    // expected-error@+1 {{'scf.forall' op is inside the body of the 'linalg.generic' op}}
    scf.forall (%i) in (2) {
    }
    linalg.yield %a : f32
  }
  return
}

// -----

// Kernels of the input are not entered: a forall in one would become a
// launch inside a kernel.
func.func @forall_in_launch() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'scf.forall' op is inside the 'gpu.launch' op; attn-map-to-gpu maps linalg ops and scf.forall loops only outside linalg bodies and kernels}}
    scf.forall (%i) in (2) {
    }
    gpu.terminator
  }
  return
}

// -----

// An op without a location (the canonicalizer gives the constants it
// hoists none; a memref.get_global bufferized from one inherits it) is
// reported at the nearest enclosing op that has one.
memref.global "private" constant @c : memref<4xf32> = dense<1.0>
// expected-error@+1 {{'memref.get_global' op would access device memory from the host}}
func.func @unknown_location(%out: memref<4xf32>) {
  %g = memref.get_global @c : memref<4xf32> loc(unknown)
  %c0 = arith.constant 0 : index
  %x = memref.load %g[%c0] : memref<4xf32> loc(unknown)
  return
}

// -----

// Tiles have integer or float elements: the size of an index element is
// not known here (getElementTypeBitWidth() of it crashed the pass).
func.func @index_tile(%out: memref<4xindex>) {
  scf.forall (%i) in (4) {
    // expected-error@+1 {{'memref.alloc' op allocates a tile of 'index' elements; attn-map-to-gpu needs tiles of integers or floats}}
    %tile = memref.alloc() : memref<4xindex>
    %c0 = arith.constant 0 : index
    %x = memref.load %tile[%c0] : memref<4xindex>
    memref.store %x, %out[%i] : memref<4xindex>
  }
  return
}

// -----

func.func @vector_tile() {
  scf.forall (%i) in (4) {
    // expected-error@+1 {{'memref.alloca' op allocates a tile of 'vector<4xf32>' elements}}
    %tile = memref.alloca() : memref<4xvector<4xf32>>
  }
  return
}

// -----

// A static tile whose byte size overflows int64.
func.func @huge_tile() {
  scf.forall (%i) in (4) {
    // expected-error@+1 {{'memref.alloc' op allocates a tile of more bytes than fit in a 64-bit size}}
    %tile = memref.alloc() : memref<4611686018427387904x2xf32>
  }
  return
}

// -----

// An scf.parallel with reductions in a thread block: each thread would
// reduce only its share, and the loop's result was used after the loop was
// erased (printing the op that used it crashed).
func.func @parallel_reduction(%out: memref<4xf32>, %in: memref<4x8xf32>) {
  scf.forall (%i) in (4) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    // expected-error@+1 {{'scf.parallel' op with reductions cannot be spread over the threads of a block; attn-map-to-gpu distributes only scf.parallel loops without results}}
    %sum = scf.parallel (%j) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
      %x = memref.load %in[%i, %j] : memref<4x8xf32>
      scf.reduce(%x : f32) {
      ^bb0(%a: f32, %b: f32):
        %s = arith.addf %a, %b : f32
        scf.reduce.return %s : f32
      }
    }
    memref.store %sum, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// A memref.copy in a linalg body (a call there bufferizes to one) would
// become a nested linalg.copy: the same (it was freed with its parent and
// then mapped).
func.func @copy_in_linalg(%out: memref<4xf32>, %a: memref<8xf32>, %b: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%out : memref<4xf32>) {
  ^bb0(%x: f32):
    // expected-error@+1 {{'memref.copy' op is inside the body of the 'linalg.generic' op}}
    memref.copy %a, %b : memref<8xf32> to memref<8xf32>
    linalg.yield %x : f32
  }
  return
}
