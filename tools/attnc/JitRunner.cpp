//===- JitRunner.cpp - Compile and call attn code in process --------------===//

#include "JitRunner.h"

#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>

using namespace attnc;

/// The OpenMP runtime the generated parallel loops call into, and MLIR's
/// C runner utilities (memrefCopy for strided copies).
static constexpr const char *kOpenMPRuntime = "/usr/lib/llvm-22/lib/libomp.so";
static constexpr const char *kRunnerUtils =
    "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so";

llvm::Expected<std::unique_ptr<mlir::ExecutionEngine>>
attnc::compile(mlir::ModuleOp module, const JitOptions &options) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  if (options.threads > 0)
    // libomp reads it when it starts, which is when the engine loads it.
    setenv("OMP_NUM_THREADS", std::to_string(options.threads).c_str(), 1);

  mlir::PassManager pm(module.getContext());
  mlir::attn::LowerToLLVMOptions lower;
  lower.target = options.target;
  lower.force = options.forceOrder;
  mlir::attn::buildLowerToLLVMPipeline(pm, lower);
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("lowering to LLVM failed");

  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return hostBuilder.takeError();
  auto targetMachine = hostBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  // The transformer is a function_ref: it must outlive create().
  auto transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/3, /*sizeLevel=*/0, targetMachine->get());

  for (const char *library : {kOpenMPRuntime, kRunnerUtils})
    if (!llvm::sys::fs::exists(library))
      return llvm::createStringError(
          "%s is missing (scripts/install-deps.sh installs it)", library);
  llvm::StringRef libs[] = {kOpenMPRuntime, kRunnerUtils};
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  engineOptions.sharedLibPaths = libs;
  return mlir::ExecutionEngine::create(module, engineOptions);
}

namespace {
/// A ranked memref descriptor laid out as MLIR's C interface expects:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
struct Descriptor {
  std::vector<int64_t> words;

  explicit Descriptor(const attn::npy::Array &array) {
    size_t rank = array.shape.size();
    words.resize(3 + 2 * rank);
    auto *data = const_cast<float *>(array.data.data());
    words[0] = reinterpret_cast<int64_t>(data);
    words[1] = reinterpret_cast<int64_t>(data);
    words[2] = 0;
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      words[3 + d] = array.shape[d];
      words[3 + rank + d] = stride;
      stride *= array.shape[d];
    }
  }
};
} // namespace

llvm::Error attnc::call(mlir::ExecutionEngine &engine, const std::string &name,
                        const std::vector<const attn::npy::Array *> &inputs,
                        attn::npy::Array &out) {
  std::vector<Descriptor> descriptors;
  for (const attn::npy::Array *input : inputs)
    descriptors.emplace_back(*input);
  descriptors.emplace_back(out);
  // The packed interface takes, per argument, a pointer to its value; the
  // C-interface function's arguments are pointers to descriptors.
  std::vector<void *> pointers;
  for (Descriptor &descriptor : descriptors)
    pointers.push_back(descriptor.words.data());
  llvm::SmallVector<void *> args;
  for (void *&pointer : pointers)
    args.push_back(&pointer);
  return engine.invokePacked("_mlir_ciface_" + name, args);
}
