// UPSTREAM (MLIR 22, not attn): `attn-opt FILE` (any tool that verifies it) crashes
// in the verifier. GPUDialect::verifyOperationAttribute checks the
// gpu.container_module of the module before the ops inside it are verified,
// and reads each gpu.launch_func's kernel operands through its
// operandSegmentSizes, which here claim a million operands (segfault in
// LaunchFuncOp::getKernelOperand). Found by attn-mlir-fuzzer (seed 100,
// mutant 1660 of test/Codegen/GPU/attn-merge-gpu-modules.mlir).

module attributes {gpu.container_module} {
  func.func @host(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %m) <{kernel = @kernels::@kernel, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1000000, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<8xf32>) -> ()
    return
  }
  gpu.module @kernels {
    gpu.func @kernel(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
}
