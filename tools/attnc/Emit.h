//===- Emit.h - attnc --emit=linalg|llvm|obj ---------------------*- C++ -*-===//
//
// The ahead-of-time half of attnc: the linalg stage of the lowering, the
// optimised LLVM IR, and a host object file with a C entry point and its
// header (DESIGN §3 "Host ABI", docs/language.md §9 "The C ABI").
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_EMIT_H
#define ATTNC_EMIT_H

#include "attn/Frontend/Parser.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace attnc {

/// One size of the C ABI: fixed in the object, or a dynamic-size argument.
struct Extent {
  int64_t value = 0;   ///< The size when static.
  int dynamic = -1;    ///< Index into EntryAbi::dynamicSizes, -1 if static.
  std::string name;    ///< The dim's name, empty for a literal.
  bool isDynamic() const { return dynamic >= 0; }
};

/// One array argument: an input of the spec, or the output.
struct AbiArray {
  std::string name;  ///< The spec's name of the input, or "out".
  std::string cName; ///< The parameter's name in the header.
  std::vector<Extent> shape;
  bool isOutput = false;
};

/// The C entry point `int attn_<name>(arrays..., out, dynamic sizes...)` of
/// a spec under some static size bindings.
struct EntryAbi {
  std::string specName;
  std::string entryName;     ///< attn_<name>
  std::string sourcePath;    ///< The spec file, for the header's comment.
  std::vector<AbiArray> arrays; ///< The inputs in spec order, then out.
  /// The dims left dynamic, in declaration order, and their C names.
  std::vector<std::string> dynamicSizes;
  std::vector<std::string> dynamicCNames;
  /// Dims that are static in the object, with their values.
  std::vector<std::pair<std::string, int64_t>> staticSizes;
  /// Pairs of sizes the spec requires to be equal (DESIGN §1's C1, C2, C4,
  /// C6, C7 and the shapes across terms), at least one of them dynamic:
  /// checked at entry.
  std::vector<std::pair<Extent, Extent>> equalities;
  /// Element counts (products of sizes) whose byte size must stay below
  /// kMaxBytes: every array, and each term's N x M score and N x m feature
  /// extents, so that no size computation in the generated code overflows.
  std::vector<std::vector<Extent>> products;
};

/// Where the generated code runs.
struct CodegenTarget {
  /// nvptx: the kernels become PTX for `chip` (attn-lower-to-nvvm) and the
  /// host code, which takes device pointers, launches them through the
  /// mgpu* functions of runtime/; cpu: attn-lower-to-llvm.
  bool gpu = false;
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// What the host code embeds: isa (PTX, compiled by the driver when the
  /// module loads, so it runs on any driver that knows the PTX version),
  /// bin (cubin, made by ptxas here) or fatbin.
  std::string format = "isa";
  /// With gpu, for `attnc run --emulate-gpu`: the kernels run on the host
  /// (attn-lower-to-nvvm's emulate option) and nothing is serialised.
  bool emulate = false;
};

/// The largest byte size an array (or an intermediate) may have: 2^62, far
/// beyond any memory, so that padding and index arithmetic cannot overflow.
constexpr uint64_t kMaxBytes = uint64_t(1) << 62;

/// Status codes of the entry point (also in the generated header).
enum EntryStatus { kStatusOk = 0, kStatusBadSize = 1, kStatusNullPointer = 2 };

/// Describes the entry point of \p spec, whose dims bound in \p sizes are
/// static and the others dynamic.
EntryAbi describeEntry(const attn::frontend::Spec &spec,
                       const attn::frontend::SizeBindings &sizes,
                       const std::string &sourcePath);

/// Checks, at compile time, what can be: an all-static array or
/// intermediate too large for kMaxBytes. Returns an error message or "".
std::string checkStaticProducts(const EntryAbi &abi);

/// The C header declaring the entry point, with every argument's shape.
std::string generateHeader(const EntryAbi &abi, const CodegenTarget &target);

/// attn-select-order, then convert-attn-to-linalg, canonicalize and cse on
/// every function: the `--emit=linalg` module.
llvm::Error lowerToLinalg(mlir::ModuleOp module, const std::string &force,
                          const CodegenTarget &target);

/// The host CPU's target machine at -O3, position-independent code. With
/// \p portable, the generic CPU of the host's architecture instead of this
/// machine's (the host half of GPU code, which may run elsewhere and does
/// no heavy work).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(bool portable = false);

/// Lowers \p module with attn-lower-to-llvm, or attn-lower-to-nvvm for
/// \p target's chip, binary format and emulation.
llvm::Error runTargetPipeline(mlir::ModuleOp module, const std::string &force,
                              const CodegenTarget &target);

/// Runs attn-lower-to-nvvm on \p module and returns the kernels' binary
/// (PTX text for format isa, cubin bytes for bin).
llvm::Expected<std::string> lowerToGPUBinary(mlir::ModuleOp module,
                                             const std::string &force,
                                             const CodegenTarget &target);

/// Runs attn-lower-to-llvm on \p module, translates it to LLVM IR, adds the
/// entry point described by \p abi, makes everything else internal (with a
/// private implementation of MLIR's `memrefCopy`, so that the object needs
/// no MLIR runtime library), and optimises it at -O3 for \p machine.
llvm::Expected<std::unique_ptr<llvm::Module>>
lowerToLLVMIR(mlir::ModuleOp module, const EntryAbi &abi,
              const std::string &force, const CodegenTarget &target,
              llvm::LLVMContext &llvmContext, llvm::TargetMachine &machine);

/// Compiles \p module to an object file's bytes.
llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &machine);

/// Writes every (path, contents) pair: each to a temporary next to it,
/// flushed to disk, then renamed into place. On any error nothing new is
/// left behind: the temporaries are removed, and a file already renamed in
/// this call is removed again, so that the files never mismatch.
llvm::Error
writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>
                         &files);

} // namespace attnc

#endif // ATTNC_EMIT_H
