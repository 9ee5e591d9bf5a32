//===- InitAll.cpp - Register the attn dialect and passes -----------------===//

#include "attn/InitAll.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

void mlir::attn::registerAllDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, func::FuncDialect, tensor::TensorDialect>();
}

void mlir::attn::registerAllPasses() { registerAttnPasses(); }
