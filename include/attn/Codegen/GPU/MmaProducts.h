//===- MmaProducts.h - tile products of thread blocks on tensor cores -*- C++
//-*-===//
//
// attn-map-to-gpu spreads the linalg ops of a thread block over its threads,
// each reduction sequential per thread. A contraction among them (the tile
// products of kernel terms: φ(Q) φ(K)ᵀ, P V, φ(K)ᵀ V, φ(Q) S, the chunked
// causal ones) can instead run on the tensor cores: its warps compute C's
// 16 x 8 fragments on mma.sync.m16n8k8 with tf32 operands.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_MMAPRODUCTS_H
#define ATTN_CODEGEN_GPU_MMAPRODUCTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Whether \p op is C(m, n) += Σ_k A(m, k) B(k, n) on f32 memrefs: three
/// loops (two parallel, one reduction), operand maps that are projected
/// permutations, a body that adds the product of the two inputs to the
/// output, or `select(mask, out + a b, out)` with a mask computed from the
/// loop indices (linalg.index) that reads m or n but not both.
bool isMmaContraction(linalg::LinalgOp op);

/// Replaces the contraction \p op (isMmaContraction), inside a thread block
/// of \p blockSize threads (a multiple of 32), by an scf.parallel with one
/// iteration per thread of the block (attn-map-to-gpu gives each thread its
/// own): warp w computes C's 16 x 8 fragments w, w + W, ... (W warps), each
/// as C + Σ over steps of 8 k of mma.sync.m16n8k8 on operands rounded to
/// tf32 (cvt.rna), reading A, B and C with memref.load (zero past their
/// sizes) and storing the fragment's elements that lie inside C. Returns the
/// scf.parallel.
Operation *lowerContractionToMma(RewriterBase &rewriter, linalg::LinalgOp op,
                                 Value blockSize);

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_GPU_MMAPRODUCTS_H
