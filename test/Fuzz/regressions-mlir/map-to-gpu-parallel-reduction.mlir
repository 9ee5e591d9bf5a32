// attn-lower-to-nvvm: attn-map-to-gpu spread an scf.parallel with a
// reduction over the threads of a block and erased it while its result was
// still used; printing the memref.store that used it (in the verifier's
// diagnostic) crashed. Now: an error at the loop.

func.func private @parallel_reduction(%out: memref<4xf32>, %in: memref<4x8xf32>) {
  scf.forall (%i) in (4) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
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
