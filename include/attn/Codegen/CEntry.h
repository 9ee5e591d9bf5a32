//===- CEntry.h - The C entry point of a spec's function --------*- C++ -*-===//
//
// Derives the C entry point (attn/Target/CHeader/EntryAbi.h) of a function of
// attn ops, and carries it through the lowering as the module attribute
// `attn.c_entry` (attn-describe-c-entry writes it, attn-emit-c-entry reads it).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CENTRY_H
#define ATTN_CODEGEN_CENTRY_H

#include "attn/Target/CHeader/EntryAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {

/// The spec's names for the sizes of a function's arguments: dims of one
/// name are one size of the entry point.
struct EntryNaming {
  /// The spec's name (the entry is attn_<specName>).
  std::string specName;
  std::string sourcePath;
  /// The dims in declaration order, with their value when static.
  std::vector<std::pair<std::string, std::optional<int64_t>>> dims;
  /// For argument i, the dim name of each dimension ("" for a literal).
  std::vector<std::vector<std::string>> argumentDims;
};

/// The name of the module attribute that carries the entry point.
constexpr const char *kCEntryAttrName = "attn.c_entry";

/// The module global that attn-check-allocations counts failed heap
/// allocations in (an i64), and attn-emit-c-entry reads.
constexpr const char *kAllocationFailures = "__attn_allocation_failures";

/// The internal function of attn-cache-workspaces that frees every block
/// its slots hold; the module's destructor, and what
/// attn_<name>_free_workspaces calls.
constexpr const char *kWorkspaceFreeAll = "__attn_workspace_free_all";

/// Derives the entry point of \p func from its attn ops (see
/// attn-describe-c-entry); emits an error at the op it cannot follow.
FailureOr<::attn::EntryAbi> describeCEntry(func::FuncOp func,
                                           const EntryNaming *naming);

DictionaryAttr entryAbiToAttr(MLIRContext *context,
                              const ::attn::EntryAbi &abi);
/// The inverse of entryAbiToAttr; an error at \p loc for a malformed one.
FailureOr<::attn::EntryAbi> entryAbiFromAttr(DictionaryAttr attr,
                                             Location loc);

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_CENTRY_H
