//===- AttnToLinalg.h - Lower attn ops to tiled linalg ----------*- C++ -*-===//

#ifndef ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
#define ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Rewrites attn.term and attn.combine into linalg/scf/tensor IR on tensors
/// (see lib/Conversion/AttnToLinalg/AttnToLinalg.cpp for the shape of the
/// result; one file per strategy beside it). \p tileSize is the query and
/// key tile of qk-first (a term with `order qk_first` and a `chunk` uses the
/// chunk), the tile of unmasked kv-first and the default chunk of masked
/// kv-first. \p staticTiles and \p stateCacheBytes: see the pass's
/// `static-tiles` and `state-cache-bytes` options.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns,
                                  int64_t tileSize = 64,
                                  bool staticTiles = false,
                                  int64_t stateCacheBytes = 0);

/// A unit attribute on the linalg ops of the last, partial tile of a loop
/// (its zero-padded rows), which run once per loop, not once per tile:
/// attn-tile-and-vectorize gives them its smallest code, not a register
/// tile's worth of unrolled exp chains.
constexpr llvm::StringLiteral kPartialTileAttrName = "attn.partial_tile";

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTOLINALG_ATTNTOLINALG_H
