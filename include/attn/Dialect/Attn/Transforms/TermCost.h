//===- TermCost.h - Feed attn.term ops to the cost model --------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TERMCOST_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TERMCOST_H

#include "attn/Analysis/CostModel.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace attn {

/// The sizes of \p term for the cost model. Dynamic sizes take assumed
/// values: B, H → 1 (they scale every strategy alike), D, E → 64, the FAVOR+
/// width → 256, N and M → \p assumedLength; each assumption made is appended
/// to \p assumptions as a sentence.
::attn::cost::TermShape
getTermShape(TermOp term, int64_t assumedLength,
             llvm::SmallVectorImpl<std::string> &assumptions);

/// The built-in target named \p name (`cpu`, `nvptx`) or the description
/// file at that path. Returns an empty string on success, else a message.
std::string resolveTarget(const std::string &name,
                          ::attn::cost::Target &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TERMCOST_H
