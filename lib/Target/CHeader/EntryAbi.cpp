//===- EntryAbi.cpp - Host-side checks of the C entry point ---------------===//

#include "attn/Target/CHeader/EntryAbi.h"

#include <cctype>
#include <set>

using namespace attn;

/// a * b, saturating at UINT64_MAX, with \p overflow set when it saturates.
static uint64_t saturatingMultiply(uint64_t a, uint64_t b, bool &overflow) {
  if (a != 0 && b > UINT64_MAX / a) {
    overflow = true;
    return UINT64_MAX;
  }
  return a * b;
}

bool attn::isReservedCName(const std::string &name) {
  static const std::set<std::string> keywords = {
      "auto",       "bool",          "break",     "case",
      "char",       "const",         "constexpr", "continue",
      "default",    "do",            "double",    "else",
      "enum",       "extern",        "false",     "float",
      "for",        "goto",          "if",        "inline",
      "int",        "long",          "nullptr",   "register",
      "restrict",   "return",        "short",     "signed",
      "sizeof",     "static",        "static_assert", "struct",
      "switch",     "thread_local",  "true",      "typedef",
      "typeof",     "union",         "unsigned",  "void",
      "volatile",   "while",         "alignas",   "alignof",
      "asm",        "catch",         "class",     "delete",
      "explicit",   "friend",        "mutable",   "namespace",
      "new",        "operator",      "private",   "protected",
      "public",     "template",      "this",      "throw",
      "try",        "typename",      "using",     "virtual",
      "int64_t",    "NULL"};
  return keywords.count(name) || name.rfind("__", 0) == 0 ||
         (name.size() > 1 && name[0] == '_' && std::isupper(name[1]));
}

std::string attn::checkStaticProducts(const EntryAbi &abi) {
  for (const std::vector<Extent> &product : abi.products) {
    uint64_t bytes = sizeof(float);
    bool tooLarge = false, dynamic = false;
    for (const Extent &extent : product) {
      if (extent.isDynamic()) {
        dynamic = true;
        continue;
      }
      bytes = saturatingMultiply(bytes, uint64_t(extent.value), tooLarge);
    }
    if (tooLarge || bytes > kMaxBytes) {
      std::string shape;
      for (const Extent &extent : product)
        shape += (shape.empty() ? "" : ", ") +
                 (extent.isDynamic() ? extent.name
                                     : std::to_string(extent.value));
      return std::string(dynamic ? "even the static sizes of " : "") +
             "an array or intermediate of shape [" + shape +
             "] is too large (more than 2^62 bytes)";
    }
  }
  return "";
}

const char *attn::describeStatus(int status) {
  switch (status) {
  case kStatusOk:
    return "ok";
  case kStatusBadSize:
    return "a size is not positive, sizes the spec ties differ, or an array "
           "would exceed 2^62 bytes";
  case kStatusNullPointer:
    return "an array pointer is NULL";
  case kStatusOutOfMemory:
    return "the compiled code could not allocate its workspace";
  default:
    return "unknown status";
  }
}

EntryStatus attn::checkSizes(const EntryAbi &abi, const int64_t *dynamicSizes) {
  for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
    if (dynamicSizes[i] < 1)
      return kStatusBadSize;
  for (const auto &[lhs, rhs] : abi.equalities)
    if (extentValue(lhs, dynamicSizes) != extentValue(rhs, dynamicSizes))
      return kStatusBadSize;
  for (const std::vector<Extent> &product : abi.products) {
    uint64_t bytes = sizeof(float);
    bool overflow = false;
    for (const Extent &extent : product)
      bytes = saturatingMultiply(
          bytes, static_cast<uint64_t>(extentValue(extent, dynamicSizes)),
          overflow);
    if (overflow || bytes > kMaxBytes)
      return kStatusBadSize;
  }
  return kStatusOk;
}
