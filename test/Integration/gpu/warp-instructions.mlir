// The warp instructions of tensor-core kernels, emulated on the host by
// attn-emulate-gpu and attn's warp runtime, and checked against numbers
// computed outside attn (numpy): D = A B + C for A 16x16, B 16x8, C 16x8 of
// small integers (exact in bf16, f16 and f32), then D's row sums.
//
// One block of two warps. Warp 0 builds its bf16 fragments lane by lane
// from global memory, written here from the PTX ISA's tables for
// mma.m16n8k16 (g = lane / 4, t = lane % 4): A registers (g, 2t), (g + 8,
// 2t), (g, 2t + 8), (g + 8, 2t + 8), each with the next column in its high
// half; B registers (2t, g) and (2t + 8, g), each with the next row; C and D
// (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1). Warp 1 loads f16
// fragments from shared memory with ldmatrix (A: x4 of the four 8x8
// quarters; B: x2 .trans of row-major B) and adds 100 to C. Both sum their
// rows with two xor shuffles (1, 2), as an online softmax does.
//
// RUN: attn-opt %s --attn-emulate-gpu --convert-scf-to-cf \
// RUN:   --expand-strided-metadata --lower-affine --finalize-memref-to-llvm \
// RUN:   --convert-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%llvm_libs/libomp.so,%llvm_libs/libmlir_c_runner_utils.so,%llvm_libs/libmlir_runner_utils.so,%attn_libs/libAttnWarpRuntime.so \
// RUN: | FileCheck %s

// numpy: A = [[(3i + 5k) % 7 - 3]], B = [[(2k + 3j) % 5 - 2]], C = [[i - j]]
// CHECK:      Unranked Memref
// CHECK-SAME: sizes = [2, 16, 8]
// CHECK-NEXT: {{\[}}{{\[}}[1,   -13,   8,   -11,   5,   -4,   -18,   3],
// CHECK-NEXT:  [10,   -2,   6,   -11,   -8,   5,   -7,   1],
// CHECK-NEXT:  [12,   -12,   4,   10,   -14,   7,   -17,   -1],
// CHECK-NEXT:  [14,   6,   -12,   10,   -13,   9,   1,   -17],
// CHECK-NEXT:  [-5,   10,   0,   10,   -5,   -10,   5,   -5],
// CHECK-NEXT:  [-3,   14,   -9,   3,   10,   -8,   9,   -14],
// CHECK-NEXT:  [-8,   11,   10,   -11,   18,   -13,   6,   5],
// CHECK-NEXT:  [8,   -6,   15,   -4,   12,   3,   -11,   10],
// CHECK-NEXT:  [17,   5,   13,   -4,   -1,   12,   0,   8],
// CHECK-NEXT:  [19,   -5,   11,   17,   -7,   14,   -10,   6],
// CHECK-NEXT:  [21,   13,   -5,   17,   -6,   16,   8,   -10],
// CHECK-NEXT:  [2,   17,   7,   17,   2,   -3,   12,   2],
// CHECK-NEXT:  [4,   21,   -2,   10,   17,   -1,   16,   -7],
// CHECK-NEXT:  [-1,   18,   17,   -4,   25,   -6,   13,   12],
// CHECK-NEXT:  [15,   1,   22,   3,   19,   10,   -4,   17],
// CHECK-NEXT:  [24,   12,   20,   3,   6,   19,   7,   15]],
// CHECK-NEXT: {{\[}}[101,   87,   108,   89,   105,   96,   82,   103],
// CHECK-NEXT:  [110,   98,   106,   89,   92,   105,   93,   101],
// CHECK-NEXT:  [112,   88,   104,   110,   86,   107,   83,   99],
// CHECK-NEXT:  [114,   106,   88,   110,   87,   109,   101,   83],
// CHECK-NEXT:  [95,   110,   100,   110,   95,   90,   105,   95],
// CHECK-NEXT:  [97,   114,   91,   103,   110,   92,   109,   86],
// CHECK-NEXT:  [92,   111,   110,   89,   118,   87,   106,   105],
// CHECK-NEXT:  [108,   94,   115,   96,   112,   103,   89,   110],
// CHECK-NEXT:  [117,   105,   113,   96,   99,   112,   100,   108],
// CHECK-NEXT:  [119,   95,   111,   117,   93,   114,   90,   106],
// CHECK-NEXT:  [121,   113,   95,   117,   94,   116,   108,   90],
// CHECK-NEXT:  [102,   117,   107,   117,   102,   97,   112,   102],
// CHECK-NEXT:  [104,   121,   98,   110,   117,   99,   116,   93],
// CHECK-NEXT:  [99,   118,   117,   96,   125,   94,   113,   112],
// CHECK-NEXT:  [115,   101,   122,   103,   119,   110,   96,   117],
// CHECK-NEXT:  [124,   112,   120,   103,   106,   119,   107,   115]]]
// CHECK:      Unranked Memref
// CHECK-SAME: sizes = [2, 16]
// CHECK-NEXT: {{\[}}[-29,   -6,   -11,   -2,   0,   2,   18,   27,   50,   45,   54,   56,   58,   74,   83,   106],
// CHECK-NEXT:  [771,   794,   789,   798,   800,   802,   818,   827,   850,   845,   854,   856,   858,   874,   883,   906]]

