//===- QkFirst.cpp - Flash-style qk-first lowering (online softmax) -------===//
//
// O_i = sum_j w(i, j) v_j / z_i, computed per query tile without the N x M
// score matrix: one scf.forall iteration per (batch, head, query tile) loops
// over the key tiles the mask leaves visible, carrying per row the running
// maximum m (softmax only), the running sum z and the accumulator acc:
//
//   S      = Q_t K_t^T                       (queryTile x keyTile scores)
//   W      = mask(S)   (-inf for softmax, 0 otherwise, also for padded keys)
//   newMax = max(m, rowMax(W))
//   P      = exp(W - newMax),  c = exp(m - newMax)   (0 while newMax = -inf)
//   z      = c z + rowSum(P),  acc = c acc + P V_t
//
// (On a tile the mask cuts whose V_t holds a NaN or infinity, P V_t drops
// the hidden pairs' terms: see visibleProduct.)
//
// (relu2, W = relu(S)^2, and the kernel terms, W = S, need no maximum:
// z += rowSum(W), acc += W V_t.) The tile then is normalised by the term's
// normalizer (normalizeRows): acc / (z + eps), acc / visible keys, or acc.
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

/// How far a key tile's maximum may exceed a row's reference maximum before
/// the reference moves (natural log: weights up to e^8 ~ 3e3, far from f32
/// overflow for any sum of them).
static constexpr float kStaleMaxSlack = 8.0f;

/// DESIGN §1.3's a_h of head \p hi as f32: the ALiBi reference's slopes
/// (2^(-8(h+1)/n) for the n = 2^floor(log2 H) first heads, then every other
/// slope of the rule for 2n) or the slopes operand's entry.
Value to_linalg::alibiSlope(LinalgBuilder &b, const TermOperands &term,
                            Value hi) {
  ImplicitLocOpBuilder &ib = b.b;
  if (term.alibiSlopes)
    return tensor::ExtractOp::create(ib, term.alibiSlopes, ValueRange{hi});
  // n, the largest power of two <= H: a constant when H is static.
  Value closest;
  if (std::optional<int64_t> heads = getConstantIntValue(term.heads)) {
    int64_t n = 1;
    while (n * 2 <= *heads)
      n *= 2;
    closest = b.index(n);
  } else {
    Value h64 = arith::IndexCastOp::create(ib, ib.getI64Type(), term.heads);
    Value leading = math::CountLeadingZerosOp::create(ib, h64);
    Value shift = arith::SubIOp::create(
        ib, arith::ConstantIntOp::create(ib, ib.getI64Type(), 63), leading);
    Value n64 = arith::ShLIOp::create(
        ib, arith::ConstantIntOp::create(ib, ib.getI64Type(), 1), shift);
    closest = arith::IndexCastOp::create(ib, ib.getIndexType(), n64);
  }
  auto toF32 = [&](Value index) {
    return LinalgBuilder::indexToF32(ib, ib.getLoc(), index);
  };
  // h < n: -8 (h + 1) / n; else -4 (2 (h - n) + 1) / n, as powers of two.
  Value first =
      arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, hi, closest);
  Value n = toF32(closest);
  Value own =
      arith::MulFOp::create(ib, b.f32(-8.0), toF32(b.add(hi, b.index(1))));
  Value extra = arith::MulFOp::create(
      ib, b.f32(-4.0),
      toF32(b.add(b.mul(b.sub(hi, b.minIdx(hi, closest)), b.index(2)),
                  b.index(1))));
  Value exponent = arith::DivFOp::create(
      ib, arith::SelectOp::create(ib, first, own, extra), n);
  return math::ExpOp::create(ib,
                             arith::MulFOp::create(ib, exponent, b.f32(M_LN2)));
}

