// UPSTREAM (MLIR 22, not attn): a linalg.fill into a vector is rejected at an
// unknown location: the body the parser builds for the named op has a
// linalg.yield without a location, and the verifier reports the type
// mismatch there ('<unknown>:0: error: 'linalg.yield' op type of yield
// operand 1 ...'). Found by attn-mlir-fuzzer (seed 100, mutant 565, a
// memref turned into a vector in test/Codegen/GPU/attn-map-to-gpu-errors.mlir).

func.func @fill_vector(%a: f32, %v: vector<8xf32>) {
  linalg.fill ins(%a : f32) outs(%v : vector<8xf32>)
  return
}
