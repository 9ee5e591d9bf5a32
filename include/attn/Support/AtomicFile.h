//===- AtomicFile.h - Write files whole or not at all -----------*- C++ -*-===//
//
// The one writer of output files: attnc's outputs, .npy files and the
// compile cache. Plain C++ (no LLVM/MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_ATOMICFILE_H
#define ATTN_SUPPORT_ATOMICFILE_H

#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Writes every (path, contents) pair: each to a temporary next to it
/// (O_EXCL, so concurrent writers never share one), flushed to disk, then
/// renamed into place. On any error nothing new is left behind: the
/// temporaries are removed, and a file already renamed in this call is
/// removed again, so that the files never mismatch. Returns "" or
/// `cannot write 'PATH': why`.
std::string
writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>
                         &files);

} // namespace attn

#endif // ATTN_SUPPORT_ATOMICFILE_H
