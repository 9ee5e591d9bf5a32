//===- InitAll.h - Register the attn dialect and passes ---------*- C++ -*-===//

#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace attn {
/// Adds the attn dialect and the dialects its passes produce to \p registry.
void registerAllDialects(DialectRegistry &registry);
/// registerAllDialects, plus every upstream dialect, extension and LLVM IR
/// translation that code generation goes through (for drivers like attnc).
void registerCodegenDialects(DialectRegistry &registry);
/// Registers every attn pass and pipeline with the global pass registry.
void registerAllPasses();
} // namespace attn
} // namespace mlir

#endif // ATTN_INITALL_H
