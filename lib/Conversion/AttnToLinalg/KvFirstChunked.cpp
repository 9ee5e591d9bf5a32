//===- KvFirstChunked.cpp - Chunked kv-first lowering of masked terms -----===//
//
// With a causal or block mask the state depends on the query, so it is
// carried along the sequence: per (batch, head) an scf.for over chunks c of
// C rows (queries and keys alike) carries the state of the keys before the
// chunk,
//
//   num_c = phi(Q_c) S_{c-1} + (mask(phi(Q_c) phi(K_c)^T)) V_c
//   den_c = phi(Q_c) z_{c-1} + rowSum(mask(phi(Q_c) phi(K_c)^T))
//   O_c   = num_c / den_c
//   S_c   = S_{c-1} + phi(K_c)^T V_c,   z_c = z_{c-1} + sum_{j in c} phi(k_j)
//
// so the extra memory is one W x E state and the quadratic part is C x C.
// Which parts exist depends on the mask (planChunks): causal has both;
// block_causal restarts the state at every block; prior_blocks has only the
// carried state (a chunk sees the blocks before its own); block has only the
// intra-chunk part (the chunk is the block).
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

ChunkPlan to_linalg::planChunks(MaskKind mask, int64_t block,
                                std::optional<int64_t> termChunk,
                                int64_t defaultChunk) {
  ChunkPlan plan{/*chunk=*/defaultChunk, /*intraCausal=*/false,
                 /*intraFull=*/false, /*carry=*/true, /*resetEvery=*/0};
  switch (mask) {
  case MaskKind::Causal:
    plan.chunk = termChunk.value_or(defaultChunk);
    plan.intraCausal = true;
    break;
  case MaskKind::BlockCausal:
    plan.chunk = termChunk.value_or(defaultChunk);
    // The state must restart on a chunk boundary: a chunk that does not
    // divide the block becomes the block.
    if (block % plan.chunk != 0)
      plan.chunk = block;
    plan.intraCausal = true;
    plan.resetEvery = block / plan.chunk;
    break;
  case MaskKind::PriorBlocks:
    // A query sees exactly the blocks before its own: with the block as the
    // chunk, that is the carried state and nothing inside the chunk.
    plan.chunk = block;
    break;
  case MaskKind::Block:
    // A query sees its own block only: no state to carry.
    plan.chunk = block;
    plan.intraFull = true;
    plan.carry = false;
    break;
  case MaskKind::None:
  case MaskKind::Window: // qk-first only (C15)
    break;
  }
  return plan;
}

/// block_causal: the state restarts where the next block does. Multiplies
/// \p target by 0 after the last chunk of a block and by 1 elsewhere.
static Value restartAtBlocks(LinalgBuilder &inner, Value keep, Value target,
                             unsigned rank) {
  SmallVector<unsigned> all =
      rank == 1 ? SmallVector<unsigned>{0} : SmallVector<unsigned>{0, 1};
  SmallVector<IteratorType> iters(rank, kPar);
  return inner.generic(
      target, {}, {inner.map(rank, all)}, iters,
      [&](OpBuilder &gb, Location gl, ValueRange args) {
        return arith::MulFOp::create(gb, gl, args[0], keep).getResult();
      });
}

/// target[r, ...] exp(x[r]) (\p alongRows, in place) or target[w, c]
/// exp(x[c]) (into a fresh tile: the target is an operand tile the chunk
/// still reads) of a 1-D or 2-D \p target.
static Value scaleByExp(LinalgBuilder &inner, Value target, Value x,
                        bool alongRows) {
  auto type = cast<RankedTensorType>(target.getType());
  unsigned rank = type.getRank();
  SmallVector<unsigned> all =
      rank == 1 ? SmallVector<unsigned>{0} : SmallVector<unsigned>{0, 1};
  SmallVector<IteratorType> iters(rank, kPar);
  if (alongRows)
    return inner.generic(
        target, {x}, {inner.map(rank, {0}), inner.map(rank, all)}, iters,
        [](OpBuilder &gb, Location gl, ValueRange args) {
          Value factor = math::ExpOp::create(gb, gl, args[0]);
          return arith::MulFOp::create(gb, gl, args[1], factor).getResult();
        });
  Value fresh =
      tensor::EmptyOp::create(inner.b, type.getShape(), type.getElementType());
  return inner.generic(
      fresh, {target, x},
      {inner.map(rank, all), inner.map(rank, {rank - 1}), inner.map(rank, all)},
      iters, [](OpBuilder &gb, Location gl, ValueRange args) {
        Value factor = math::ExpOp::create(gb, gl, args[1]);
        return arith::MulFOp::create(gb, gl, args[0], factor).getResult();
      });
}

