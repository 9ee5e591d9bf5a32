// RUN: attn-opt %s --attn-tile-and-vectorize=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-tile-and-vectorize=cpu=x86-64-v4 | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --attn-tile-and-vectorize="cpu=x86-64-v4 cpu-features=-avx512f" | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-tile-and-vectorize="cpu=x86-64-v3 rows=2 cols=8" | FileCheck %s --check-prefix=ROWS2
// RUN: attn-opt %s --attn-tile-and-vectorize="cpu=x86-64-v3 reduction-tile=0" | FileCheck %s --check-prefix=WHOLE
// RUN: attn-opt %s --attn-tile-and-vectorize="cpu=x86-64-v3 reduction-tile=16" | FileCheck %s --check-prefix=STEPS16
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-tile-and-vectorize{cpu=x86-64-v3},canonicalize,loop-invariant-subset-hoisting))" | FileCheck %s --check-prefix=HOIST
// RUN: not attn-opt %s --attn-tile-and-vectorize=cpu=pentium-9 2>&1 | FileCheck %s --check-prefix=BADCPU
// RUN: not attn-opt %s --attn-tile-and-vectorize="cpu=x86-64-v3 cpu-features=+warp-drive" 2>&1 | FileCheck %s --check-prefix=BADFEATURE

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#e = affine_map<(i, j) -> (i, j)>