Value to_linalg::modifyScores(LinalgBuilder &inner, const TermOperands &term,
                              Value scores, TileRowQuery rowQuery, Value col0,
                              TileRowSlope slopeOf) {
  return inner.generic(
      scores, {}, {inner.map(2, {0, 1})}, {kPar, kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value s = args[0];
        if (term.softcap) {
          Value cap = arith::ConstantOp::create(
              gb, gl, gb.getF32FloatAttr(*term.softcap));
          Value inverse = arith::ConstantOp::create(
              gb, gl, gb.getF32FloatAttr(1.0 / *term.softcap));
          Value t = math::TanhOp::create(
              gb, gl, arith::MulFOp::create(gb, gl, s, inverse));
          s = arith::MulFOp::create(gb, gl, cap, t);
        }
        if (slopeOf) {
          Value r = linalg::IndexOp::create(gb, gl, 0);
          Value c = linalg::IndexOp::create(gb, gl, 1);
          Value p = arith::AddIOp::create(gb, gl, rowQuery(gb, gl, r),
                                          term.positionOffset);
          Value j = arith::AddIOp::create(gb, gl, col0, c);
          Value diff = arith::SubIOp::create(gb, gl, p, j);
          Value negative =
              arith::CmpIOp::create(gb, gl, arith::CmpIPredicate::slt, diff,
                                    arith::ConstantIndexOp::create(gb, gl, 0));
          Value distance = arith::SelectOp::create(
              gb, gl, negative,
              arith::SubIOp::create(
                  gb, gl, arith::ConstantIndexOp::create(gb, gl, 0), diff),
              diff);
          Value bias = arith::MulFOp::create(
              gb, gl, slopeOf(gb, gl, r),
              LinalgBuilder::indexToF32(gb, gl, distance));
          s = arith::SubFOp::create(gb, gl, s, bias);
        }
        return s;
      });
}

/// The tile's share of a decayed term: the head and, for a per-token decay,
/// the cumulative log decays of its query rows and key columns
/// (prefixLogDecay).
struct TileDecay {
  Value hi, prefixRows, prefixCols;
};

/// The weights of one score tile: the mask (and the padding, keys j >= M)
/// applied through \p visible, relu2's square taken. Softmax keeps the
/// scores, with -inf where a pair is not visible. With \p decay, row r and
/// column c are query row0 + r and key col0 + c.
static Value maskScores(LinalgBuilder &inner, const TermOperands &term,
                        Value scores, TileVisibility visible,
                        Value row0 = Value(), Value col0 = Value(),
                        const TileDecay *decay = nullptr) {
  Score score = term.score;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (decay && decay->prefixRows) {
    inputs = {decay->prefixRows, decay->prefixCols};
    maps = {inner.map(2, {0}), inner.map(2, {1})};
  }
  maps.push_back(inner.map(2, {0, 1}));
  return inner.generic(
      scores, inputs, maps, {kPar, kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value r = linalg::IndexOp::create(gb, gl, 0);
        Value c = linalg::IndexOp::create(gb, gl, 1);
        Value seen = visible(gb, gl, r, c);
        Value s = args.back();
        if (decay) {
          // w_ij d_ij, d_ij = exp(log d_ij) <= 1 (DESIGN §1.2)
          Value i = arith::AddIOp::create(gb, gl, row0, r);
          Value j = arith::AddIOp::create(gb, gl, col0, c);
          Value logD = pairLogDecay(gb, gl, term, decay->hi, i, j,
                                    inputs.empty() ? Value() : args[0],
                                    inputs.empty() ? Value() : args[1]);
          s = arith::MulFOp::create(gb, gl, s,
                                    math::ExpOp::create(gb, gl, logD));
        }
        Value zero = arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
        if (score == Score::Softmax) {
          Value minusInf =
              arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(-INFINITY));
          return arith::SelectOp::create(gb, gl, seen, s, minusInf);
        }
        Value w = s;
        if (score == Score::Relu2) {
          Value r0 = arith::MaximumFOp::create(gb, gl, s, zero);
          w = arith::MulFOp::create(gb, gl, r0, r0);
        }
        return arith::SelectOp::create(gb, gl, seen, w, zero);
      });
}