!ldA = !llvm.struct<(i32, i32, i32, i32)>
!ldB = !llvm.struct<(i32, i32)>
!acc = !llvm.struct<(f32, f32, f32, f32)>

// Elements (row, col) and (row, col + 1) of a row-major f32 matrix as one
// bf16x2 register (the first in the low half), or (row, col) and
// (row + 1, col) with %down.
func.func @pack_bf16(%m: memref<?x?xf32>, %row: index, %col: index, %down: i1) -> i32 {
  %c1 = arith.constant 1 : index
  %row1 = arith.addi %row, %c1 : index
  %col1 = arith.addi %col, %c1 : index
  %nextRow = arith.select %down, %row1, %row : index
  %nextCol = arith.select %down, %col, %col1 : index
  %lo = memref.load %m[%row, %col] : memref<?x?xf32>
  %hi = memref.load %m[%nextRow, %nextCol] : memref<?x?xf32>
  %lo16 = arith.truncf %lo : f32 to bf16
  %hi16 = arith.truncf %hi : f32 to bf16
  %loBits = arith.bitcast %lo16 : bf16 to i16
  %hiBits = arith.bitcast %hi16 : bf16 to i16
  %lo32 = arith.extui %loBits : i16 to i32
  %hi32 = arith.extui %hiBits : i16 to i32
  %c16 = arith.constant 16 : i32
  %shifted = arith.shli %hi32, %c16 : i32
  %packed = arith.ori %shifted, %lo32 : i32
  return %packed : i32
}

// A shared-memory address: byte \p offset into \p base.
func.func @shared_row(%base: index, %offset: index) -> !llvm.ptr<3> {
  %address = arith.addi %base, %offset : index
  %bits = arith.index_cast %address : index to i64
  %generic = llvm.inttoptr %bits : i64 to !llvm.ptr
  %shared = llvm.addrspacecast %generic : !llvm.ptr to !llvm.ptr<3>
  return %shared : !llvm.ptr<3>
}

