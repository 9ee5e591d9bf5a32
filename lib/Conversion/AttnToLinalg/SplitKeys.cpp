//===- SplitKeys.cpp - Split-key qk-first for a few queries (decode) ------===//
//
// A decode step (N = 1 query against a cache of M keys) gives qk-first one
// query row per (batch, head): a query tile of one row times every key, per
// query head, reads each key and value tile r times under grouped heads and
// keeps at most B H iterations for the threads. Here instead (flash-decoding,
// with the query heads of a group stacked as rows):
//
//   rows      R = the r N query rows of key/value head kvh's r query heads,
//             row hh N + i = query i of head kvh r + hh (padded to R)
//   split s   key tiles [lo + s T, lo + (s + 1) T) of the visible ones
//   forall (b, kvh, s):
//     for each key tile t of the split (K_t, V_t read once, in place):
//       S^T   = K_t (Q_R s)^T          (keyTile x R: K's rows are contiguous)
//       W     = mask(softcap/alibi(S))  per row's head and position
//       (m, z, acc) <- online softmax step with P V_t
//     partial[b, kvh, s] = (m, z, acc)
//   forall (b, h):                     (the rows of head h: hh = h mod r)
//     m* = max_s m_s,  c_s = exp(m_s - m*)  (0 for m_s = -inf)
//     z  = sum_s c_s z_s (+ exp(sigma_h - m*)),  acc = sum_s c_s acc_s
//     out[b, h] = acc / z  (0 where z = 0)
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

namespace {
/// How the stacked rows of a group map to heads and queries: row r is query
/// r mod N of head kvh g + r / N.
struct StackedRows {
  Value queries, groupSize;

  Value query(OpBuilder &ob, Location loc, Value r) const {
    return arith::RemUIOp::create(ob, loc, r, queries);
  }
  Value headInGroup(OpBuilder &ob, Location loc, Value r) const {
    return arith::DivUIOp::create(ob, loc, r, queries);
  }
};
} // namespace

/// [D, R]: (Q s)^T of the group's stacked rows, zero columns past r N.
static Value stackedQueriesT(LinalgBuilder &b, const TermOperands &term,
                             const StackedRows &rows, Value bi, Value kvh,
                             int64_t numRows) {
  Value firstHead = b.mul(kvh, term.groupSize);
  Value realRows = b.mul(term.groupSize, term.queries);
  Value scale = term.features.scale;
  return b.generic(
      b.empty({term.featureDim, b.index(numRows)}), {}, {b.map(2, {0, 1})},
      {kPar, kPar}, [&](OpBuilder &gb, Location gl, ValueRange) -> Value {
        Value d = linalg::IndexOp::create(gb, gl, 0);
        Value r = linalg::IndexOp::create(gb, gl, 1);
        Value real = arith::CmpIOp::create(gb, gl, arith::CmpIPredicate::ult, r,
                                           realRows);
        auto ifOp = scf::IfOp::create(
            gb, gl, real,
            [&](OpBuilder &ob, Location loc) {
              // Row r past r N would index past Q: only real rows read it.
              Value head = arith::AddIOp::create(ob, loc, firstHead,
                                                 rows.headInGroup(ob, loc, r));
              Value x = tensor::ExtractOp::create(
                  ob, loc, term.rawQ,
                  ValueRange{bi, head, rows.query(ob, loc, r), d});
              if (!x.getType().isF32()) // an f16 / bf16 Q (C19)
                x = arith::ExtFOp::create(ob, loc, ob.getF32Type(), x);
              scf::YieldOp::create(
                  ob, loc,
                  arith::MulFOp::create(ob, loc, x, scale).getResult());
            },
            [&](OpBuilder &ob, Location loc) {
              scf::YieldOp::create(
                  ob, loc,
                  arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0))
                      .getResult());
            });
        return ifOp.getResult(0);
      });
}

