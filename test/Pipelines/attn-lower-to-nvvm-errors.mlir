// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-lower-to-nvvm

// Inputs attn-lower-to-nvvm rejects with a diagnostic at the op (each once
// crashed it; found by attn-mlir-fuzzer, see test/Fuzz/regressions-mlir).

!t = tensor<1x2x16x8xf32>

// An attn.term inside a linalg.generic body is lowered there; attn-map-to-gpu
// cannot place the linalg ops it becomes (it lowered the outer op to loops,
// freed the inner ones with its body and then mapped them:
// heap-use-after-free).
func.func @term_in_linalg_body(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term softmax (%q, %k, %v) : !t, !t, !t -> !t
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%o : !t) {
  ^bb0(%a: f32):
    // expected-error@+1 {{op is inside the body of the 'linalg.generic' op; attn-map-to-gpu maps linalg ops and scf.forall loops only outside linalg bodies and kernels}}
    %x = attn.term softmax (%q, %k, %v) mask causal : !t, !t, !t -> !t
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %e = tensor.extract %x[%i0, %i1, %i2, %i3] : !t
    linalg.yield %e : f32
  } -> !t
  return %g : !t
}

// -----

!t = tensor<1x2x16x8xf32>

// An attn.term inside a gpu.launch of the input: its loops would become
// launches inside a kernel. (Private: attn-destination-abi takes only
// tensors.)
func.func private @term_in_launch(%q: !t, %k: !t, %v: !t, %out: memref<1x2x16x8xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{op is inside the 'gpu.launch' op; attn-map-to-gpu maps linalg ops and scf.forall loops only outside linalg bodies and kernels}}
    %x = attn.term kernel elu1 (%q, %k, %v) : !t, !t, !t -> !t
    bufferization.materialize_in_destination %x in restrict writable %out : (!t, memref<1x2x16x8xf32>) -> ()
    gpu.terminator
  }
  return
}