/// relu2's weights relu(S)^2 of a tile the mask leaves wholly visible.
static Value squareRelu(LinalgBuilder &inner, Value scores) {
  return inner.generic(
      scores, {}, {inner.map(2, {0, 1})}, {kPar, kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
        Value r0 = arith::MaximumFOp::create(gb, gl, args[0], zero);
        return arith::MulFOp::create(gb, gl, r0, r0);
      });
}

Value to_linalg::weightsOf(LinalgBuilder &inner, const TermOperands &term,
                           Value scores, Value full, TileVisibility visible) {
  auto ifOp = scf::IfOp::create(
      inner.b, full,
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder ib(loc, ob);
        LinalgBuilder branch(ib);
        Value w =
            term.score == Score::Relu2 ? squareRelu(branch, scores) : scores;
        scf::YieldOp::create(ib, w);
      },
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder ib(loc, ob);
        LinalgBuilder branch(ib);
        scf::YieldOp::create(ib, maskScores(branch, term, scores, visible));
      });
  return ifOp.getResult(0);
}

/// One online-softmax step on the weights \p weights of a key tile, with
/// \p tt the number of query rows; yields
/// (newMax, z, acc). A row with no visible key so far keeps -inf, and its
/// weights and correction are 0 rather than NaN. Every update writes into
/// its loop-carried tensor so that bufferization reuses the buffers across
/// iterations.
void to_linalg::onlineSoftmaxStep(LinalgBuilder &inner, Value tt, Value weights,
                                  Value vTile, Value negInf, ValueRange iter,
                                  Value full, TileVisibility visible,
                                  bool testFinite, bool skipSettledRescale,
                                  bool staleMax) {
  ImplicitLocOpBuilder &ib = inner.b;
  const bool scratch = iter.size() == 5;
  Value tileMax = inner.rowReduce(weights,
                                  scratch ? inner.refilled(iter[4], -INFINITY)
                                          : inner.filled({tt}, -INFINITY),
                                  true);
  // The row's reference maximum m after this tile. Exact: max(oldMax,
  // tileMax). With staleMax (and the settled rows' rescale skipped), m only
  // moves when the tile's maximum exceeds it by more than kStaleMaxSlack
  // (or m is still -inf): the weights exp(w - m) then reach
  // e^kStaleMaxSlack at most, and z and acc share the same m, so the
  // quotient acc / z is the same (not acc / (z + eps), nor acc / length).
  // With random scores the exact maximum rose in most key tiles for some
  // row of the tile, and the tile x D accumulator was rescaled nearly
  // every time (FlashAttention 4 rescales on the same condition).
  staleMax = staleMax && skipSettledRescale;
  auto raisedMax = [&](OpBuilder &gb, Location gl, Value oldMax,
                       Value tileMax) -> Value {
    if (!staleMax)
      return arith::MaximumFOp::create(gb, gl, oldMax, tileMax);
    Value slack =
        arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(kStaleMaxSlack));
    Value reach = arith::AddFOp::create(gb, gl, oldMax, slack);
    // NaN (a NaN weight) compares false: m stays, the NaN reaches O
    // through its weight.
    Value rises = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OGT,
                                        tileMax, reach);
    return arith::SelectOp::create(gb, gl, rises, tileMax, oldMax);
  };
  // c = exp(oldMax - m), 0 while oldMax = -inf
  Value correction = inner.generic(
      inner.empty({tt}), {iter[0], tileMax},
      {inner.map(1, {0}), inner.map(1, {0}), inner.map(1, {0})}, {kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) {
        Value newMax = raisedMax(gb, gl, args[0], args[1]);
        Value noneYet = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OEQ,
                                              args[0], negInf);
        Value shifted = arith::SubFOp::create(gb, gl, args[0], newMax);
        Value e = math::ExpOp::create(gb, gl, shifted);
        Value zero = arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
        return arith::SelectOp::create(gb, gl, noneYet, zero, e).getResult();
      });
  // newMax = m, in place of the old maximum
  Value newMax = inner.generic(
      iter[0], {tileMax}, {inner.map(1, {0}), inner.map(1, {0})}, {kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) {
        return raisedMax(gb, gl, args[1], args[0]);
      });
  // P = exp(W - shift), shift = newMax, or 0 where newMax = -inf: such a row
  // has only -inf weights (newMax bounds every non-NaN weight of its row),
  // whose exp is 0, and a NaN weight stays NaN, as in the reference. The
  // test is per row, not per weight (per weight it was a compare, a select
  // and the row mask's shuffles for every vector of the tile).
  // (Written over the tile maximum, dead by now: no buffer per key tile.)
  Value shift = inner.generic(
      tileMax, {newMax}, {inner.map(1, {0}), inner.map(1, {0})}, {kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value noneYet = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OEQ,
                                              args[0], negInf);
        Value zero = arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
        return arith::SelectOp::create(gb, gl, noneYet, zero, args[0]);
      });
  Value probs = inner.generic(
      weights, {shift}, {inner.map(2, {0}), inner.map(2, {0, 1})}, {kPar, kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value shifted = arith::SubFOp::create(gb, gl, args[1], args[0]);
        return math::ExpOp::create(gb, gl, shifted);
      });
  // target[r, ...] *= c[r]
  auto scaleRows = [&](LinalgBuilder &builder, Value target, unsigned rank) {
    SmallVector<unsigned> all =
        rank == 1 ? SmallVector<unsigned>{0} : SmallVector<unsigned>{0, 1};
    SmallVector<IteratorType> iters(rank, kPar);
    return builder.generic(
        target, {correction}, {builder.map(rank, {0}), builder.map(rank, all)},
        iters, [](OpBuilder &gb, Location gl, ValueRange args) {
          return arith::MulFOp::create(gb, gl, args[1], args[0]).getResult();
        });
  };
  // z = c z + rowSum(P)
  Value newSums = inner.rowReduce(probs, scaleRows(inner, iter[1], 1), false);
  Value scaledAcc = iter[2];
  if (!skipSettledRescale) {
    scaledAcc = scaleRows(inner, iter[2], 2);
  } else {
    // Once the rows' maxima settle (most key tiles after the first few),
    // every c is 1: the pass over the tile x D accumulator that scales it is
    // skipped (2% of softmax's time, D = 64). 1 where some c != 1 (une: a
    // NaN c scales), into a 1-element tensor.
    Value changed = inner.generic(
        inner.filled({inner.index(1)}, 0.0), {correction},
        {inner.map(2, {1}), inner.map(2, {0})}, {kPar, kRed},
        [](OpBuilder &gb, Location gl, ValueRange args) {
          Value one =
              arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(1.0));
          Value zero =
              arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
          Value differs = arith::CmpFOp::create(
              gb, gl, arith::CmpFPredicate::UNE, args[0], one);
          Value flag = arith::SelectOp::create(gb, gl, differs, one, zero);
          return arith::MaximumFOp::create(gb, gl, args[1], flag).getResult();
        });
    Value anyScaled = arith::CmpFOp::create(
        ib, arith::CmpFPredicate::OGT,
        tensor::ExtractOp::create(ib, changed, ValueRange{inner.index(0)}),
        inner.f32(0.0));
    scaledAcc = scf::IfOp::create(
                    ib, anyScaled,
                    [&](OpBuilder &ob, Location loc) {
                      ImplicitLocOpBuilder nb(loc, ob);
                      LinalgBuilder branch(nb);
                      scf::YieldOp::create(nb, scaleRows(branch, iter[2], 2));
                    },
                    [&](OpBuilder &ob, Location loc) {
                      scf::YieldOp::create(ob, loc, iter[2]);
                    })
                    .getResult(0);
  }
  // acc = c acc + P V
  Value newAcc =
      visibleProduct(inner, probs, vTile, scaledAcc, full, visible, testFinite);
  SmallVector<Value> yields = {newMax, newSums, newAcc};
  if (scratch)
    yields.append({probs, shift});
  scf::YieldOp::create(ib, yields);
}

