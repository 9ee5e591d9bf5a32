//===- MLIRGen.h - Lower a checked .attn spec to the attn dialect -*- C++ -*-===//

#ifndef ATTN_FRONTEND_MLIRGEN_H
#define ATTN_FRONTEND_MLIRGEN_H

#include "attn/Frontend/Parser.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace attn {
namespace frontend {

/// Emits `func.func @<spec name>` taking the inputs in declaration order
/// (each argument carries `attn.input = "<name>"`) and returning O. A `dim`
/// found in \p sizes becomes a static size, any other a dynamic one. Every
/// attn.term is located at its `term` keyword, named after the term, so that
/// the dialect verifier's messages point into the spec. The module is not
/// verified here.
mlir::OwningOpRef<mlir::ModuleOp> generateMLIR(mlir::MLIRContext &context,
                                               const Spec &spec,
                                               const SourceFile &source,
                                               const SizeBindings &sizes);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_MLIRGEN_H
