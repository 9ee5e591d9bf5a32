//===- EntryAbi.h - The C entry point of a compiled spec --------*- C++ -*-===//
//
// The C signature `int attn_<name>(const float *in..., float *out,
// int64_t size...)` of a compiled spec and what it checks at entry. Derived
// from the verified attn ops (attn/Codegen/CEntry.h), emitted into the code by
// attn-emit-c-entry and written as a header by attn/Target/CHeader/CHeader.h.
// Plain C++ (no LLVM/MLIR), so that runners and bindings can use it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CHEADER_ENTRYABI_H
#define ATTN_TARGET_CHEADER_ENTRYABI_H

#include "attn/Support/ElementType.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// One size of the C ABI: fixed in the object, or a dynamic-size argument.
struct Extent {
  int64_t value = 0; ///< The size when static.
  int dynamic = -1;  ///< Index into EntryAbi::dynamicSizes, -1 if static.
  std::string name;  ///< The dim's name, empty for a literal.
  bool isDynamic() const { return dynamic >= 0; }
};

/// One array argument: an input of the spec, or the output.
struct AbiArray {
  std::string name;  ///< The spec's name of the input, or "out".
  std::string cName; ///< The parameter's name in the header.
  std::vector<Extent> shape;
  bool isOutput = false;
  /// f32, or f16 / bf16 (passed as their 16-bit patterns).
  ElementType elementType = ElementType::F32;
};

/// The C entry point `int attn_<name>(arrays..., out, dynamic sizes...)` of
/// a spec under some static size bindings.
struct EntryAbi {
  std::string specName;
  std::string entryName;  ///< attn_<name>
  std::string sourcePath; ///< The spec file, for the header's comment.
  /// The function the entry calls: the C interface of the spec's function.
  std::string callee;
  std::vector<AbiArray> arrays; ///< The inputs in order, then out.
  /// The dims left dynamic, in declaration order, and their C names.
  std::vector<std::string> dynamicSizes;
  std::vector<std::string> dynamicCNames;
  /// Dims that are static in the object, with their values.
  std::vector<std::pair<std::string, int64_t>> staticSizes;
  /// Pairs of sizes the ops require to be equal (attn.term's C1, C2, C4, C6,
  /// C7 and attn.combine's C2), at least one of them dynamic: checked at
  /// entry.
  std::vector<std::pair<Extent, Extent>> equalities;
  /// Element counts (products of sizes) whose byte size must stay below
  /// kMaxBytes: every array, and each term's N x M score and N x m feature
  /// extents, so that no size computation in the generated code overflows.
  std::vector<std::vector<Extent>> products;
};

/// The suffix of the function the object exports beside the entry point,
/// `void attn_<name>_free_workspaces(void)`, which frees the workspaces the
/// code keeps from one call to the next (attn-cache-workspaces).
constexpr const char *kFreeWorkspacesSuffix = "_free_workspaces";

/// The largest byte size an array (or an intermediate) may have: 2^62, far
/// beyond any memory, so that padding and index arithmetic cannot overflow.
constexpr uint64_t kMaxBytes = uint64_t(1) << 62;

/// Status codes of the entry point (also in the generated header).
enum EntryStatus {
  kStatusOk = 0,
  kStatusBadSize = 1,
  kStatusNullPointer = 2,
  /// 3 is the C API's ATTN_STATUS_ERROR; the entry never returns it.
  kStatusOutOfMemory = 4,
};

/// What an entry point status means, in words ("unknown status" for
/// anything else).
const char *describeStatus(int status);

/// Checks, at compile time, what can be: an all-static array or
/// intermediate too large for kMaxBytes. Returns an error message or "".
std::string checkStaticProducts(const EntryAbi &abi);

/// The result of checking the entry point's sizes on the host, as the entry
/// point itself does: kStatusOk or kStatusBadSize.
EntryStatus checkSizes(const EntryAbi &abi, const int64_t *dynamicSizes);

/// The value of \p extent under \p dynamicSizes.
inline int64_t extentValue(const Extent &extent, const int64_t *dynamicSizes) {
  return extent.isDynamic() ? dynamicSizes[extent.dynamic] : extent.value;
}

/// Whether \p name cannot be a C or C++ parameter name (a keyword, or a
/// reserved identifier).
bool isReservedCName(const std::string &name);

} // namespace attn

#endif // ATTN_TARGET_CHEADER_ENTRYABI_H