// C[i, j] += A[i, k] B[k, j] becomes register tiles that keep the FMA
// pipes busy within the CPU's vector registers: AVX2 (16 registers of 8
// floats) 6x16 = 12 accumulators + 2 B vectors + 1 broadcast (4x16's 8
// accumulators left the pipes waiting on the FMA latency: 83-86% of the
// peak against 93-100%); AVX-512 (32 of 16) 8x32 = 16 + 2 + 1.
// 6 rows do not divide the 64-row tile: rows 0..59 are ten 6-row tiles and
// the remaining 4 rows one 4-row tile, each its own loop nest on a slice
// of A and C (the second reading C as the first left it).
// The reduction of 64 is a rolled loop of 16 steps of 4, one
// vector.contract each: a small fraction of the code of one 64-step
// contract (LLVM's instruction selection of the unrolled steps was most of
// the compile time), no loads hoisted into spills, and the accumulators
// stay in registers across the steps.
// WHOLE (reduction-tile=0) keeps one contract of 64; STEPS16 sets 16.
// AVX2-LABEL: func.func @tile_product(
// AVX2:         %[[A60:.*]] = tensor.extract_slice %{{.*}}[0, 0] [60, 64] [1, 1]
// AVX2:         %[[C60:.*]] = tensor.extract_slice %{{.*}}[0, 0] [60, 64] [1, 1]
// AVX2:         scf.for %{{.*}} = %c0 to %c60 step %c6 iter_args(%{{.*}} = %[[C60]])
// AVX2:           scf.for %{{.*}} = %c0 to %c64 step %c16
// AVX2:             scf.for %{{.*}} = %c0 to %c64 step %c4
// AVX2:               vector.contract {{.*}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// AVX2:         %[[FIRST:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [60, 64] [1, 1]
// AVX2:         tensor.extract_slice %{{.*}}[60, 0] [4, 64] [1, 1]
// AVX2:         tensor.extract_slice %[[FIRST]][60, 0] [4, 64] [1, 1]
// AVX2:               vector.contract {{.*}} : vector<4x4xf32>, vector<4x16xf32> into vector<4x16xf32>
// AVX2:         tensor.insert_slice %{{.*}} into %[[FIRST]][60, 0] [4, 64] [1, 1]
// AVX2-NOT:     linalg.generic
// AVX512-LABEL: func.func @tile_product(
// AVX512:               vector.contract {{.*}} : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32>
// ROWS2-LABEL: func.func @tile_product(
// ROWS2-NOT:           tensor.extract_slice %{{.*}}[60, 0]
// ROWS2:               vector.contract {{.*}} : vector<2x4xf32>, vector<4x8xf32> into vector<2x8xf32>
// STEPS16-LABEL: func.func @tile_product(
// STEPS16:             scf.for %{{.*}} = %c0 to %c64 step %c16
// STEPS16:               vector.contract {{.*}} : vector<6x16xf32>, vector<16x16xf32> into vector<6x16xf32>
// WHOLE-LABEL: func.func @tile_product(
// WHOLE:             vector.contract {{.*}} : vector<6x64xf32>, vector<64x16xf32> into vector<6x16xf32>
// BADCPU: error: attn-tile-and-vectorize: unknown CPU 'pentium-9'
// BADFEATURE: error: attn-tile-and-vectorize: unknown CPU feature 'warp-drive'
func.func @tile_product(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// A reduction of 1000 (a key tile of 1000) is a rolled loop of 250 steps
// of 4: code size does not grow with the tile. After
// loop-invariant-subset-hoisting (as attn-lower-to-llvm runs it) the
// accumulator tile is carried in registers across the steps.
// reduction-tile=0 keeps it whole.
// AVX2-LABEL: func.func @long_reduction(
// AVX2:         scf.for
// AVX2:           scf.for
// AVX2:             scf.for %{{.*}} = %c0 to %c1000 step %c4
// AVX2:               vector.contract {{.*}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// AVX2:             scf.for %{{.*}} = %c0 to %c1000 step %c4
// AVX2:               vector.contract {{.*}} : vector<4x4xf32>, vector<4x16xf32> into vector<4x16xf32>
// HOIST-LABEL: func.func @long_reduction(
// HOIST:             %[[ACC:.*]] = vector.transfer_read
// HOIST:             scf.for %{{.*}} = %c0 to %c1000 step %c4 iter_args({{.*}}%{{.*}} = %[[ACC]]) -> ({{.*}}vector<6x16xf32>)
// HOIST:               vector.contract {{.*}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// WHOLE-LABEL: func.func @long_reduction(
// WHOLE:             vector.contract {{.*}} : vector<6x1000xf32>, vector<1000x16xf32> into vector<6x16xf32>
func.func @long_reduction(%a: tensor<64x1000xf32>, %b: tensor<1000x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x1000xf32>, tensor<1000x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// Dynamic ranges and plain elementwise steps are left to the loop lowering
// (LLVM's loop vectorizer handles their masks and index arithmetic).
// AVX2-LABEL: func.func @dynamic_and_elementwise(
// AVX2-NOT:     vector.
// AVX2:         linalg.generic
// AVX2:         linalg.generic
func.func @dynamic_and_elementwise(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>, %d: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<64x64xf32>) {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>) outs(%c : tensor<?x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %1 = linalg.generic {indexing_maps = [#e], iterator_types = ["parallel", "parallel"]} outs(%d : tensor<64x64xf32>) {
  ^bb0(%x: f32):
    %e = arith.mulf %x, %x : f32
    linalg.yield %e : f32
  } -> tensor<64x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<64x64xf32>
}

// An elementwise exp (softmax's P = exp(W - m), the feature maps) is a long
// dependent chain per element: it gets as many elements as the register
// tile, in rows of one machine vector, so that one step computes 8 (AVX2) or
// 16 (AVX-512) independent vector exps rather than LLVM's one vector per loop
// iteration, which is bound by latency; machine-width rows need no splitting
// in LLVM's type legalization.
// AVX2-LABEL: func.func @exp_tile(
// AVX2:         scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX2:           scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX2:             math.exp %{{.*}} : vector<8x8xf32>
// AVX512-LABEL: func.func @exp_tile(
// AVX512:             math.exp %{{.*}} : vector<16x16xf32>
func.func @exp_tile(%d: tensor<64x64xf32>, %m: tensor<64xf32>) -> tensor<64x64xf32> {
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, #e], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<64xf32>) outs(%d : tensor<64x64xf32>) {
  ^bb0(%mx: f32, %x: f32):
    %s = arith.subf %x, %mx : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

// C[i, j] += A[k, i] B[k, j] (A^T B: kv-first's state phi(K_t)^T V_t) gets
// the same register tiles as A B (ten of 6x16 and one of 4x16 on AVX2),
// reading A's rows as they are: one vector.contract with lhs map (k, i), no
// multi-reduction. A 6-row tile reads its 4 x 6 block of A element by element
// (vector.from_elements of tensor.extract: 24 broadcasting loads once
// lowered; a vector<6xf32> read was widened and shuffled); the 4-row tile
// reads it as one vector per row k.
#at = affine_map<(i, j, k) -> (k, i)>
#bt = affine_map<(i, j, k) -> (k, j)>
#ct = affine_map<(i, j, k) -> (i, j)>
// AVX2-LABEL: func.func @tile_product_transposed_a(
// AVX2:         scf.for %{{.*}} = %c0 to %c60 step %c6
// AVX2:           scf.for
// AVX2:             scf.for %{{.*}} = %c0 to %c64 step %c4
// AVX2:               %[[A6:.+]] = tensor.extract_slice {{.*}} [4, 6] [1, 1] : tensor<64x60xf32> to tensor<4x6xf32>
// AVX2-COUNT-24:      tensor.extract %[[A6]]
// AVX2:               %[[LHS6:.+]] = vector.from_elements {{.*}} : vector<4x6xf32>
// AVX2:               vector.contract {{.*}} %[[LHS6]], {{.*}} : vector<4x6xf32>, vector<4x16xf32> into vector<6x16xf32>
// AVX2:         scf.for %{{.*}} = %c0 to %c4 step %c4
// AVX2:               vector.transfer_read {{.*}} : tensor<4x4xf32>, vector<4x4xf32>
// AVX2:               vector.contract {{.*}} : vector<4x4xf32>, vector<4x16xf32> into vector<4x16xf32>
// AVX2-NOT:     vector.multi_reduction
// AVX512-LABEL: func.func @tile_product_transposed_a(
// AVX512:               vector.contract {{.*}} : vector<4x8xf32>, vector<4x32xf32> into vector<8x32xf32>
func.func @tile_product_transposed_a(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.generic {indexing_maps = [#at, #bt, #ct], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// The map of a loop's last, partial tile (attn.partial_tile) runs once per
// loop: one vector of exp per iteration, not a register tile's worth of
// unrolled chains (compile time).
// AVX2-LABEL: func.func @partial_tile_exp(
// AVX2:         scf.for %{{.*}} = %c0 to %c64 step %c1
// AVX2:           scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX2:             math.exp %{{.*}} : vector<1x8xf32>
func.func @partial_tile_exp(%x: tensor<64x64xf32>, %d: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%d : tensor<64x64xf32>) attrs = {attn.partial_tile} {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// z[c] += sum_r A[r, c] (kv-first's normaliser of a key tile) is vectorized
// a register width of columns at a time over all rows, so that the sums stay
// in registers instead of being reloaded and stored for every row.
// AVX2-LABEL: func.func @column_sum(
// AVX2:         scf.for %{{.*}} = %c0 to %c64 step %c16
// AVX2:           vector.multi_reduction <add>, %{{.*}} [0] : vector<64x16xf32> to vector<16xf32>
func.func @column_sum(%a: tensor<64x64xf32>, %z: tensor<64xf32>) -> tensor<64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (c)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<64x64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// A 0-d elementwise exp has no loop to tile: it is left alone (its tile
// sizes were written before the start of an empty vector, and the op came
// out as ub.poison).
// AVX2-LABEL: func.func @zero_d_exp(
// AVX2:         linalg.generic {{.*}} iterator_types = []
// AVX2:           math.exp
// AVX2-NOT:     ub.poison
// AVX2:         return
func.func @zero_d_exp(%t: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%t : tensor<f32>) {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Rows that are not a whole number of register tiles (a static length of
// 10 queries) are whole tiles and one shorter tile of the rest: AVX2 one
// 6-row and one 4-row tile, AVX-512 one 8-row and one 2-row tile; rows
// fewer than a register tile are one tile of them all (3 rows: one 3x32
// tile, not three tiles of one row).
// AVX2-LABEL: func.func @rows_with_rest(
// AVX2:               vector.contract {{.*}} : vector<6x4xf32>, vector<4x16xf32> into vector<6x16xf32>
// AVX2:               vector.contract {{.*}} : vector<4x4xf32>, vector<4x16xf32> into vector<4x16xf32>
// AVX2-LABEL: func.func @three_rows(
// AVX2:               vector.contract {{.*}} : vector<3x4xf32>, vector<4x16xf32> into vector<3x16xf32>
// AVX512-LABEL: func.func @rows_with_rest(
// AVX512:               vector.contract {{.*}} : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32>
// AVX512:               vector.contract {{.*}} : vector<2x4xf32>, vector<4x32xf32> into vector<2x32xf32>
// AVX512-LABEL: func.func @three_rows(
// AVX512:               vector.contract {{.*}} : vector<3x4xf32>, vector<4x32xf32> into vector<3x32xf32>
func.func @rows_with_rest(%a: tensor<10x64xf32>, %b: tensor<64x64xf32>, %c: tensor<10x64xf32>) -> tensor<10x64xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<10x64xf32>, tensor<64x64xf32>) outs(%c : tensor<10x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<10x64xf32>
  return %0 : tensor<10x64xf32>
}
func.func @three_rows(%a: tensor<3x64xf32>, %b: tensor<64x64xf32>, %c: tensor<3x64xf32>) -> tensor<3x64xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<3x64xf32>, tensor<64x64xf32>) outs(%c : tensor<3x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x64xf32>
  return %0 : tensor<3x64xf32>
}

// S = Q K^T from zero (C = fill 0, then C += A B): the fill is fused into
// the loops over register tiles, so each 8x32 register tile's reduction
// starts from a zero vector (after subset hoisting: the carried value of
// the reduction loop) and nothing fills the whole 64x64 tile first. AVX2's
// 6-row tiles split the rows (not fused there: the split slices the fill).
// HOIST-LABEL: func.func @product_from_fill(
// HOIST:         linalg.fill
// AVX512-LABEL: func.func @product_from_fill(
// AVX512-NOT:    linalg.fill
// AVX512:        scf.for %{{.*}} = %c0 to %c64 step %c8
// AVX512:          scf.for %{{.*}} = %c0 to %c64 step %c32
// AVX512:            %[[ZERO:.+]] = vector.transfer_write %{{.*}}, %{{.*}}[%c0, %c0] {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// AVX512:            scf.for %{{.*}} = %c0 to %c64 step %c4 iter_args(%{{.*}} = %[[ZERO]])
// AVX512:              vector.contract {{.*}} : vector<8x4xf32>, vector<4x32xf32> into vector<8x32xf32>
// AVX512-NOT:    linalg.fill
func.func @product_from_fill(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
