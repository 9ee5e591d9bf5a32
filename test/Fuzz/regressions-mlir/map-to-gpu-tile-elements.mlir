// attn-lower-to-nvvm crashed in attn-map-to-gpu on a thread-block tile of
// index (or vector, complex) elements: getElementTypeBitWidth() of one is
// undefined. Now: an error at the allocation. Also a tile whose byte size
// overflows int64.

func.func private @index_tile(%out: memref<4xindex>) {
  scf.forall (%i) in (4) {
    %tile = memref.alloc() : memref<4xindex>
    %c0 = arith.constant 0 : index
    memref.store %i, %tile[%c0] : memref<4xindex>
    %x = memref.load %tile[%c0] : memref<4xindex>
    memref.store %x, %out[%i] : memref<4xindex>
  }
  return
}

// -----

func.func private @complex_tile(%out: memref<4xcomplex<f32>>) {
  scf.forall (%i) in (4) {
    %tile = memref.alloc() : memref<4xcomplex<f32>>
    %c0 = arith.constant 0 : index
    %x = memref.load %tile[%c0] : memref<4xcomplex<f32>>
    memref.store %x, %out[%i] : memref<4xcomplex<f32>>
  }
  return
}

// -----

func.func private @huge_tile(%out: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %tile = memref.alloc() : memref<4611686018427387904x2xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %tile[%c0, %c0] : memref<4611686018427387904x2xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  return
}
