//===- CHeader.h - The C header of a compiled spec --------------*- C++ -*-===//
//
// Writes NAME.h for `attnc --emit=obj`: the entry point's prototype, every
// argument's shape, the status codes and a uniform `_call` wrapper.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CHEADER_CHEADER_H
#define ATTN_TARGET_CHEADER_CHEADER_H

#include "attn/Target/CHeader/EntryAbi.h"

#include <string>

namespace attn {

/// What the header says about linking and running the object.
struct HeaderTarget {
  /// The object holds NVPTX kernels and takes device pointers.
  bool gpu = false;
  std::string chip = "sm_90";
  /// isa (PTX), bin (cubin) or fatbin.
  std::string format = "isa";
  /// Where libomp is, for the link line of CPU objects.
  std::string llvmLibraryDir;
};

/// The C header declaring the entry point of \p abi.
std::string generateHeader(const EntryAbi &abi, const HeaderTarget &target);

} // namespace attn

#endif // ATTN_TARGET_CHEADER_CHEADER_H
