//===- Compiler.h - attn as a library ---------------------------*- C++ -*-===//
//
// The compiler behind attnc, the C API (include/attn-c) and the Python
// package: one options struct, one object that owns the MLIRContext and the
// diagnostics, and the stages as public functions (as CIRCT's Firtool):
//
//   spec file/text ─loadSpec─▶ Spec ─generateModule─▶ verified attn module
//     ─lowerToLinalg─▶ linalg                      (--emit=linalg)
//     ─lowerToGPUBinary─▶ PTX / cubin               (--emit=ptx|cubin)
//     ─compileObject─▶ LLVM IR, object + entry ABI  (--emit=llvm|obj, JIT)
//     ─loadKernel─▶ Kernel (callable in process)    (attnc run, C API)
//   Spec ─report─▶ the cost model's reasoning       (attnc report)
//
// Every message a user can cause is written to the diagnostic stream as
// attnc prints it: `file:line:col: error: ...` with the source line for
// anything located in the spec, `<tool>: error: ...` otherwise. Functions
// that fail return false, failure() or null after writing their message.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_COMPILER_H
#define ATTN_COMPILER_COMPILER_H

#include "attn/Codegen/CPU/CpuTarget.h"
#include "attn/Frontend/Parser.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Target/CHeader/EntryAbi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace attn {
namespace compiler {

class Kernel;

/// Where the generated code runs.
enum class Target { CPU, NVPTX };
/// The association order forced on every `order auto` term.
enum class ForceOrder { Auto, QkFirst, KvFirst, Recurrent };

/// The GPU architectures the NVPTX target accepts: the one list.
llvm::ArrayRef<const char *> supportedChips();

/// Registers the host's LLVM target once per process (code generation and
/// the JIT both need it).
void initializeNativeTarget();

/// "qk_first", "kv_first" or "" (auto): the cache key's spelling.
const char *toString(ForceOrder force);

struct CompilerOptions {
  Target target = Target::CPU;
  /// The GPU of Target::NVPTX.
  std::string chip = "sm_90";
  std::string ptxFeatures = "+ptx80";
  ForceOrder force = ForceOrder::Auto;
  /// The CPU the code is compiled for (attn/Codegen/CPU/CpuTarget.h):
  /// native, x86-64-v3, x86-64-v4 or an LLVM CPU name, with extra
  /// features `+a,-b`.
  std::string cpu = "native";
  std::string cpuFeatures;
  /// Threads of the compiled CPU code; 0: every core.
  int64_t threads = 0;
  /// The cost model's numbers for `order auto` terms: cpu, nvptx (the
  /// built-in ones) or a target description file; "" for the default
  /// (defaultCostTarget in attn/Compiler/Calibrate.h: this machine's
  /// calibration when there is one).
  std::string costTarget;
  /// NVPTX: run the GPU kernels on the host (attn-emulate-gpu).
  bool emulateGpu = false;
  /// NVPTX: how f32 inputs multiply (f32 on the CUDA cores, or tf32 on the
  /// tensor cores: the softmax kernel and the blocks' tile products).
  mlir::attn::GpuPrecision gpuPrecision = mlir::attn::GpuPrecision::F32;
  /// Starts messages without a spec location: "<toolName>: error: ".
  std::string toolName = "attnc";
};

/// The code and the C entry point of a spec under some size bindings.
struct CompiledObject {
  EntryAbi abi;
  /// The object file's bytes.
  std::string object;
};

/// What `attnc report` shows besides the terms.
struct ReportOptions {
  /// cpu, nvptx or a target description file; "" for the default
  /// (Compiler::resolveCostTarget).
  std::string costTarget;
  /// The whole-layer view, when both are positive.
  int64_t heads = 0;
  int64_t headDim = 0;
  /// Measured times drawn on the plot: the text of a JSON object
  /// {"points": [{"term", "strategy", "n", "seconds"}...]} (docs/CostModel.md);
  /// named \p measuredName in messages.
  std::string measuredJson;
  std::string measuredName;
};

class Compiler {
public:
  Compiler(CompilerOptions options, llvm::raw_ostream &diagnostics);
  ~Compiler();

  const CompilerOptions &getOptions() const { return options; }
  void setOptions(CompilerOptions newOptions) {
    options = std::move(newOptions);
  }
  mlir::MLIRContext &getContext() { return *context; }

  //===--- The spec ---------------------------------------------------===//

  /// Reads, parses and checks the spec file at \p path.
  bool loadSpecFile(const std::string &path);
  /// Parses and checks the spec \p text, named \p name in messages.
  bool loadSpec(std::string text, std::string name);
  const frontend::Spec &getSpec() const { return *spec; }
  const frontend::SourceFile &getSource() const { return *source; }

