//===- MergeGPUModules.cpp - one gpu.module per spec ----------------------===//

#include "attn/Codegen/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNMERGEGPUMODULES
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

struct AttnMergeGPUModules
    : public attn::impl::AttnMergeGPUModulesBase<AttnMergeGPUModules> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Tensor-core kernels hold their accumulators and fragments in
    // registers: ptxas may use all 255 (with .maxntid 128 alone it aims at
    // 3 blocks per SM, 168 registers, and spilled the f16 D = 64 kernel).
    module.walk([&](gpu::GPUFuncOp func) {
      bool tensorCores =
          func.isKernel() &&
          func.walk([](NVVM::MmaOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
      if (tensorCores)
        func->setAttr(
            NVVM::NVVMDialect::getMaxnregAttrName(),
            IntegerAttr::get(IntegerType::get(&getContext(), 32), 255));
    });
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    gpu::GPUModuleOp target = gpuModules.front();
    SymbolTable targetSymbols(target);
    // (module, old name) -> new reference.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> moved;
    for (gpu::GPUModuleOp source : llvm::drop_begin(gpuModules)) {
      if (source.getTargetsAttr() != target.getTargetsAttr()) {
        source.emitOpError("has other targets than ")
            << target.getSymName() << " and cannot be merged into it";
        return signalPassFailure();
      }
      // Clashing names are changed in the source module first, where
      // SymbolTable::rename also updates the calls that use them.
      SymbolTable sourceSymbols(source);
      SmallVector<Operation *> ops;
      for (Operation &op : source.getBody()->without_terminator())
        ops.push_back(&op);
      for (Operation *op : ops) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        StringAttr newName = oldName;
        for (unsigned suffix = 0; targetSymbols.lookup(newName) ||
                                  (newName != oldName &&
                                   sourceSymbols.lookup(newName));
             ++suffix)
          newName = StringAttr::get(&getContext(),
                                    oldName.getValue() + "_" +
                                        std::to_string(suffix));
        if (newName != oldName &&
            failed(sourceSymbols.rename(op, newName))) {
          op->emitOpError("cannot be renamed to ") << newName;
          return signalPassFailure();
        }
        moved[{source.getSymNameAttr(), oldName}] = SymbolRefAttr::get(
            target.getSymNameAttr(), {FlatSymbolRefAttr::get(newName)});
      }
      for (Operation *op : ops) {
        op->remove();
        targetSymbols.insert(op);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it = moved.find(
          {kernel.getRootReference(), kernel.getLeafReference()});
      if (it != moved.end())
        launch.setKernelAttr(it->second);
    });
    for (gpu::GPUModuleOp source : llvm::drop_begin(gpuModules))
      source.erase();
  }
};

} // namespace
