//===- InitAll.cpp - Register the attn dialect and passes -----------------===//

#include "attn/InitAll.h"

#include "attn/Codegen/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::attn::registerAllDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, func::FuncDialect, tensor::TensorDialect>();
}

void mlir::attn::registerAllPasses() {
  registerAttnPasses();
  registerAttnConversionPasses();
  registerAttnCodegenPasses();
  registerPipelines();
}

void mlir::attn::registerCodegenDialects(DialectRegistry &registry) {
  mlir::attn::registerAllDialects(registry);
  // The lowering pipelines go through most upstream dialects, and need their
  // external interface models (bufferization, convert-to-llvm, ...).
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}