  /// The spec's dims under \p overrides (--set), with the declared values;
  /// with \p allowUnbound, dims neither set nor declared are left out.
  std::optional<frontend::SizeBindings>
  bindSizes(const frontend::SizeBindings &overrides, bool allowUnbound);

  //===--- Stages -----------------------------------------------------===//

  /// The attn module of the spec under \p sizes (unbound dims dynamic),
  /// verified; a verifier error is reported at the term it comes from.
  mlir::OwningOpRef<mlir::ModuleOp>
  generateModule(const frontend::SizeBindings &sizes);

  /// attn-select-order, convert-attn-to-linalg, canonicalize and cse: the
  /// `--emit=linalg` module, in place.
  mlir::LogicalResult lowerToLinalg(mlir::ModuleOp module);

  /// attn-lower-to-nvvm, then the kernels' binary: PTX text for Isa, cubin
  /// bytes for Bin.
  mlir::FailureOr<std::string>
  lowerToGPUBinary(mlir::ModuleOp module, mlir::attn::BinaryFormat format);

  /// The target machine of the options' CPU at -O3 with position-independent
  /// code; with \p portable, the generic CPU of the host's architecture (the
  /// host half of GPU code, which may run elsewhere).
  std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(bool portable);

  /// Lowers \p module (from generateModule under \p sizes) with the target's
  /// pipeline and attn-emit-c-entry, translates it to LLVM IR optimised at
  /// -O3 for \p machine. With \p forJit, also the packed entry point and the
  /// GPU module's constructors as `attn_<name>_init` / `_fini` (a JIT runs
  /// no global constructors of an object).
  std::unique_ptr<llvm::Module>
  lowerToLLVMIR(mlir::ModuleOp module, const frontend::SizeBindings &sizes,
                llvm::LLVMContext &llvmContext, llvm::TargetMachine &machine,
                bool forJit, EntryAbi &abi);

  /// \p module as an object file, or an error message.
  std::optional<std::string> emitObject(llvm::Module &module,
                                        llvm::TargetMachine &machine);

  /// lowerToLLVMIR (forJit) and emitObject of \p module, which
  /// generateModule made under \p sizes and which is lowered in place: the
  /// in-process kernel.
  std::optional<CompiledObject>
  compileKernelObject(mlir::ModuleOp module,
                      const frontend::SizeBindings &sizes);

  /// The entry point compileKernelObject gives the spec under \p sizes,
  /// without compiling anything (for an object from a cache).
  std::optional<EntryAbi> describeKernel(const frontend::SizeBindings &sizes);

  /// Loads an object of compileKernelObject into this process.
  std::unique_ptr<Kernel> loadKernel(CompiledObject compiled);

  /// What the cost model decides with: options.costTarget, or the default
  /// for the code's target, looked up once per code target (a warning is
  /// written then when a calibration in the cache is ignored).
  std::string resolveCostTarget();
  /// The options' CPU, resolved; writes an error for an unknown one.
  std::optional<mlir::attn::CpuTarget> resolveCpu();

  //===--- The cost model ---------------------------------------------===//

  /// `attnc report`: the text and the JSON object, and with \p svg the plot
  /// of predicted time against N (attn/Analysis/CostPlot.h), or false.
  bool report(const frontend::SizeBindings &overrides,
              const ReportOptions &reportOptions, std::string &text,
              std::string &json, std::string *svg = nullptr);

  /// FLOPs of the strategy the compiled code runs for each term of
  /// \p module (the cost model's count; forced orders as the options say).
  double countFlops(mlir::ModuleOp module);

  //===--- Messages ---------------------------------------------------===//

  /// Writes `<tool>: error: message`.
  void error(const llvm::Twine &message);
  /// Writes a spec diagnostic with its source line.
  void specError(const frontend::Diagnostic &diag);

  /// How MLIR diagnostics are shown while the passes run.
  enum class PassMessages {
    /// The first error only, in the spec's words; remarks quiet.
    FirstError,
    /// Every diagnostic with its severity and notes (attnc --emit).
    All,
  };
  void setPassMessages(PassMessages mode) { passMessages = mode; }

private:
  class DiagnosticRouter;

  /// Writes `cannot compile '<spec>': why` unless the first pass error has
  /// said it in the spec's words.
  void pipelineFailed(const std::string &why);

  CompilerOptions options;
  llvm::raw_ostream &diagnostics;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<DiagnosticRouter> router;
  std::unique_ptr<frontend::SourceFile> source;
  std::unique_ptr<frontend::Spec> spec;
  PassMessages passMessages = PassMessages::FirstError;
  /// The default cost target of the code target it was looked up for.
  std::optional<std::pair<Target, std::string>> defaultCostTargetCache;
  bool reportedError = false;
  /// Set while generateModule verifies: the first verifier error.
  std::optional<frontend::Diagnostic> verifierError;
  bool verifying = false;
};

} // namespace compiler
} // namespace attn

#endif // ATTN_COMPILER_COMPILER_H
