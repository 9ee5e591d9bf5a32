// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-check-forwarded-attributes

// The lowering to the LLVM dialect hands the discardable attributes of
// func.func and func.call to the builders of llvm.func and llvm.call, which
// read those named like a property as that property; one of another kind
// crashed attn-lower-to-llvm and attn-lower-to-nvvm (found by
// attn-mlir-fuzzer). Attributes of the right kind, and others, pass.

func.func private @ext(f32) -> f32
func.func @ok(%x: f32) -> f32 attributes {passthrough = ["noinline"], llvm.emit_c_interface, attn.tag = 1 : i64} {
  %0 = func.call @ext(%x) {attn.tag = 2 : i64, CConv = #llvm.cconv<fastcc>} : (f32) -> f32
  return %0 : f32
}

// -----

func.func private @ext(f32) -> f32
func.func @call_cconv(%x: f32) -> f32 {
  // expected-error@+1 {{'func.call' op has an attribute that its lowering to 'llvm.call' would read as a property of another kind: Invalid attribute `CConv` in property conversion: 1 : i64}}
  %0 = func.call @ext(%x) {CConv = 1 : i64} : (f32) -> f32
  return %0 : f32
}

// -----

func.func private @ext(f32) -> f32
func.func @call_segments(%x: f32) -> f32 {
  // expected-error@+1 {{'func.call' op has an attribute that its lowering to 'llvm.call' would read as a property of another kind}}
  %0 = func.call @ext(%x) {operandSegmentSizes = 9223372036854775807 : i64} : (f32) -> f32
  return %0 : f32
}

// -----

func.func @call_indirect(%f: (f32) -> f32, %x: f32) -> f32 {
  // expected-error@+1 {{'func.call_indirect' op has an attribute that its lowering to 'llvm.call' would read as a property of another kind: Invalid attribute `fastmathFlags` in property conversion: 1 : i64}}
  %0 = func.call_indirect %f(%x) {fastmathFlags = 1 : i64} : (f32) -> f32
  return %0 : f32
}

// -----

// expected-error@+1 {{'func.func' op has an attribute that its lowering to 'llvm.func' would read as a property of another kind: Invalid attribute `linkage` in property conversion: 1 : i64}}
func.func @func_linkage() attributes {linkage = 1 : i64} {
  return
}

// -----

// Kernels are lowered to llvm.func as well, functions in gpu.modules too.
gpu.module @kernels {
  // expected-error@+1 {{'gpu.func' op has an attribute that its lowering to 'llvm.func' would read as a property of another kind: Invalid attribute `CConv` in property conversion: "x"}}
  gpu.func @kernel() kernel attributes {CConv = "x"} {
    gpu.return
  }
}
