//===- Pipelines.h - attn's lowering pipelines ------------------*- C++ -*-===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Codegen/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace attn {

/// What attn-lower-to-nvvm embeds in the host code.
enum class BinaryFormat { Isa, Bin, Fatbin };

/// The values of the pipelines' `force` option.
inline llvm::cl::ValuesClass forceOrderValues() {
  return llvm::cl::values(
      clEnumValN(Order::Auto, "auto", "the cost model's choice"),
      clEnumValN(Order::QkFirst, "qk_first", "(phi(Q) phi(K)^T) V"),
      clEnumValN(Order::KvFirst, "kv_first", "phi(Q) (phi(K)^T V)"));
}

struct LowerToLLVMOptions : public PassPipelineOptions<LowerToLLVMOptions> {
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Cost-model target for auto orders: cpu, nvptx or a "
                     "file"),
      llvm::cl::init("cpu")};
  PassOptions::Option<Order> force{
      *this, "force", llvm::cl::desc("Force every auto order"),
      llvm::cl::init(Order::Auto), forceOrderValues()};
  PassOptions::Option<int64_t> tileSize{
      *this, "tile-size", llvm::cl::desc("Query/key tile of qk-first"),
      llvm::cl::init(64)};
  PassOptions::Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("CPU the register tiles are chosen for: native, "
                     "x86-64-v3, x86-64-v4 or an LLVM CPU name"),
      llvm::cl::init("native")};
  PassOptions::Option<std::string> cpuFeatures{
      *this, "cpu-features",
      llvm::cl::desc("Extra CPU features, as llc -mattr takes them"),
      llvm::cl::init("")};
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

struct LowerToNVVMOptions : public PassPipelineOptions<LowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture: sm_80 or sm_90"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (the PTX ISA version); sm_90 needs at "
                     "least +ptx78"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<BinaryFormat> format{
      *this, "format", llvm::cl::desc("What gpu-module-to-binary embeds"),
      llvm::cl::init(BinaryFormat::Isa),
      llvm::cl::values(
          clEnumValN(BinaryFormat::Isa, "isa",
                     "PTX text, compiled by the driver at load time"),
          clEnumValN(BinaryFormat::Bin, "bin", "cubin, needs ptxas"),
          clEnumValN(BinaryFormat::Fatbin, "fatbin",
                     "a fat binary, needs ptxas and fatbinary"))};
  PassOptions::Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Cost-model target for auto orders: nvptx, cpu or a "
                     "file"),
      llvm::cl::init("nvptx")};
  PassOptions::Option<Order> force{
      *this, "force", llvm::cl::desc("Force every auto order"),
      llvm::cl::init(Order::Auto), forceOrderValues()};
  PassOptions::Option<int64_t> tileSize{
      *this, "tile-size",
      llvm::cl::desc("Query tile of qk-first: one thread block's rows"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> chunk{
      *this, "chunk",
      llvm::cl::desc("Chunk (key tile) of every auto-chunk term; 0 takes the "
                     "cost model's, which may not fit in shared memory"),
      llvm::cl::init(32)};
  PassOptions::Option<GpuPrecision> precision{
      *this, "precision",
      llvm::cl::desc("How f32 inputs multiply: f32 on the CUDA cores, or "
                     "tf32 on the tensor cores (bf16 and f16 inputs always "
                     "use the tensor cores)"),
      llvm::cl::init(GpuPrecision::F32), gpuPrecisionValues()};
  PassOptions::Option<int64_t> threads{
      *this, "threads", llvm::cl::desc("Threads per block"),
      llvm::cl::init(128)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Testing: after attn-map-to-gpu, run the launches on "
                     "the host (attn-emulate-gpu) and lower to the LLVM "
                     "dialect for the CPU"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> serialize{
      *this, "serialize",
      llvm::cl::desc("Translate the kernels to PTX/cubin and lower the host "
                     "code to the LLVM dialect (off: stop at the gpu and "
                     "nvvm dialects)"),
      llvm::cl::init(true)};
};

/// attn-lower-to-nvvm: select orders for the GPU, lower attn to tiled
/// linalg, bufferize, map every forall iteration onto a thread block
/// (attn-map-to-gpu), outline the kernels into one gpu.module, convert them
/// to NVVM and serialise them (gpu-module-to-binary); the host code, which
/// takes device pointers, becomes LLVM dialect calling the mgpu* runtime.
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers attn-lower-to-llvm and attn-lower-to-nvvm with the global pass pipeline registry.
void registerPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
