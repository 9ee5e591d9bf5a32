// RUN: attn-opt %s -split-input-file --attn-prefetch-next-tiles --canonicalize --cse | FileCheck %s

// Key tile t of K is copied, then multiplied (8 x 32 register tiles, k in
// steps of 4: 8 * 2 * 16 = 256 iterations). Tile t + 1 (rows 64 (t + 1) ..
// 64 (t + 1) + 63, if they lie inside K) is prefetched over those
// iterations: 64 rows of 4 64-byte lines = 256 lines, iteration number
// i = ((i0 / 8) * 2 + i1 / 32) * 16 + l / 4 prefetches line i, that is
// row i / 4, column 16 (i mod 4), into L2.
// CHECK-LABEL: func.func @key_loop(
// CHECK-SAME:    %[[K:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           linalg.copy
// CHECK:           scf.for %[[I0:[a-z0-9]+]] =
// CHECK:             scf.for %[[I1:[a-z0-9]+]] =
// CHECK:               scf.for %[[L:[a-z0-9]+]] =
// CHECK-NEXT:            %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK-NEXT:            %[[ROW0:.+]] = arith.muli %[[NEXT]], %c64
// CHECK-NEXT:            %[[END:.+]] = arith.addi %[[ROW0]], %c64
// CHECK-NEXT:            %[[N:.+]] = memref.dim %[[K]], %c2
// CHECK-NEXT:            %[[INSIDE:.+]] = arith.cmpi ule, %[[END]], %[[N]]
// CHECK-NEXT:            scf.if %[[INSIDE]] {
// CHECK-NEXT:              %[[A:.+]] = arith.divui %[[I0]], %c8
// CHECK-NEXT:              %[[B:.+]] = arith.divui %[[I1]], %c32
// CHECK-NEXT:              %[[AB:.+]] = arith.muli %[[A]], %c2
// CHECK-NEXT:              %[[AB1:.+]] = arith.addi %[[AB]], %[[B]]
// CHECK-NEXT:              %[[C:.+]] = arith.divui %[[L]], %c4
// CHECK-NEXT:              %[[ABC:.+]] = arith.muli %[[AB1]], %c16
// CHECK-NEXT:              %[[ITER:.+]] = arith.addi %[[ABC]], %[[C]]
// CHECK-NEXT:              %[[LINE:.+]] = arith.minui %[[ITER]], %c255
// CHECK-NEXT:              %[[LINECOL:.+]] = arith.remui %[[LINE]], %c4
// CHECK-NEXT:              %[[COL:.+]] = arith.muli %[[LINECOL]], %c16
// CHECK-NEXT:              %[[LINEROW:.+]] = arith.divui %[[LINE]], %c4
// CHECK-NEXT:              %[[ROW:.+]] = arith.addi %[[ROW0]], %[[LINEROW]]
// CHECK-NEXT:              memref.prefetch %[[K]][%c0, %c2, %[[ROW]], %[[COL]]], read, locality<2>, data
// CHECK-NEXT:            }
// CHECK-NEXT:            vector.transfer_read
#id = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @key_loop(%k: memref<1x8x?x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %tile = memref.alloc() : memref<64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %k[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    linalg.copy ins(%src : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<64x64xf32>)
    scf.for %i = %c0 to %c64 step %c8 {
      scf.for %j = %c0 to %c64 step %c32 {
        %init = vector.transfer_read %acc[%i, %j], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x32xf32>
        %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x32xf32>) {
          %x = vector.transfer_read %tile[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
          %y = vector.transfer_read %tile[%l, %j], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x32xf32>
          %z = vector.contract {indexing_maps = [#id, #b, #c], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32>
          scf.yield %z : vector<8x32xf32>
        }
        vector.transfer_write %r, %acc[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x64xf32>
      }
    }
  }
  return
}

// -----

// No prefetch: a tile of a local buffer (already in cache), a copy whose
// offsets do not move with the loop, and a loop without a tile product.
// CHECK-LABEL: func.func @nothing_to_prefetch(
// CHECK-NOT:     memref.prefetch
func.func @nothing_to_prefetch(%k: memref<1x8x?x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %local = memref.alloc(%tiles) : memref<?x64xf32>
  %tile = memref.alloc() : memref<64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %local[%row, 0] [64, 64] [1, 1] : memref<?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    linalg.copy ins(%src : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<64x64xf32>)
    %fixed = memref.subview %k[0, 0, 0, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1]>>
    linalg.copy ins(%fixed : memref<64x64xf32, strided<[64, 1]>>) outs(%tile : memref<64x64xf32>)
    %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %zero) -> (f32) {
      %x = memref.load %tile[%l, %l] : memref<64x64xf32>
      %s = arith.addf %a, %x : f32
      scf.yield %s : f32
    }
    memref.store %r, %acc[%c0, %c0] : memref<64x64xf32>
  }
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %k[0, 1, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    linalg.copy ins(%src : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<64x64xf32>)
  }
  return
}