func.func @tile(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<16x8xf32>,
                %d: memref<2x16x8xf32>, %sums: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %true = arith.constant true
  %false = arith.constant false
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%wa : memref<16x16xf16, #gpu.address_space<workgroup>>,
                       %wb : memref<16x8xf16, #gpu.address_space<workgroup>>) {
    %sa = memref.memory_space_cast %wa : memref<16x16xf16, #gpu.address_space<workgroup>> to memref<16x16xf16>
    %sb = memref.memory_space_cast %wb : memref<16x8xf16, #gpu.address_space<workgroup>> to memref<16x8xf16>
    scf.for %i = %tx to %c256 step %c64 {
      %row = arith.divui %i, %c16 : index
      %col = arith.remui %i, %c16 : index
      %v = memref.load %a[%row, %col] : memref<?x?xf32>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %sa[%row, %col] : memref<16x16xf16>
    }
    scf.for %i = %tx to %c128 step %c64 {
      %row = arith.divui %i, %c8 : index
      %col = arith.remui %i, %c8 : index
      %v = memref.load %b[%row, %col] : memref<?x?xf32>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %sb[%row, %col] : memref<16x8xf16>
    }
    gpu.barrier

    %warp = arith.divui %tx, %c32 : index
    %lane = arith.remui %tx, %c32 : index
    %g = arith.divui %lane, %c4 : index
    %t = arith.remui %lane, %c4 : index
    %g8 = arith.addi %g, %c8 : index
    %t2 = arith.muli %t, %c2 : index
    %t21 = arith.addi %t2, %c1 : index
    %t28 = arith.addi %t2, %c8 : index
    %firstWarp = arith.cmpi eq, %warp, %c0 : index
    %hundred = arith.constant 100.0 : f32
    %zero = arith.constant 0.0 : f32
    %cShift = arith.select %firstWarp, %zero, %hundred : f32
    %cv0 = memref.load %c[%g, %t2] : memref<16x8xf32>
    %cv1 = memref.load %c[%g, %t21] : memref<16x8xf32>
    %cv2 = memref.load %c[%g8, %t2] : memref<16x8xf32>
    %cv3 = memref.load %c[%g8, %t21] : memref<16x8xf32>
    %c0v = arith.addf %cv0, %cShift : f32
    %c1v = arith.addf %cv1, %cShift : f32
    %c2v = arith.addf %cv2, %cShift : f32
    %c3v = arith.addf %cv3, %cShift : f32

    %d0, %d1, %d2, %d3 = scf.if %firstWarp -> (f32, f32, f32, f32) {
      %a0 = func.call @pack_bf16(%a, %g, %t2, %false) : (memref<?x?xf32>, index, index, i1) -> i32
      %a1 = func.call @pack_bf16(%a, %g8, %t2, %false) : (memref<?x?xf32>, index, index, i1) -> i32
      %a2 = func.call @pack_bf16(%a, %g, %t28, %false) : (memref<?x?xf32>, index, index, i1) -> i32
      %a3 = func.call @pack_bf16(%a, %g8, %t28, %false) : (memref<?x?xf32>, index, index, i1) -> i32
      %b0 = func.call @pack_bf16(%b, %t2, %g, %true) : (memref<?x?xf32>, index, index, i1) -> i32
      %b1 = func.call @pack_bf16(%b, %t28, %g, %true) : (memref<?x?xf32>, index, index, i1) -> i32
      %r = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0v, %c1v, %c2v, %c3v]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !acc
      %r0 = llvm.extractvalue %r[0] : !acc
      %r1 = llvm.extractvalue %r[1] : !acc
      %r2 = llvm.extractvalue %r[2] : !acc
      %r3 = llvm.extractvalue %r[3] : !acc
      scf.yield %r0, %r1, %r2, %r3 : f32, f32, f32, f32
    } else {
      // Lane l gives row l % 8 of 8x8 matrix l / 8: A's quarters in the
      // order of the A registers, B's two 8-row halves.
      %quarter = arith.divui %lane, %c8 : index
      %r = arith.remui %lane, %c8 : index
      %lowerHalf = arith.remui %quarter, %c2 : index
      %rightHalf = arith.divui %quarter, %c2 : index
      %rowOff = arith.muli %lowerHalf, %c8 : index
      %aRow = arith.addi %r, %rowOff : index
      %aCol = arith.muli %rightHalf, %c8 : index
      %aElem0 = arith.muli %aRow, %c16 : index
      %aElem = arith.addi %aElem0, %aCol : index
      %aBytes = arith.muli %aElem, %c2 : index
      %aBase = memref.extract_aligned_pointer_as_index %sa : memref<16x16xf16> -> index
      %aPtr = func.call @shared_row(%aBase, %aBytes) : (index, index) -> !llvm.ptr<3>
      %fa = nvvm.ldmatrix %aPtr {num = 4 : i32, layout = #nvvm.mma_layout<row>,
        shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>}
        : (!llvm.ptr<3>) -> !ldA
      %bRow = arith.remui %lane, %c16 : index
      %bBytes = arith.muli %bRow, %c16 : index
      %bBase = memref.extract_aligned_pointer_as_index %sb : memref<16x8xf16> -> index
      %bPtr = func.call @shared_row(%bBase, %bBytes) : (index, index) -> !llvm.ptr<3>
      %fb = nvvm.ldmatrix %bPtr {num = 2 : i32, layout = #nvvm.mma_layout<col>,
        shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>}
        : (!llvm.ptr<3>) -> !ldB
      %ai0 = llvm.extractvalue %fa[0] : !ldA
      %ai1 = llvm.extractvalue %fa[1] : !ldA
      %ai2 = llvm.extractvalue %fa[2] : !ldA
      %ai3 = llvm.extractvalue %fa[3] : !ldA
      %bi0 = llvm.extractvalue %fb[0] : !ldB
      %bi1 = llvm.extractvalue %fb[1] : !ldB
      %a0 = llvm.bitcast %ai0 : i32 to vector<2xf16>
      %a1 = llvm.bitcast %ai1 : i32 to vector<2xf16>
      %a2 = llvm.bitcast %ai2 : i32 to vector<2xf16>
      %a3 = llvm.bitcast %ai3 : i32 to vector<2xf16>
      %b0 = llvm.bitcast %bi0 : i32 to vector<2xf16>
      %b1 = llvm.bitcast %bi1 : i32 to vector<2xf16>
      %res = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0v, %c1v, %c2v, %c3v]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !acc
      %r0 = llvm.extractvalue %res[0] : !acc
      %r1 = llvm.extractvalue %res[1] : !acc
      %r2 = llvm.extractvalue %res[2] : !acc
      %r3 = llvm.extractvalue %res[3] : !acc
      scf.yield %r0, %r1, %r2, %r3 : f32, f32, f32, f32
    }
    memref.store %d0, %d[%warp, %g, %t2] : memref<2x16x8xf32>
    memref.store %d1, %d[%warp, %g, %t21] : memref<2x16x8xf32>
    memref.store %d2, %d[%warp, %g8, %t2] : memref<2x16x8xf32>
    memref.store %d3, %d[%warp, %g8, %t21] : memref<2x16x8xf32>

    // Row g's sum over the 4 lanes of the row's group: xor 1, then xor 2.
    %all = arith.constant -1 : i32
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %clamp = arith.constant 31 : i32
    %p0 = arith.addf %d0, %d1 : f32
    %p1 = arith.addf %d2, %d3 : f32
    %x0 = nvvm.shfl.sync bfly %all, %p0, %one, %clamp : f32 -> f32
    %x1 = nvvm.shfl.sync bfly %all, %p1, %one, %clamp : f32 -> f32
    %q0 = arith.addf %p0, %x0 : f32
    %q1 = arith.addf %p1, %x1 : f32
    %y0 = nvvm.shfl.sync bfly %all, %q0, %two, %clamp : f32 -> f32
    %y1 = nvvm.shfl.sync bfly %all, %q1, %two, %clamp : f32 -> f32
    %s0 = arith.addf %q0, %y0 : f32
    %s1 = arith.addf %q1, %y1 : f32
    %leader = arith.cmpi eq, %t, %c0 : index
    scf.if %leader {
      memref.store %s0, %sums[%warp, %g] : memref<2x16xf32>
      memref.store %s1, %sums[%warp, %g8] : memref<2x16xf32>
    }
    gpu.terminator
  }
  return
}

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %a = memref.alloc(%c16, %c16) : memref<?x?xf32>
  %b = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %c = memref.alloc() : memref<16x8xf32>
  %d = memref.alloc() : memref<2x16x8xf32>
  %sums = memref.alloc() : memref<2x16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %k = %c0 to %c16 step %c1 {
      // (3i + 5k) % 7 - 3
      %i3 = arith.muli %i, %c3 : index
      %k5 = arith.muli %k, %c5 : index
      %s = arith.addi %i3, %k5 : index
      %m = arith.remui %s, %c7 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %three = arith.constant 3.0 : f32
      %v = arith.subf %mf, %three : f32
      memref.store %v, %a[%i, %k] : memref<?x?xf32>
    }
    scf.for %j = %c0 to %c8 step %c1 {
      // B: (2k + 3j) % 5 - 2, with k = i; C: i - j
      %k2 = arith.muli %i, %c2 : index
      %j3 = arith.muli %j, %c3 : index
      %s = arith.addi %k2, %j3 : index
      %m = arith.remui %s, %c5 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %twof = arith.constant 2.0 : f32
      %v = arith.subf %mf, %twof : f32
      memref.store %v, %b[%i, %j] : memref<?x?xf32>
      %ii = arith.index_cast %i : index to i32
      %ji = arith.index_cast %j : index to i32
      %dij = arith.subi %ii, %ji : i32
      %cf = arith.sitofp %dij : i32 to f32
      memref.store %cf, %c[%i, %j] : memref<16x8xf32>
    }
  }
  func.call @tile(%a, %b, %c, %d, %sums) : (memref<?x?xf32>, memref<?x?xf32>, memref<16x8xf32>, memref<2x16x8xf32>, memref<2x16xf32>) -> ()
  %du = memref.cast %d : memref<2x16x8xf32> to memref<*xf32>
  func.call @printMemrefF32(%du) : (memref<*xf32>) -> ()
  %su = memref.cast %sums : memref<2x16xf32> to memref<*xf32>
  func.call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  return
}
