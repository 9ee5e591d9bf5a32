//===- JitRunner.h - Compile and call attn code in process ------*- C++ -*-===//

#ifndef ATTNC_JITRUNNER_H
#define ATTNC_JITRUNNER_H

#include "attn/Support/Npy.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace attnc {

struct JitOptions {
  std::string target = "cpu";
  std::string forceOrder; ///< "", qk_first or kv_first
  int64_t threads = 0;    ///< 0: every core
};

/// Lowers \p module (attn dialect, static shapes) with attn-lower-to-llvm
/// and JIT-compiles it for the host CPU at -O3.
llvm::Expected<std::unique_ptr<mlir::ExecutionEngine>>
compile(mlir::ModuleOp module, const JitOptions &options);

/// Calls the compiled function \p name (attn-destination-abi convention:
/// every input, then the output) on dense f32 arrays; \p out must already
/// have its shape and storage.
llvm::Error call(mlir::ExecutionEngine &engine, const std::string &name,
                 const std::vector<const attn::npy::Array *> &inputs,
                 attn::npy::Array &out);

} // namespace attnc

#endif // ATTNC_JITRUNNER_H
