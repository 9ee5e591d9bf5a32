//===- Pipelines.h - attn's lowering pipelines ------------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace attn {

struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Cost-model target for auto orders: cpu, nvptx or a "
                     "file"),
      llvm::cl::init("cpu")};
  PassOptions::Option<std::string> force{
      *this, "force",
      llvm::cl::desc("Force every auto order: qk_first or kv_first"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> tileSize{
      *this, "tile-size", llvm::cl::desc("Query/key tile of qk-first"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Register-tile and vectorize the static tiles "
                     "(experimental)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run scf.forall loops on OpenMP threads"),
      llvm::cl::init(true)};
};

/// attn-lower-to-llvm: select orders, lower attn to tiled linalg, bufferize,
/// parallelise with OpenMP, lower to the LLVM dialect, and check that
/// nothing else is left. Public functions get the memref calling convention
/// of attn-destination-abi.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options);

/// Registers attn-lower-to-llvm with the global pass pipeline registry.
void registerPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