Value to_linalg::lowerQkFirst(LinalgBuilder &b, const TermOperands &term,
                              const QkFirstTiles &tiles, Value *lse) {
  const int64_t queryTile = tiles.queryTile, keyTile = tiles.keyTile;
  // static-tiles: whole feature rows padded to whole tiles. Otherwise the
  // K^T panels and V tiles every query tile reads are built in one parallel
  // pass, and each query tile maps its own rows of Q.
  const bool staticTiles = tiles.staticTiles;
  Value queryTiles = b.ceilDiv(term.queries, queryTile);
  Value keyTiles = b.ceilDiv(term.keys, keyTile);
  Value paddedQ, paddedRowEps;
  KeyPanels panels;
  if (staticTiles) {
    PaddedOperands padded = padToTiles(b, term, queryTile, keyTile);
    paddedQ = padded.queries;
    paddedRowEps = padded.rowEps;
    panels.panels = padded.keysT;
    panels.values = padded.values;
  } else {
    panels = keyPanelsAndValues(b, term, keyTile, keyTiles);
  }
  // V as the arrays hold it (whole tiles read in place), whatever length
  // the batch element gives its keys.
  const TermOperands &arrays = term;
  bool isSoftmax = term.score == Score::Softmax;
  Value negInf = b.f32(-INFINITY);
  // A per-token decay reads Lambda of every query row and key column.
  const bool decayed = term.decay.hasDecay();
  Value prefix;
  if (term.decay.kind == DecayOperands::Kind::PerToken)
    prefix = prefixLogDecay(b, term,
                            b.maxIdx(b.mul(queryTiles, b.index(queryTile)),
                                     b.mul(keyTiles, b.index(keyTile))));

  auto rowOf = [&](ValueRange ivs) {
    return b.mul(ivs[2], b.index(queryTile));
  };
  auto body = [&](ValueRange ivs, Value validRows) -> RowTile {
    Value bi = ivs[0], hi = ivs[1], row0 = rowOf(ivs);
    // The term as this batch element sees it (its key and query lengths):
    // everything below reads this one.
    const TermOperands batchTerm = forBatch(b, term, bi);
    const TermOperands &term = batchTerm;
    Value rowEps;
    // DESIGN §1.3: the key/value head of this query head, and its ALiBi slope.
    Value kvHi = keyHead(b, term, hi);
    Value slope = term.alibi ? alibiSlope(b, term, hi) : Value();
    Value qTile =
        staticTiles
            ? b.tile2d(paddedQ, bi, hi, row0, queryTile, term.width)
            : queryFeatureTile(b, term, bi, hi, row0, queryTile, rowEps);
    if (paddedRowEps)
      rowEps = b.tile2d(paddedRowEps, bi, hi, row0, queryTile, b.index(1));
    Value t = b.index(queryTile);
    // m = -inf, z = 0, acc = 0
    Value runningMax = b.filled({t}, -INFINITY);
    Value sums = b.filled({t}, 0.0);
    Value acc = b.filled({t, term.valueDim}, 0.0);
    // The score tile and its row maximum are carried too, refilled by every
    // key tile: a zero tile made in the loop is hoisted and merged with acc's
    // (CSE), and bufferization then copies it into a fresh buffer per key
    // tile (a 16 KB copy and an allocation per 64x64 tile, ~4% of softmax).
    SmallVector<Value> carried = {runningMax, sums, acc,
                                  b.empty({t, b.index(keyTile)})};
    if (isSoftmax)
      carried.push_back(b.empty({t}));
    auto [lo, hiTile] =
        visibleKeyTiles(b, term, queryTile, keyTile, row0, keyTiles);
    auto loop = scf::ForOp::create(
        b.b, lo, hiTile, b.index(1), carried,
        [&](OpBuilder &ob, Location loc, Value kt, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, ob);
          LinalgBuilder inner(ib);
          Value col0 = inner.mul(kt, inner.index(keyTile));
          Value kTile =
              inner.panel(panels.panels, bi, kvHi, kt, term.width, keyTile);
          Value vTile =
              valueTile(inner, arrays, panels, bi, kvHi, col0, keyTile);
          // Square tiles (all the pass builds today) share one constant.
          Value tq = inner.index(queryTile);
          Value tk = keyTile == queryTile ? tq : inner.index(keyTile);
          // S = Q_t K_t^T
          Value scores =
              inner.matmulNN(qTile, kTile, inner.refilled(iter[3], 0.0));
          if (term.softcap || slope) {
            auto query = [&](OpBuilder &gb, Location gl, Value r) -> Value {
              return arith::AddIOp::create(gb, gl, row0, r);
            };
            auto slopeOf = [&](OpBuilder &, Location, Value) { return slope; };
            scores =
                modifyScores(inner, term, scores, query, col0,
                             slope ? TileRowSlope(slopeOf) : TileRowSlope());
          }
          Value full =
              tileFullyVisible(inner, term, row0, queryTile, col0, keyTile);
          TileDecay tileDecay{hi, Value(), Value()};
          if (prefix) {
            tileDecay.prefixRows = inner.tile1d(prefix, bi, hi, tq, row0);
            tileDecay.prefixCols = inner.tile1d(prefix, bi, hi, tk, col0);
          }
          auto visible = [&](OpBuilder &gb, Location gl, Value r, Value c) {
            return keyVisible(gb, gl, term,
                              arith::AddIOp::create(gb, gl, row0, r),
                              arith::AddIOp::create(gb, gl, col0, c));
          };
          // Every pair of a decayed term has its own weight.
          Value weights = decayed
                              ? maskScores(inner, term, scores, visible, row0,
                                           col0, &tileDecay)
                              : weightsOf(inner, term, scores, full, visible);
          if (!isSoftmax) {
            // z += rowSum(W); acc += W V_t
            Value newSums = inner.rowReduce(weights, iter[1], false);
            Value newAcc =
                visibleProduct(inner, weights, vTile, iter[2], full, visible,
                               /*testFinite=*/!staticTiles);
            scf::YieldOp::create(ib,
                                 ValueRange{iter[0], newSums, newAcc, weights});
            return;
          }
          onlineSoftmaxStep(inner, tq, weights, vTile, negInf, iter, full,
                            visible, /*testFinite=*/!staticTiles,
                            /*skipSettledRescale=*/!staticTiles,
                            /*staleMax=*/term.normalizer == Normalizer::Rows &&
                                term.eps == 0.0);
        });
    Value rowSums = loop.getResult(1);
    if (term.sinks) {
      // The sink's share of the denominator, exp(sigma_h - m): with it the
      // quotient is o = acc / (z + exp(sigma - m)) (DESIGN §1.3). A row with
      // no visible key (m = -inf) gets an infinite sum and stays 0.
      Value sigma = tensor::ExtractOp::create(b.b, term.sinks, ValueRange{hi});
      rowSums = b.generic(
          rowSums, {loop.getResult(0)}, {b.map(1, {0}), b.map(1, {0})}, {kPar},
          [&](OpBuilder &gb, Location gl, ValueRange args) {
            Value shifted = arith::SubFOp::create(gb, gl, sigma, args[0]);
            return arith::AddFOp::create(gb, gl, args[1],
                                         math::ExpOp::create(gb, gl, shifted))
                .getResult();
          });
    }
    RowTile result{normalizeRows(b, term, loop.getResult(2), rowSums, row0,
                                 queryTile, validRows, rowEps)};
    if (lse) {
      result.perRow = logSumExpRows(b, loop.getResult(0), rowSums);
      if (validRows)
        result.perRow = b.leading(result.perRow, validRows);
    }
    return result;
  };
  return forallRowTiles(b, term, queryTile, tiles.staticTiles,
                        {term.batch, term.heads, queryTiles}, body, rowOf, lse);
}
