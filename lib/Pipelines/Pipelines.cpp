//===- Pipelines.cpp - attn's lowering pipelines --------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Codegen/CPU/CpuTarget.h"
#include "attn/Codegen/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

/// attn-check-forwarded-attributes, attn-select-order, attn-destination-abi
/// and convert-attn-to-linalg, with the clean-ups after it; returns the
/// function pass manager so that a target can add its tensor-level passes.
static OpPassManager &addLinalgLowering(OpPassManager &pm,
                                        const AttnSelectOrderOptions &select,
                                        int64_t tileSize, bool staticTiles,
                                        int64_t stateCacheBytes = 0) {
  // First, while every op is where the input put it.
  pm.addPass(createAttnCheckForwardedAttributes());
  pm.addPass(createAttnSelectOrder(select));
  pm.addPass(createAttnDestinationAbi());
  ConvertAttnToLinalgOptions convert;
  convert.tileSize = tileSize;
  convert.staticTiles = staticTiles;
  convert.stateCacheBytes = stateCacheBytes;
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createConvertAttnToLinalg(convert));
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
  return func;
}

/// One-shot bufferization with identity-layout function boundaries.
/// \p inPlaceTiles: a tile computed into a tensor.empty and inserted into
/// the output is computed in place in the output instead (no tile buffer
/// and copy). The GPU mapping needs every buffer a branch yields allocated
/// in that branch, which this breaks.
static void addBufferization(OpPassManager &pm, bool inPlaceTiles) {
  if (inPlaceTiles) {
    pm.addNestedPass<func::FuncOp>(createAttnSinkDestinationStores());
    pm.addPass(bufferization::createEmptyTensorEliminationPass());
  }
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A fresh tile yielded by both branches of an scf.if keeps an identity
  // layout: a fully dynamic one (the default) makes every vector read of it
  // a loop of scalar loads.
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Loops, vectors and memrefs of host code to the LLVM dialect, then the
/// check that nothing else is left.
static void addHostLoweringToLLVM(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createAttnExpandBF16Conversions());
  pm.addNestedPass<func::FuncOp>(createAttnLowerAllocaScopes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAttnCheckAllocations());
  pm.addPass(createAttnCacheWorkspaces());
  pm.addPass(createAttnCheckLowered());
}

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm,
                                          const LowerToLLVMOptions &options) {
  AttnSelectOrderOptions select;
  select.target = options.target;
  select.force = options.force;
  // The CPU's L1 sizes kv-first's state tiles; a CPU that does not resolve
  // is reported by attn-tile-and-vectorize.
  std::string unresolved;
  std::optional<CpuTarget> cpu =
      resolveCpuTarget(options.cpu, options.cpuFeatures, unresolved);
  OpPassManager &func =
      addLinalgLowering(pm, select, options.tileSize, /*staticTiles=*/false,
                        cpu ? cpu->l1dBytes : 0);
  if (options.vectorize) {
    AttnTileAndVectorizeOptions tiles;
    tiles.cpu = options.cpu;
    tiles.cpuFeatures = options.cpuFeatures;
    func.addPass(createAttnTileAndVectorize(tiles));
    func.addPass(createCanonicalizerPass());
    func.addPass(createCSEPass());
    func.addPass(createLoopInvariantSubsetHoistingPass());
    func.addPass(createCanonicalizerPass());
  }
  addBufferization(pm, /*inPlaceTiles=*/true);
  pm.addNestedPass<func::FuncOp>(createAttnPromoteTilesToStack());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);

  OpPassManager &loops = pm.nest<func::FuncOp>();
  if (options.parallel)
    loops.addPass(createForallToParallelLoopPass());
  else
    loops.addPass(createForallToForLoopPass());
  loops.addPass(createAttnHoistAllocasFromLoops());
  loops.addPass(createAttnStridedCopiesToLinalg());
  loops.addPass(createAttnPrefetchNextTiles());
  loops.addPass(createConvertLinalgToLoopsPass());
  if (options.vectorize) {
    loops.addPass(createAttnApproximateMath());
    loops.addPass(vector::createLowerVectorMultiReductionPass());
    VectorTransferToSCFOptions transfers;
    transfers.enableFullUnroll();
    loops.addPass(createConvertVectorToSCFPass(transfers));
  }
  if (options.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createAttnBalanceParallelLoops());
    // Inlines the alloca scopes it made (they hold no alloca) before the
    // scf-to-cf lowering splits their bodies into blocks.
    pm.addPass(createCanonicalizerPass());
  }
  addHostLoweringToLLVM(pm);
}

void mlir::attn::buildLowerToNVVMPipeline(OpPassManager &pm,
                                           const LowerToNVVMOptions &options) {
  AttnSelectOrderOptions select;
  select.target = options.target;
  select.force = options.force;
  select.chunk = options.chunk;
  // Softmax terms over bf16 / f16 inputs (and f32 ones under tf32):
  // tensor-core kernels of their own.
  AttnMmaAttentionOptions mma;
  mma.precision = options.precision;
  pm.nest<func::FuncOp>().addPass(createAttnMmaAttention(mma));
  addLinalgLowering(pm, select, options.tileSize, /*staticTiles=*/true);
  addBufferization(pm, /*inPlaceTiles=*/false);

  AttnMapToGPUOptions map;
  map.threads = options.threads;
  map.precision = options.precision;
  OpPassManager &mapping = pm.nest<func::FuncOp>();
  mapping.addPass(createAttnMapToGPU(map));
  mapping.addPass(createCanonicalizerPass());
  mapping.addPass(createCSEPass());

  // Polynomials and arithmetic instead of libdevice calls: the PTX must not
  // depend on whether the CUDA toolkit's libdevice is found at compile time
  // (and the emulation computes with the kernels' own arithmetic).
  AttnApproximateMathOptions approximate;
  approximate.arithOnly = true;
  if (options.emulate) {
    pm.addPass(createAttnEmulateGPU());
    OpPassManager &host = pm.nest<func::FuncOp>();
    host.addPass(createAttnApproximateMath(approximate));
    host.addPass(createCanonicalizerPass());
    addHostLoweringToLLVM(pm);
    return;
  }
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAttnMergeGPUModules());
  if (!options.serialize)
    return;

  pm.nest<func::FuncOp>().addPass(createGpuAsyncRegionPass());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.chip;
  attach.features = options.features;
  attach.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createAttnApproximateMath(approximate));
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  switch (options.format) {
  case BinaryFormat::Isa:
    binary.compilationTarget = "isa";
    break;
  case BinaryFormat::Bin:
    binary.compilationTarget = "bin";
    break;
  case BinaryFormat::Fatbin:
    binary.compilationTarget = "fatbin";
    break;
  }
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createAttnCheckLowered());
}

void mlir::attn::registerPipelines() {
  PassPipelineRegistration<LowerToLLVMOptions>(
      "attn-lower-to-llvm",
      "Lower attn to the LLVM dialect (tiled, bufferized, OpenMP-parallel)",
      buildLowerToLLVMPipeline);
  PassPipelineRegistration<LowerToNVVMOptions>(
      "attn-lower-to-nvvm",
      "Lower attn to GPU kernels in PTX (NVVM) and host code calling the "
      "mgpu* runtime",
      buildLowerToNVVMPipeline);
}