// -----

// In a parallel loop the innermost induction variable advances (the
// iteration a thread most likely runs next); the head index stays.
// CHECK-LABEL: func.func @query_tiles(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         scf.parallel (%[[H:[a-z0-9]+]], %[[T:[a-z0-9]+]]) =
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK:               memref.prefetch %[[Q]][%c0, %[[H]], %{{.+}}, %{{.+}}], read, locality<2>, data
#id2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @query_tiles(%q: memref<1x8x?x64xf32>, %s: memref<64x64xf32>, %out: memref<8x64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%h, %t) = (%c0, %c0) to (%c8, %tiles) step (%c1, %c1) {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %q[0, %h, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %tile = memref.alloc() : memref<64x64xf32>
    linalg.copy ins(%src : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%tile : memref<64x64xf32>)
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %out[%h, %i, %c0], %zero {in_bounds = [true, true]} : memref<8x64x64xf32>, vector<8x64xf32>
      %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %tile[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %s[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#id2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %r, %out[%h, %i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<8x64x64xf32>
    }
    memref.dealloc %tile : memref<64x64xf32>
    scf.reduce
  }
  return
}

// -----

// A tile read in place (an elementwise feature map reads K's rows with
// vector transfers, no copy) is prefetched as a copied one is; the tile the
// loop only writes (the output's rows, a copy's target) is prefetched for
// writing: each line's first store then finds it in cache.
// CHECK-LABEL: func.func @read_in_place(
// CHECK-SAME:    %[[K:[a-z0-9]+]]: memref<1x8x?x64xf32>, %[[O:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           math.exp
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK:               memref.prefetch %[[O]][%c0, %c2, %{{.+}}, %{{.+}}], write, locality<2>, data
// CHECK:               memref.prefetch %[[K]][%c0, %c2, %{{.+}}, %{{.+}}], read, locality<2>, data
// CHECK:         return
#ida = affine_map<(d0, d1, d2) -> (d0, d2)>
#ba = affine_map<(d0, d1, d2) -> (d2, d1)>
#ca = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @read_in_place(%k: memref<1x8x?x64xf32>, %o: memref<1x8x?x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %phi = memref.alloc() : memref<64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %k[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %r = %c0 to %c64 step %c1 {
      scf.for %c = %c0 to %c64 step %c8 {
        %x = vector.transfer_read %src[%r, %c], %zero {in_bounds = [true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
        %e = math.exp %x : vector<8xf32>
        vector.transfer_write %e, %phi[%r, %c] {in_bounds = [true]} : vector<8xf32>, memref<64x64xf32>
      }
    }
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
      %res = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %phi[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %phi[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#ida, #ba, #ca], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %res, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
    }
    %dst = memref.subview %o[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %acc, %dst : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
  }
  return
}

// -----

// Few lines for many iterations: a tile of 8 rows x 64 (32 lines) over a
// nest of 8 x 16 iterations. The prefetches go into the outer loop, 4 per
// iteration (32 / 8), not one per reduction step of the inner loop.
// CHECK-LABEL: func.func @few_lines(
// CHECK-SAME:    %[[K:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           scf.for %[[I:[a-z0-9]+]] =
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK:             scf.if
// CHECK-COUNT-4:       memref.prefetch %[[K]]
// CHECK-NOT:           memref.prefetch
// CHECK:             }
// CHECK:             scf.for
// CHECK-NOT:           memref.prefetch
// CHECK:         return
#idf = affine_map<(d0, d1, d2) -> (d0, d2)>
#bf = affine_map<(d0, d1, d2) -> (d2, d1)>
#cf = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @few_lines(%k: memref<1x8x?x64xf32>, %w: memref<64x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %tile = memref.alloc() : memref<8x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c8 : index
    %src = memref.subview %k[0, 2, %row, 0] [1, 1, 8, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %src, %tile : memref<8x64xf32, strided<[64, 1], offset: ?>> to memref<8x64xf32>
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
      %res = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %w[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %w[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#idf, #bf, #cf], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %res, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
    }
  }
  return
}

// -----

// The whole tiles' branch of a loop whose last tile is padded (kv-first's
// state pass): the tile read in place in the scf.if's then-branch is
// prefetched by the product of that branch; the padded branch, which runs
// once, prefetches nothing.
// CHECK-LABEL: func.func @whole_tiles_branch(
// CHECK-SAME:    %[[K:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           scf.if
// CHECK:             math.exp
// CHECK:             scf.for %{{.+}} = %c0 to %c64 step %c4
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK:               memref.prefetch %[[K]][%c0, %c2, %{{.+}}, %{{.+}}], read, locality<2>, data
// CHECK:           } else {
// CHECK-NOT:         memref.prefetch
// CHECK:         return
#idw = affine_map<(d0, d1, d2) -> (d0, d2)>
#bw = affine_map<(d0, d1, d2) -> (d2, d1)>
#cw = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @whole_tiles_branch(%k: memref<1x8x?x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %k, %c2 : memref<1x8x?x64xf32>
  %phi = memref.alloc() : memref<64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %end = arith.addi %row, %c64 : index
    %whole = arith.cmpi ule, %end, %n : index
    scf.if %whole {
      %src = memref.subview %k[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
      scf.for %r = %c0 to %c64 step %c1 {
        scf.for %c = %c0 to %c64 step %c8 {
          %x = vector.transfer_read %src[%r, %c], %zero {in_bounds = [true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<8xf32>
          %e = math.exp %x : vector<8xf32>
          vector.transfer_write %e, %phi[%r, %c] {in_bounds = [true]} : vector<8xf32>, memref<64x64xf32>
        }
      }
      scf.for %i = %c0 to %c64 step %c8 {
        %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
        %res = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
          %x = vector.transfer_read %phi[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
          %y = vector.transfer_read %phi[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
          %z = vector.contract {indexing_maps = [#idw, #bw, #cw], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
          scf.yield %z : vector<8x64xf32>
        }
        vector.transfer_write %res, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
      }
    } else {
      %rows = arith.subi %n, %row : index
      %src = memref.subview %k[0, 2, %row, 0] [1, 1, %rows, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<?x64xf32, strided<[64, 1], offset: ?>>
      scf.for %i = %c0 to %c64 step %c8 {
        %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
        %res = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
          %x = vector.transfer_read %src[%i, %l], %zero : memref<?x64xf32, strided<[64, 1], offset: ?>>, vector<8x4xf32>
          %y = vector.transfer_read %phi[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
          %z = vector.contract {indexing_maps = [#idw, #bw, #cw], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
          scf.yield %z : vector<8x64xf32>
        }
        vector.transfer_write %res, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
      }
    }
  }
  return
}

// -----

// An output tile that the end of the sequence cuts (rows min(N - row0, 64),
// written in place by the normalisation) counts as its 64 rows: the next
// tile is prefetched for writing only where all 64 lie inside the output.
// A tile that is both read and written (the accumulator) is not prefetched.
// CHECK-LABEL: func.func @cut_output_tiles(
// CHECK-SAME:    %[[O:[a-z0-9]+]]: memref<1x8x?x64xf32>, %{{.+}}: memref<64x64xf32>, %[[ACC:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         %[[N:.+]] = memref.dim %[[O]], %c2
// CHECK:         scf.parallel (%[[H:[a-z0-9]+]], %[[T:[a-z0-9]+]]) =
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK-NEXT:          %[[ROW0:.+]] = arith.muli %[[NEXT]], %c64
// CHECK-NEXT:          %[[END:.+]] = arith.addi %[[ROW0]], %c64
// CHECK-NEXT:          %[[INSIDE:.+]] = arith.cmpi ule, %[[END]], %[[N]]
// CHECK-NEXT:          scf.if %[[INSIDE]] {
// CHECK:                 memref.prefetch %[[O]][%c0, %[[H]], %{{.+}}, %{{.+}}], write, locality<2>, data
// CHECK-NOT:         memref.prefetch %[[ACC]]
// CHECK:         return
#idc = affine_map<(d0, d1, d2) -> (d0, d2)>
#bc = affine_map<(d0, d1, d2) -> (d2, d1)>
#cc = affine_map<(d0, d1, d2) -> (d0, d1)>
#ew = affine_map<(d0, d1) -> (d0, d1)>
func.func @cut_output_tiles(%o: memref<1x8x?x64xf32>, %s: memref<64x64xf32>, %acc: memref<1x8x?x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %o, %c2 : memref<1x8x?x64xf32>
  scf.parallel (%h, %t) = (%c0, %c0) to (%c8, %tiles) step (%c1, %c1) {
    %row = arith.muli %t, %c64 : index
    %left = arith.subi %n, %row : index
    %rows = arith.minui %left, %c64 : index
    %tile = memref.alloca() : memref<64x64xf32>
    %sums = memref.subview %acc[0, %h, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %sums[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<8x64xf32>
      %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %s[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %s[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#idc, #bc, #cc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %r, %sums[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32, strided<[64, 1], offset: ?>>
      vector.transfer_write %r, %tile[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
    }
    %real = memref.subview %tile[0, 0] [%rows, 64] [1, 1] : memref<64x64xf32> to memref<?x64xf32, strided<[64, 1]>>
    %dst = memref.subview %o[0, %h, %row, 0] [1, 1, %rows, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<?x64xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#ew, #ew], iterator_types = ["parallel", "parallel"]} ins(%real : memref<?x64xf32, strided<[64, 1]>>) outs(%dst : memref<?x64xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %twice = arith.addf %in, %in : f32
      linalg.yield %twice : f32
    }
    scf.reduce
  }
  return
}

// -----

// A workspace of the sequence's length that the function filled earlier
// (qk-first's packed K^T panels) and a loop only reads: its next tile is
// prefetched for reading. The packing loop, which writes the workspace, and
// a fixed-size scratch buffer get none.
// CHECK-LABEL: func.func @workspace_panels(
// CHECK:         %[[PANELS:.+]] = memref.alloc(%{{.+}}) : memref<?x64x64xf32>
// CHECK:         %[[SCRATCH:.+]] = memref.alloc() : memref<4x64x64xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.prefetch
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK:               memref.prefetch %[[PANELS]][%[[NEXT]], %{{.+}}, %{{.+}}], read, locality<2>, data
// CHECK-NOT:           memref.prefetch %[[SCRATCH]]
// CHECK:         return
#idp = affine_map<(d0, d1, d2) -> (d0, d2)>
#bp = affine_map<(d0, d1, d2) -> (d2, d1)>
#cp = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @workspace_panels(%k: memref<1x8x?x64xf32>, %q: memref<64x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %panels = memref.alloc(%tiles) : memref<?x64x64xf32>
  %scratch = memref.alloc() : memref<4x64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %src = memref.subview %k[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %dst = memref.subview %panels[%t, 0, 0] [1, 64, 64] [1, 1, 1] : memref<?x64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    linalg.copy ins(%src : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%dst : memref<64x64xf32, strided<[64, 1], offset: ?>>)
  }
  scf.for %t = %c0 to %tiles step %c1 {
    %panel = memref.subview %panels[%t, 0, 0] [1, 64, 64] [1, 1, 1] : memref<?x64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %slot = arith.remui %t, %c4 : index
    %fixed = memref.subview %scratch[%slot, 0, 0] [1, 64, 64] [1, 1, 1] : memref<4x64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
      %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %q[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %panel[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4x64xf32>
        %w = vector.transfer_read %fixed[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4x64xf32>
        %yw = arith.addf %y, %w : vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#idp, #bp, #cp], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %yw, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %r, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
    }
  }
  return
}

// -----

// A workspace the loop also writes, through a view cut before the loop, is
// not prefetched: the loop does not only read it.
// CHECK-LABEL: func.func @workspace_written_in_loop(
// CHECK-NOT:     memref.prefetch
// CHECK:         return
#idx = affine_map<(d0, d1, d2) -> (d0, d2)>
#bx = affine_map<(d0, d1, d2) -> (d2, d1)>
#cx = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @workspace_written_in_loop(%q: memref<64x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %ws = memref.alloc(%tiles) : memref<?x64x64xf32>
  %first = memref.subview %ws[0, 0, 0] [1, 64, 64] [1, 1, 1] : memref<?x64x64xf32> to memref<64x64xf32, strided<[64, 1]>>
  scf.for %t = %c0 to %tiles step %c1 {
    %panel = memref.subview %ws[%t, 0, 0] [1, 64, 64] [1, 1, 1] : memref<?x64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
      %r = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %q[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %panel[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#idx, #bx, #cx], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %r, %first[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32, strided<[64, 1]>>
    }
  }
  return
}

// -----

// A tile that an scf.if picks (qk-first's V tile: the whole tile in place,
// or the padded last tile of a workspace) counts as read where the if's
// result is read: the next whole tile of V is prefetched from a product
// that runs every iteration, and the guard keeps the prefetched rows inside
// V.
// CHECK-LABEL: func.func @tile_picked_by_branch(
// CHECK-SAME:    %[[V:[a-z0-9]+]]: memref<1x8x?x64xf32>
// CHECK:         %[[N:.+]] = memref.dim %[[V]], %c2
// CHECK:         scf.for %[[T:[a-z0-9]+]] =
// CHECK:           scf.if
// CHECK:             memref.subview %[[V]]
// CHECK:           } else {
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK:             scf.for %[[L:.+]] = %c0 to %c64 step %c4
// CHECK-NEXT:          %[[NEXT:.+]] = arith.addi %[[T]], %c1
// CHECK-NEXT:          %[[ROW0:.+]] = arith.muli %[[NEXT]], %c64
// CHECK-NEXT:          %[[END:.+]] = arith.addi %[[ROW0]], %c64
// CHECK-NEXT:          %[[INSIDE:.+]] = arith.cmpi ule, %[[END]], %[[N]]
// CHECK-NEXT:          scf.if %[[INSIDE]] {
// CHECK:                 memref.prefetch %[[V]][%c0, %c2, %{{.+}}, %{{.+}}], read, locality<2>, data
// CHECK:           vector.contract
// CHECK:         return
#idw = affine_map<(d0, d1, d2) -> (d0, d2)>
#bw = affine_map<(d0, d1, d2) -> (d2, d1)>
#cw = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @tile_picked_by_branch(%v: memref<1x8x?x64xf32>, %s: memref<64x64xf32>, %acc: memref<64x64xf32>, %tiles: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %v, %c2 : memref<1x8x?x64xf32>
  %padded = memref.alloc() : memref<64x64xf32>
  scf.for %t = %c0 to %tiles step %c1 {
    %row = arith.muli %t, %c64 : index
    %end = arith.addi %row, %c64 : index
    %whole = arith.cmpi ule, %end, %n : index
    %tile = scf.if %whole -> (memref<64x64xf32, strided<[64, 1], offset: ?>>) {
      %in_place = memref.subview %v[0, 2, %row, 0] [1, 1, 64, 64] [1, 1, 1, 1] : memref<1x8x?x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
      scf.yield %in_place : memref<64x64xf32, strided<[64, 1], offset: ?>>
    } else {
      %cast = memref.cast %padded : memref<64x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
      scf.yield %cast : memref<64x64xf32, strided<[64, 1], offset: ?>>
    }
    scf.for %i = %c0 to %c64 step %c8 {
      %init = vector.transfer_read %acc[%i, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x64xf32>
      %res = scf.for %l = %c0 to %c64 step %c4 iter_args(%a = %init) -> (vector<8x64xf32>) {
        %x = vector.transfer_read %s[%i, %l], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<8x4xf32>
        %y = vector.transfer_read %tile[%l, %c0], %zero {in_bounds = [true, true]} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4x64xf32>
        %z = vector.contract {indexing_maps = [#idw, #bw, #cw], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %a : vector<8x4xf32>, vector<4x64xf32> into vector<8x64xf32>
        scf.yield %z : vector<8x64xf32>
      }
      vector.transfer_write %res, %acc[%i, %c0] {in_bounds = [true, true]} : vector<8x64xf32>, memref<64x64xf32>
    }
  }
  return
}
