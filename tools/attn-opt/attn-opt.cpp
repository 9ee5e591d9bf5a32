//===- attn-opt.cpp - mlir-opt with the attn dialect and passes -----------===//
//
// Every upstream dialect and pass, plus attn's, so that attn IR can be mixed
// with anything a pipeline around it produces.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllPasses();

  mlir::DialectRegistry registry;
  // Everything the lowering pipelines need, including the LLVM IR
  // translations that gpu-module-to-binary uses to serialise kernels.
  mlir::attn::registerCodegenDialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attn optimizer driver\n", registry));
}
