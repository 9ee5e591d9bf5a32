//===- JitRunner.h - Compile and call attn code in process ------*- C++ -*-===//

#ifndef ATTNC_JITRUNNER_H
#define ATTNC_JITRUNNER_H

#include "Emit.h"

#include "attn/Support/Npy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace attnc {

struct JitOptions {
  std::string forceOrder; ///< "", qk_first or kv_first
  int64_t threads = 0;    ///< 0: every core
  /// For the GPU the kernels are embedded as PTX and the host code calls
  /// runtime/'s mgpu* functions, which attnc links; the function then takes
  /// device pointers (unless the kernels are emulated on the host).
  CodegenTarget codegen;
};

/// Lowers \p module (attn dialect, static shapes) with runTargetPipeline
/// for options.codegen and JIT-compiles it for the host CPU at -O3; the GPU
/// kernels are loaded when this returns.
llvm::Expected<std::unique_ptr<mlir::ExecutionEngine>>
compile(mlir::ModuleOp module, const JitOptions &options);

/// Calls the compiled function \p name (attn-destination-abi convention:
/// every input, then the output) on dense f32 arrays; \p out must already
/// have its shape and storage.
llvm::Error call(mlir::ExecutionEngine &engine, const std::string &name,
                 const std::vector<const attn::npy::Array *> &inputs,
                 attn::npy::Array &out);

/// Like call(), on dense row-major f32 buffers given by address and shape
/// (device pointers for code compiled with JitOptions::gpu); the last one
/// is the output.
llvm::Error callBuffers(mlir::ExecutionEngine &engine, const std::string &name,
                        const std::vector<void *> &buffers,
                        const std::vector<std::vector<int64_t>> &shapes);

} // namespace attnc

#endif // ATTNC_JITRUNNER_H
