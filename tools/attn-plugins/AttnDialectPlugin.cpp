//===- AttnDialectPlugin.cpp - The attn dialect as an mlir-opt plugin -----===//

#include "attn/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnDialect", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::attn::registerAllDialects(*registry);
          }};
}
