//===- Passes.h - attn code generation passes -------------------*- C++ -*-===//

#ifndef ATTN_CODEGEN_PASSES_H
#define ATTN_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

/// How the GPU kernels multiply f32 inputs (the `precision` of
/// attn-mma-attention and attn-map-to-gpu): in f32 on the CUDA cores, or on
/// the tensor cores with the operands rounded to tf32 (10 mantissa bits).
/// bf16 and f16 inputs always go to the tensor cores.
enum class GpuPrecision { F32, TF32 };

/// The values of the `precision` options.
inline llvm::cl::ValuesClass gpuPrecisionValues() {
  return llvm::cl::values(
      clEnumValN(GpuPrecision::F32, "f32",
                 "f32 inputs in f32 on the CUDA cores (exact to f32)"),
      clEnumValN(GpuPrecision::TF32, "tf32",
                 "f32 inputs on the tensor cores, rounded to tf32"));
}

#define GEN_PASS_DECL
#include "attn/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Codegen/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_PASSES_H