Value to_linalg::lowerSplitKeys(LinalgBuilder &b, const TermOperands &term,
                                const SplitKeyTiles &tiles, Value *lse) {
  ImplicitLocOpBuilder &ib = b.b;
  const int64_t numRows = tiles.rows, keyTile = tiles.keyTile;
  const StackedRows rows{term.queries, term.groupSize};
  Value negInf = b.f32(-INFINITY);
  Value keyTiles = b.ceilDiv(term.keys, keyTile);
  // The key tiles any query row sees: rows [0, N) share one range (causal
  // and window masks at positions M - N .. M - 1).
  auto [lo, hi] = visibleKeyTiles(b, term, /*queryTile=*/numRows, keyTile,
                                  b.index(0), keyTiles);
  Value splits =
      b.maxIdx(b.ceilDiv(b.sub(hi, lo), tiles.splitTiles), b.index(1));
  Value r = b.index(numRows);
  Value partialAcc =
      b.empty({term.batch, term.keyHeads, splits, r, term.valueDim});
  Value partialMax = b.empty({term.batch, term.keyHeads, splits, r});
  Value partialSum = b.empty({term.batch, term.keyHeads, splits, r});

  // Pass 1: (m, z, acc) of every (batch, key/value head, split).
  SmallVector<OpFoldResult> bounds = {LinalgBuilder::ofr(term.batch),
                                      LinalgBuilder::ofr(term.keyHeads),
                                      LinalgBuilder::ofr(splits)};
  auto partials = scf::ForallOp::create(
      ib, bounds, ValueRange{partialAcc, partialMax, partialSum}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPoint(partials.getTerminator());
    SmallVector<Value> ivs(partials.getInductionVars());
    Value bi = ivs[0], kvh = ivs[1], split = ivs[2];
    // The term as this batch element sees it (its key and query lengths):
    // everything below reads this one.
    const TermOperands batchTerm = forBatch(b, term, bi);
    const TermOperands &term = batchTerm;
    Value queriesT = stackedQueriesT(b, term, rows, bi, kvh, numRows);
    // The split's tiles, within the ones this batch element's rows see.
    auto [batchLo, batchHi] = visibleKeyTiles(b, term, /*queryTile=*/numRows,
                                              keyTile, b.index(0), keyTiles);
    Value first = b.add(lo, b.mul(split, b.index(tiles.splitTiles)));
    Value last = b.minIdx(batchHi, b.add(first, b.index(tiles.splitTiles)));
    first = b.maxIdx(first, batchLo);
    // The real rows' positions bound the tiles that need no mask.
    Value lastQuery = b.sub(term.queries, b.index(1));
    // ALiBi: a_h of each stacked row's head, once for all its key tiles.
    Value rowSlopes;
    if (term.alibi)
      rowSlopes =
          b.generic(b.empty({b.index(numRows)}), {}, {b.map(1, {0})}, {kPar},
                    [&](OpBuilder &gb, Location gl, ValueRange) -> Value {
                      ImplicitLocOpBuilder sb(gl, gb);
                      LinalgBuilder scalar(sb);
                      Value row = linalg::IndexOp::create(sb, 0);
                      Value head = arith::AddIOp::create(
                          sb, scalar.mul(kvh, term.groupSize),
                          rows.headInGroup(sb, gl, row));
                      // Padding rows (past r N) name heads past H: they take
                      // the last head's slope, so that a slopes operand is
                      // never read past its end (their rows are not stored).
                      head = scalar.minIdx(
                          head, scalar.sub(term.heads, scalar.index(1)));
                      return alibiSlope(scalar, term, head);
                    });
    auto loop = scf::ForOp::create(
        ib, first, last, b.index(1),
        ValueRange{b.filled({r}, -INFINITY), b.filled({r}, 0.0),
                   b.filled({r, term.valueDim}, 0.0)},
        [&](OpBuilder &ob, Location loc, Value kt, ValueRange iter) {
          ImplicitLocOpBuilder nb(loc, ob);
          LinalgBuilder inner(nb);
          Value col0 = inner.mul(kt, inner.index(keyTile));
          Value kTile =
              rowTile(inner, term.rawK, bi, kvh, col0, keyTile, term.keys);
          Value vTile =
              rowTile(inner, term.values, bi, kvh, col0, keyTile, term.keys);
          Value tk = inner.index(keyTile), tr = inner.index(numRows);
          // S^T = K_t Q^T: a register-tiled product reading K's rows.
          Value scores = inner.transposeTile(
              inner.matmulNN(kTile, queriesT, inner.filled({tk, tr}, 0.0)));
          auto query = [&](OpBuilder &gb, Location gl, Value row) {
            return rows.query(gb, gl, row);
          };
          auto slopeOf = [&](OpBuilder &gb, Location gl, Value row) -> Value {
            return tensor::ExtractOp::create(gb, gl, rowSlopes,
                                             ValueRange{row});
          };
          if (term.softcap || term.alibi)
            scores = modifyScores(inner, term, scores, query, col0,
                                  term.alibi ? TileRowSlope(slopeOf)
                                             : TileRowSlope());
          Value full = tileFullyVisible(inner, term, inner.index(0), lastQuery,
                                        col0, keyTile);
          // Stacked row r is query r mod N.
          auto visible = [&](OpBuilder &gb, Location gl, Value row, Value c) {
            return keyVisible(gb, gl, term, rows.query(gb, gl, row),
                              arith::AddIOp::create(gb, gl, col0, c));
          };
          onlineSoftmaxStep(inner, tr,
                            weightsOf(inner, term, scores, full, visible),
                            vTile, negInf, iter, full, visible,
                            /*testFinite=*/true);
        });
    ib.setInsertionPointToStart(partials.getTerminator().getBody());
    auto store = [&](Value value, unsigned out, bool withValues) {
      SmallVector<OpFoldResult> offsets = {bi, kvh, split, ib.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {ib.getIndexAttr(1), ib.getIndexAttr(1),
                                         ib.getIndexAttr(1),
                                         ib.getIndexAttr(numRows)};
      if (withValues) {
        offsets.push_back(ib.getIndexAttr(0));
        sizes.push_back(LinalgBuilder::ofr(term.valueDim));
      }
      SmallVector<OpFoldResult> strides(sizes.size(), ib.getIndexAttr(1));
      tensor::ParallelInsertSliceOp::create(ib, value,
                                            partials.getRegionIterArgs()[out],
                                            offsets, sizes, strides);
    };
    store(loop.getResult(2), 0, true);
    store(loop.getResult(0), 1, false);
    store(loop.getResult(1), 2, false);
  }
  partialAcc = partials.getResult(0);
  partialMax = partials.getResult(1);
  partialSum = partials.getResult(2);

  // Pass 2: per (batch, query head) merge the splits of its rows.
  SmallVector<Value> outs = {
      b.empty({term.batch, term.heads, term.queries, term.valueDim})};
  if (lse)
    outs.push_back(b.empty({term.batch, term.heads, term.queries}));
  SmallVector<OpFoldResult> headBounds = {LinalgBuilder::ofr(term.batch),
                                          LinalgBuilder::ofr(term.heads)};
  auto merge = scf::ForallOp::create(ib, headBounds, outs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPoint(merge.getTerminator());
    Value bi = merge.getInductionVars()[0], hi = merge.getInductionVars()[1];
    Value kvh = keyHead(b, term, hi);
    Value row0 = b.mul(b.sub(hi, b.mul(kvh, term.groupSize)), term.queries);
    auto slice = [&](Value partial, bool withValues) {
      SmallVector<OpFoldResult> offsets = {bi, kvh, ib.getIndexAttr(0), row0};
      SmallVector<OpFoldResult> sizes = {ib.getIndexAttr(1), ib.getIndexAttr(1),
                                         LinalgBuilder::ofr(splits),
                                         LinalgBuilder::ofr(term.queries)};
      SmallVector<int64_t> shape = {
          getConstantIntValue(splits).value_or(ShapedType::kDynamic),
          getConstantIntValue(term.queries).value_or(ShapedType::kDynamic)};
      if (withValues) {
        offsets.push_back(ib.getIndexAttr(0));
        sizes.push_back(LinalgBuilder::ofr(term.valueDim));
        shape.push_back(
            getConstantIntValue(term.valueDim).value_or(ShapedType::kDynamic));
      }
      SmallVector<OpFoldResult> strides(sizes.size(), ib.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(
          ib, RankedTensorType::get(shape, ib.getF32Type()), partial, offsets,
          sizes, strides);
    };
    Value maxes = slice(partialMax, false); // [S, N]
    Value sums = slice(partialSum, false);  // [S, N]
    Value accs = slice(partialAcc, true);   // [S, N, E]
    Value n = term.queries;
    // m* = max_s m_s
    Value best = b.generic(
        b.filled({n}, -INFINITY), {maxes}, {b.map(2, {1, 0}), b.map(2, {0})},
        {kPar, kRed}, [](OpBuilder &gb, Location gl, ValueRange args) {
          return arith::MaximumFOp::create(gb, gl, args[0], args[1])
              .getResult();
        });
    // c_s = exp(m_s - m*), 0 where m_s = -inf
    Value weights = b.generic(
        b.empty({splits, n}), {maxes, best},
        {b.map(2, {0, 1}), b.map(2, {1}), b.map(2, {0, 1})}, {kPar, kPar},
        [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
          Value none = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OEQ,
                                             args[0], negInf);
          Value e = math::ExpOp::create(
              gb, gl, arith::SubFOp::create(gb, gl, args[0], args[1]));
          Value zero =
              arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
          return arith::SelectOp::create(gb, gl, none, zero, e);
        });
    // z = sum_s c_s z_s, acc = sum_s c_s acc_s
    Value z = b.generic(
        b.filled({n}, 0.0), {weights, sums},
        {b.map(2, {1, 0}), b.map(2, {1, 0}), b.map(2, {0})}, {kPar, kRed},
        [](OpBuilder &gb, Location gl, ValueRange args) {
          return LinalgBuilder::mulAdd(gb, gl, args[0], args[1], args[2]);
        });
    Value acc = b.generic(
        b.filled({n, term.valueDim}, 0.0), {weights, accs},
        {b.map(3, {2, 0}), b.map(3, {2, 0, 1}), b.map(3, {0, 1})},
        {kPar, kPar, kRed}, [](OpBuilder &gb, Location gl, ValueRange args) {
          return LinalgBuilder::mulAdd(gb, gl, args[0], args[1], args[2]);
        });
    if (term.sinks) {
      // z += exp(sigma_h - m*) (DESIGN §1.3); a row with no visible key
      // (m* = -inf) gets an infinite sum and stays 0.
      Value sigma = tensor::ExtractOp::create(ib, term.sinks, ValueRange{hi});
      z = b.generic(
          z, {best}, {b.map(1, {0}), b.map(1, {0})}, {kPar},
          [&](OpBuilder &gb, Location gl, ValueRange args) {
            Value shifted = arith::SubFOp::create(gb, gl, sigma, args[0]);
            return arith::AddFOp::create(gb, gl, args[1],
                                         math::ExpOp::create(gb, gl, shifted))
                .getResult();
          });
    }
    Value rowsOut = normalizeRows(b, term, acc, z, b.index(0), /*rows=*/0,
                                  /*validRows=*/n);
    Value rowLse = lse ? logSumExpRows(b, best, z) : Value();
    ib.setInsertionPointToStart(merge.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets = {bi, hi, ib.getIndexAttr(0),
                                         ib.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {ib.getIndexAttr(1), ib.getIndexAttr(1),
                                       LinalgBuilder::ofr(n),
                                       LinalgBuilder::ofr(term.valueDim)};
    SmallVector<OpFoldResult> strides(4, ib.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(
        ib, rowsOut, merge.getRegionIterArgs()[0], offsets, sizes, strides);
    if (lse) {
      offsets.pop_back();
      sizes.pop_back();
      strides.pop_back();
      tensor::ParallelInsertSliceOp::create(
          ib, rowLse, merge.getRegionIterArgs()[1], offsets, sizes, strides);
    }
  }
  if (lse)
    *lse = merge.getResult(1);
  return termResult(b, term, merge.getResult(0), /*padded=*/false);
}
