// RUN: attn-opt %s --attn-tile-and-vectorize | FileCheck %s
// RUN: attn-opt %s --attn-tile-and-vectorize=rows=4 | FileCheck %s --check-prefix=ROWS4

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
#e = affine_map<(i, j) -> (i, j)>

// A static tile product becomes 8x32 register tiles, each one
// vector.contract over the whole reduction.
// CHECK-LABEL: func.func @tile_product(
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             vector.contract {{.*}} : vector<8x64xf32>, vector<64x32xf32> into vector<8x32xf32>
// CHECK-NOT:     linalg.generic
// ROWS4-LABEL: func.func @tile_product(
// ROWS4:             vector.contract {{.*}} : vector<4x64xf32>, vector<64x32xf32> into vector<4x32xf32>
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

// Dynamic ranges and elementwise steps are left to the loop lowering.
// CHECK-LABEL: func.func @dynamic_and_elementwise(
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK:         linalg.generic
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
    %e = math.exp %x : f32
    linalg.yield %e : f32
  } -> tensor<64x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<64x64xf32>
}
