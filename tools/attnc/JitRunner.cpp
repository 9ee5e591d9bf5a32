//===- JitRunner.cpp - Compile and call attn code in process --------------===//

#include "JitRunner.h"

#include "mlir/ExecutionEngine/OptUtils.h"
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

  if (llvm::Error error =
          runTargetPipeline(module, options.forceOrder, options.codegen))
    return std::move(error);

  auto hostBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostBuilder)
    return hostBuilder.takeError();
  auto targetMachine = hostBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  // The transformer is a function_ref: it must outlive create().
  auto transformer = mlir::makeOptimizingTransformer(
      /*optLevel=*/3, /*sizeLevel=*/0, targetMachine->get());

  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  llvm::StringRef libs[] = {kOpenMPRuntime, kRunnerUtils};
  if (!options.codegen.gpu || options.codegen.emulate) {
    for (const char *library : {kOpenMPRuntime, kRunnerUtils})
      if (!llvm::sys::fs::exists(library))
        return llvm::createStringError(
            "%s is missing (scripts/install-deps.sh installs it)", library);
    engineOptions.sharedLibPaths = libs;
  }
  // GPU code: the mgpu* functions come from the runtime attnc links, which
  // the engine finds among the process's symbols.
  auto engine = mlir::ExecutionEngine::create(module, engineOptions);
  if (engine && options.codegen.gpu && !options.codegen.emulate)
    // Runs the global constructor that loads the kernels' module.
    (*engine)->initialize();
  return engine;
}

namespace {
/// A ranked memref descriptor laid out as MLIR's C interface expects:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
struct Descriptor {
  std::vector<int64_t> words;

  Descriptor(void *data, const std::vector<int64_t> &shape) {
    size_t rank = shape.size();
    words.resize(3 + 2 * rank);
    words[0] = reinterpret_cast<int64_t>(data);
    words[1] = reinterpret_cast<int64_t>(data);
    words[2] = 0;
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      words[3 + d] = shape[d];
      words[3 + rank + d] = stride;
      stride *= shape[d];
    }
  }
};
} // namespace

llvm::Error attnc::call(mlir::ExecutionEngine &engine, const std::string &name,
                        const std::vector<const attn::npy::Array *> &inputs,
                        attn::npy::Array &out) {
  std::vector<void *> buffers;
  std::vector<std::vector<int64_t>> shapes;
  for (const attn::npy::Array *input : inputs) {
    buffers.push_back(const_cast<float *>(input->data.data()));
    shapes.push_back(input->shape);
  }
  buffers.push_back(out.data.data());
  shapes.push_back(out.shape);
  return callBuffers(engine, name, buffers, shapes);
}

llvm::Error
attnc::callBuffers(mlir::ExecutionEngine &engine, const std::string &name,
                   const std::vector<void *> &buffers,
                   const std::vector<std::vector<int64_t>> &shapes) {
  std::vector<Descriptor> descriptors;
  for (size_t i = 0; i < buffers.size(); ++i)
    descriptors.emplace_back(buffers[i], shapes[i]);
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