/// target exp(x[0]) for a [1] tensor \p x.
static Value scaleByScalarExp(LinalgBuilder &inner, Value target, Value x) {
  unsigned rank = cast<RankedTensorType>(target.getType()).getRank();
  SmallVector<unsigned> all =
      rank == 1 ? SmallVector<unsigned>{0} : SmallVector<unsigned>{0, 1};
  SmallVector<IteratorType> iters(rank, kPar);
  AffineMap first = AffineMap::get(rank, 0, {inner.b.getAffineConstantExpr(0)},
                                   inner.b.getContext());
  return inner.generic(
      target, {x}, {first, inner.map(rank, all)}, iters,
      [](OpBuilder &gb, Location gl, ValueRange args) {
        Value factor = math::ExpOp::create(gb, gl, args[0]);
        return arith::MulFOp::create(gb, gl, args[1], factor).getResult();
      });
}

Value to_linalg::lowerKvFirstChunked(LinalgBuilder &b, const TermOperands &term,
                                     const ChunkPlan &plan,
                                     FinalStates *finalStates) {
  const int64_t chunk = plan.chunk;
  Value batch = term.batch, heads = term.heads, width = term.width,
        valueDim = term.valueDim;
  ImplicitLocOpBuilder &ob = b.b;
  // Queries and keys are padded to the same whole number of chunks, so that
  // chunk c holds queries and keys [cC, (c + 1)C).
  Value longest = b.maxIdx(term.queries, term.keys);
  Value chunks = b.ceilDiv(longest, chunk);
  Value padded = b.mul(chunks, b.index(chunk));
  // static-tiles: phi(Q), phi(K)^T (in chunk panels) and V padded to whole
  // chunks first, and a padded output. Otherwise every chunk maps its own
  // rows of Q and K and stores its real rows in place.
  const bool staticTiles = plan.staticTiles;
  Value paddedQ, paddedKT, paddedV, paddedRowEps;
  if (staticTiles) {
    Value rowEps;
    auto [featureQ, featureK] = buildFeatureRows(b, term, &rowEps);
    paddedQ = b.padRows(featureQ, padded);
    if (rowEps)
      paddedRowEps = b.padRows(rowEps, padded);
    paddedKT = b.keyPanels(b.padRows(featureK, padded), chunks, chunk);
    paddedV = b.padRows(term.values, padded);
  }
  Value outRows = staticTiles ? padded : term.queries;

  SmallVector<Value> outs = {b.empty({batch, heads, outRows, valueDim})};
  appendStateOutputs(b, term, outs);
  auto forall =
      scf::ForallOp::create(ob,
                            ArrayRef<OpFoldResult>{LinalgBuilder::ofr(batch),
                                                   LinalgBuilder::ofr(heads)},
                            outs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(forall.getTerminator());
    Value bi = forall.getInductionVars()[0];
    Value hi = forall.getInductionVars()[1];
    // S_0 = S0 (0 without a state in), z_0 = z0
    auto [state, norm] = initialStates(b, term, bi, hi);
    // This head's rows of the output, filled chunk by chunk.
    Value headOut = headRows(b, forall, bi, hi, outRows, valueDim, staticTiles);
    auto loop = scf::ForOp::create(
        ob, b.index(0), chunks, b.index(1), ValueRange{state, norm, headOut},
        [&](OpBuilder &nb, Location loc, Value ci, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nb);
          LinalgBuilder inner(ib);
          Value row0 = inner.mul(ci, inner.index(chunk));
          Value cc = inner.index(chunk);
          // phi(Q_c), phi(K_c)^T [W, C] and V_c
          Value qTile, kTile, vTile, rowEps;
          if (staticTiles) {
            qTile = inner.tile2d(paddedQ, bi, hi, row0, chunk, width);
            if (paddedRowEps)
              rowEps = inner.tile2d(paddedRowEps, bi, hi, row0, chunk,
                                    inner.index(1));
            kTile = inner.panel(paddedKT, bi, hi, ci, width, chunk);
            vTile = inner.tile2d(paddedV, bi, hi, row0, chunk, valueDim);
          } else {
            qTile = queryFeatureTile(inner, term, bi, hi, row0, chunk, rowEps);
            // Keys past M: phi = 0.
            kTile = inner.transposeTile(
                keyFeatureTile(inner, term, bi, hi, row0, chunk));
            vTile = rowTile(inner, term.values, bi, hi, row0, chunk, term.keys);
          }
          Value prevState = iter[0], prevNorm = iter[1];
          // Decay: lambda_r, the in-chunk cumulative log g (Decay.cpp).
          const bool decayed = term.decay.hasDecay();
          Value lambda;
          if (decayed)
            lambda = chunkLogDecay(inner, term, bi, hi, row0, chunk);
          Value num, den;
          if (plan.carry) {
            // num = phi(Q_c) S_{c-1}, den = phi(Q_c) z_{c-1}; with decay
            // row r sees the state through exp(lambda_r) more tokens.
            num = inner.matmulNN(qTile, prevState,
                                 inner.filled({cc, valueDim}, 0.0));
            den = inner.matvec(qTile, prevNorm, inner.filled({cc}, 0.0));
            if (decayed) {
              num = scaleByExp(inner, num, lambda, /*alongRows=*/true);
              den = scaleByExp(inner, den, lambda, /*alongRows=*/true);
            }
          } else {
            num = inner.filled({cc, valueDim}, 0.0);
            den = inner.filled({cc}, 0.0);
          }
          if (plan.intraCausal || plan.intraFull) {
            // A = phi(Q_c) phi(K_c)^T, lower triangle kept when causal
            // (row and column offsets within the chunk agree).
            Value scores =
                inner.matmulNN(qTile, kTile, inner.filled({cc, cc}, 0.0));
            if (plan.intraCausal) {
              // A[r, c] for c <= r, else 0; with decay times
              // exp(min(lambda_r - lambda_c, 0)).
              SmallVector<Value> inputs;
              SmallVector<AffineMap> maps;
              if (decayed) {
                inputs = {lambda, lambda};
                maps = {inner.map(2, {0}), inner.map(2, {1})};
              }
              maps.push_back(inner.map(2, {0, 1}));
              scores = inner.generic(
                  scores, inputs, maps, {kPar, kPar},
                  [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
                    Value r = linalg::IndexOp::create(gb, gl, 0);
                    Value col = linalg::IndexOp::create(gb, gl, 1);
                    Value visible = arith::CmpIOp::create(
                        gb, gl, arith::CmpIPredicate::ule, col, r);
                    Value zero = arith::ConstantOp::create(
                        gb, gl, gb.getF32FloatAttr(0.0));
                    Value w = args.back();
                    if (decayed) {
                      Value logD = arith::MinimumFOp::create(
                          gb, gl,
                          arith::SubFOp::create(gb, gl, args[0], args[1]),
                          zero);
                      w = arith::MulFOp::create(
                          gb, gl, w, math::ExpOp::create(gb, gl, logD));
                    }
                    return arith::SelectOp::create(gb, gl, visible, w, zero);
                  });
            }
            // den += rowSum(A), num += A V_c (without the hidden pairs'
            // terms when V_c is not finite)
            den = inner.rowReduce(scores, den, false);
            if (plan.intraCausal)
              num = visibleProduct(
                  inner, scores, vTile, num,
                  arith::ConstantIntOp::create(ib, 0, 1),
                  [](OpBuilder &gb, Location gl, Value r, Value c) -> Value {
                    return arith::CmpIOp::create(
                        gb, gl, arith::CmpIPredicate::ule, c, r);
                  },
                  /*testFinite=*/!staticTiles);
            else
              num = inner.matmulNN(scores, vTile, num);
          }
          // O_c = num / den (its real rows only, without static-tiles)
          Value realQueries = staticTiles
                                  ? Value()
                                  : realRows(inner, row0, chunk, term.queries);
          Value result =
              normalizeRows(inner, term, num, den, row0, chunk, realQueries,
                            rowEps);
          // An empty chunk (queries past N) stores nothing, at row N.
          Value at = staticTiles ? row0 : inner.minIdx(row0, term.queries);
          SmallVector<OpFoldResult> offsets = {at, ib.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {
              staticTiles ? ib.getIndexAttr(chunk)
                          : LinalgBuilder::ofr(realQueries),
              LinalgBuilder::ofr(valueDim)};
          SmallVector<OpFoldResult> strides(2, ib.getIndexAttr(1));
          Value newOut = tensor::InsertSliceOp::create(ib, result, iter[2],
                                                       offsets, sizes, strides);
          Value newState = prevState, newNorm = prevNorm;
          if (plan.carry && decayed) {
            // With lambda_l = lambda_{C-1}, the chunk's whole log decay:
            // S_c = exp(lambda_l) S_{c-1} + (phi(K_c)^T exp(lambda_l -
            // lambda)) V_c, z_c alike; every exponent is <= 0.
            Value lambdaLast = tensor::ExtractSliceOp::create(
                ib, lambda, ArrayRef<OpFoldResult>{ib.getIndexAttr(chunk - 1)},
                ArrayRef<OpFoldResult>{ib.getIndexAttr(1)},
                ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
            Value toEnd = inner.generic(
                inner.empty({cc}), {lambda, lambdaLast},
                {inner.map(1, {0}),
                 AffineMap::get(1, 0, {ib.getAffineConstantExpr(0)},
                                ib.getContext()),
                 inner.map(1, {0})},
                {kPar}, [](OpBuilder &gb, Location gl, ValueRange args) {
                  return arith::SubFOp::create(gb, gl, args[1], args[0])
                      .getResult();
                });
            Value decayedK =
                scaleByExp(inner, kTile, toEnd, /*alongRows=*/false);
            Value keptState = scaleByScalarExp(inner, prevState, lambdaLast);
            Value keptNorm = scaleByScalarExp(inner, prevNorm, lambdaLast);
            newState = inner.matmulNN(decayedK, vTile, keptState);
            newNorm = inner.rowReduce(decayedK, keptNorm, false);
          } else if (plan.carry) {
            // S_c = S_{c-1} + phi(K_c)^T V_c, z_c = z_{c-1} +
            // rowSum(phi(K_c)^T)
            newState = inner.matmulNN(kTile, vTile, prevState);
            newNorm = inner.rowReduce(kTile, prevNorm, false);
          }
          if (plan.resetEvery > 0) {
            // keep = (c + 1) % resetEvery == 0 ? 0 : 1
            Value next = arith::AddIOp::create(ib, ci, inner.index(1));
            Value rem =
                arith::RemUIOp::create(ib, next, inner.index(plan.resetEvery));
            Value restart = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq,
                                                  rem, inner.index(0));
            Value keep = arith::SelectOp::create(ib, restart, inner.f32(0.0),
                                                 inner.f32(1.0));
            newState = restartAtBlocks(inner, keep, newState, 2);
            newNorm = restartAtBlocks(inner, keep, newNorm, 1);
          }
          scf::YieldOp::create(ib, ValueRange{newState, newNorm, newOut});
        });
    ob.setInsertionPointToStart(forall.getTerminator().getBody());
    storeHeadRows(ob, forall, loop.getResult(2), bi, hi, outRows, valueDim);
    insertFinalStates(ob, forall, term, 1, bi, hi, loop.getResult(0),
                      loop.getResult(1));
  }
  if (finalStates)
    *finalStates = finalStatesOf(forall, term, 1);
  return termResult(b, term, forall.getResult(0), staticTiles);
}
