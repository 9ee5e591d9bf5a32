//===- Decay.cpp - Decay and key weights of kernel terms ------------------===//
//
// DESIGN §1.2: a visible pair j <= i weighs d_ij = prod_{t=j+1..i} g_t times
// kappa_j times phi(q_i) . phi(k_j). Every strategy works from sums of
// log g, never from the products: over N = 65536 tokens at g = 0.9 the
// product is e^-6900, far below f32's range, while every factor the
// strategies form, exp(lambda_r - lambda_c) with c <= r, lies in [0, 1].
//
//  - chunked kv-first reads the in-chunk cumulative sums lambda (chunkLogDecay)
//    and decays the carried state by exp(lambda_last) once per chunk;
//  - qk-first reads the cumulative sums of the whole sequence
//    (prefixLogDecay) for a per-token g, and (i - j) log g otherwise.
//
// log g is clamped at kMinLogDecay, so that g = 0 (a gate that forgets
// everything) gives weights of e^-80 ~ 1.8e-35 instead of a NaN from
// -inf - (-inf).
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

/// The smallest log g the strategies use.
static constexpr double kMinLogDecay = -80.0;

DecayOperands to_linalg::buildDecayOperands(LinalgBuilder &b, TermOp op) {
  DecayOperands decay;
  decay.keyWeight = op.getKeyWeight();
  if (std::optional<APFloat> rate = op.getDecayRate()) {
    decay.kind = DecayOperands::Kind::Rate;
    decay.logRate =
        b.f32(std::max(std::log(rate->convertToDouble()), kMinLogDecay));
  } else if (Value g = op.getDecay()) {
    decay.decay = g;
    decay.kind = cast<RankedTensorType>(g.getType()).getRank() == 1
                     ? DecayOperands::Kind::PerHead
                     : DecayOperands::Kind::PerToken;
  }
  return decay;
}

/// max(log x, kMinLogDecay).
static Value clampedLog(OpBuilder &ob, Location loc, Value x) {
  Value logX = math::LogOp::create(ob, loc, x);
  Value lowest =
      arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(kMinLogDecay));
  return arith::MaximumFOp::create(ob, loc, logX, lowest);
}

/// log g of head \p hi for Rate and PerHead decay (a scalar).
static Value headLogDecay(OpBuilder &ob, Location loc,
                          const DecayOperands &decay, Value hi) {
  if (decay.kind == DecayOperands::Kind::Rate)
    return decay.logRate;
  Value g = tensor::ExtractOp::create(ob, loc, decay.decay, ValueRange{hi});
  return clampedLog(ob, loc, g);
}

Value to_linalg::tokenLogDecay(LinalgBuilder &b, const TermOperands &term,
                               Value bi, Value hi, Value row0, int64_t rows) {
  const DecayOperands &decay = term.decay;
  ImplicitLocOpBuilder &ib = b.b;
  Value headLog;
  if (decay.kind != DecayOperands::Kind::PerToken)
    headLog = headLogDecay(ib, ib.getLoc(), decay, hi);
  Value last = b.sub(term.queries, b.index(1));
  return b.generic(
      b.empty({b.index(rows)}), {}, {b.map(1, {0})}, {kPar},
      [&](OpBuilder &gb, Location gl, ValueRange) -> Value {
        Value r = linalg::IndexOp::create(gb, gl, 0);
        Value t = arith::AddIOp::create(gb, gl, row0, r);
        Value inside = arith::CmpIOp::create(gb, gl, arith::CmpIPredicate::ult,
                                             t, term.queries);
        Value logG = headLog;
        if (!logG) {
          Value at = arith::MinUIOp::create(gb, gl, t, last);
          Value g = tensor::ExtractOp::create(gb, gl, decay.decay,
                                              ValueRange{bi, hi, at});
          logG = clampedLog(gb, gl, g);
        }
        Value zero = arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
        return arith::SelectOp::create(gb, gl, inside, logG, zero);
      });
}

Value to_linalg::chunkLogDecay(LinalgBuilder &b, const TermOperands &term,
                               Value bi, Value hi, Value row0, int64_t rows) {
  const DecayOperands &decay = term.decay;
  ImplicitLocOpBuilder &ib = b.b;
  Value rowCount = b.index(rows);
  if (decay.kind != DecayOperands::Kind::PerToken) {
    // lambda_r = (number of real positions in [row0, row0 + r]) log g
    Value logG = headLogDecay(ib, ib.getLoc(), decay, hi);
    Value real = realRows(b, row0, rows, term.queries);
    return b.generic(b.empty({rowCount}), {}, {b.map(1, {0})}, {kPar},
                     [&](OpBuilder &gb, Location gl, ValueRange) -> Value {
                       Value r = linalg::IndexOp::create(gb, gl, 0);
                       Value one = arith::ConstantIndexOp::create(gb, gl, 1);
                       Value count = arith::MinUIOp::create(
                           gb, gl, arith::AddIOp::create(gb, gl, r, one), real);
                       return arith::MulFOp::create(
                           gb, gl, LinalgBuilder::indexToF32(gb, gl, count),
                           logG);
                     });
  }
  // log g_t of every position of the tile, 0 past N (padding: g = 1).
  Value logs = tokenLogDecay(b, term, bi, hi, row0, rows);
  // lambda_r = sum_{c <= r} log g_{row0 + c}
  return b.generic(
      b.filled({rowCount}, 0.0), {logs}, {b.map(2, {1}), b.map(2, {0})},
      {kPar, kRed}, [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value r = linalg::IndexOp::create(gb, gl, 0);
        Value c = linalg::IndexOp::create(gb, gl, 1);
        Value upTo =
            arith::CmpIOp::create(gb, gl, arith::CmpIPredicate::ule, c, r);
        Value sum = arith::AddFOp::create(gb, gl, args[1], args[0]);
        return arith::SelectOp::create(gb, gl, upTo, sum, args[1]);
      });
}

Value to_linalg::prefixLogDecay(LinalgBuilder &b, const TermOperands &term,
                                Value length) {
  constexpr int64_t kScanChunk = 64;
  ImplicitLocOpBuilder &ob = b.b;
  Value chunks = b.ceilDiv(length, kScanChunk);
  Value padded = b.mul(chunks, b.index(kScanChunk));
  Value out = b.empty({term.batch, term.heads, padded});
  auto forall = scf::ForallOp::create(
      ob,
      ArrayRef<OpFoldResult>{LinalgBuilder::ofr(term.batch),
                             LinalgBuilder::ofr(term.heads)},
      ValueRange{out}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(forall.getTerminator());
    Value bi = forall.getInductionVars()[0];
    Value hi = forall.getInductionVars()[1];
    Value headRow = b.empty({padded});
    // Lambda_{-1} = 0 in a 1-element tensor (the GPU mapping lowers every op
    // to loops, and a scalar carried by scf.for would live on the host).
    Value carry = b.filled({b.index(1)}, 0.0);
    auto loop = scf::ForOp::create(
        ob, b.index(0), chunks, b.index(1), ValueRange{carry, headRow},
        [&](OpBuilder &nb, Location loc, Value ci, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nb);
          LinalgBuilder inner(ib);
          Value row0 = inner.mul(ci, inner.index(kScanChunk));
          Value local = chunkLogDecay(inner, term, bi, hi, row0, kScanChunk);
          // Lambda_{row0 + r} = Lambda_{row0 - 1} + lambda_r
          AffineMap first = AffineMap::get(1, 0, {ib.getAffineConstantExpr(0)},
                                           ib.getContext());
          Value global = inner.generic(
              inner.empty({inner.index(kScanChunk)}), {local, iter[0]},
              {inner.map(1, {0}), first, inner.map(1, {0})}, {kPar},
              [](OpBuilder &gb, Location gl, ValueRange args) {
                return arith::AddFOp::create(gb, gl, args[0], args[1])
                    .getResult();
              });
          Value newRow = tensor::InsertSliceOp::create(
              ib, global, iter[1], ArrayRef<OpFoldResult>{row0},
              ArrayRef<OpFoldResult>{ib.getIndexAttr(kScanChunk)},
              ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
          // Lambda_{row0 + C - 1} = Lambda_{row0 - 1} + lambda_{C-1}, in place
          // of the carry (an accumulation: a copy into it would fold away and
          // leave a yield that does not bufferize in place).
          AffineMap lastLocal =
              AffineMap::get(1, 0, {ib.getAffineConstantExpr(kScanChunk - 1)},
                             ib.getContext());
          Value newCarry = inner.generic(
              iter[0], {local}, {lastLocal, inner.map(1, {0})}, {kPar},
              [](OpBuilder &gb, Location gl, ValueRange args) {
                return arith::AddFOp::create(gb, gl, args[1], args[0])
                    .getResult();
              });
          scf::YieldOp::create(ib, ValueRange{newCarry, newRow});
        });
    ob.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        ob, loop.getResult(1), forall.getRegionIterArgs()[0],
        {bi, hi, ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(padded)},
        SmallVector<OpFoldResult>(3, ob.getIndexAttr(1)));
  }
  return forall.getResult(0);
}

Value to_linalg::pairLogDecay(OpBuilder &ob, Location loc,
                              const TermOperands &term, Value hi, Value i,
                              Value j, Value prefixI, Value prefixJ) {
  Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
  if (term.decay.kind == DecayOperands::Kind::PerToken) {
    // Lambda_i - Lambda_j, at most 0 for j <= i (rounding may leave a
    // positive residue, which would let a weight exceed 1).
    Value diff = arith::SubFOp::create(ob, loc, prefixI, prefixJ);
    return arith::MinimumFOp::create(ob, loc, diff, zero);
  }
  // (i - j) log g, exact in the distance; 0 for a hidden pair (j > i).
  Value logG = headLogDecay(ob, loc, term.decay, hi);
  Value visible =
      arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ule, j, i);
  Value distance = arith::SubIOp::create(ob, loc, i, j);
  Value scaled = arith::MulFOp::create(
      ob, loc, LinalgBuilder::indexToF32(ob, loc, distance), logG);
  return arith::SelectOp::create(ob, loc, visible, scaled, zero);
}

Value to_linalg::applyKeyWeight(LinalgBuilder &b, const TermOperands &term,
                                Value phiK, Value bi, Value hi, Value row0) {
  Value weight = term.decay.keyWeight;
  if (!weight)
    return phiK;
  // phi(k_{row0 + r}) kappa_{row0 + r}; rows past M are 0 already.
  Value last = b.sub(term.keys, b.index(1));
  return b.generic(
      phiK, {}, {b.map(2, {0, 1})}, {kPar, kPar},
      [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
        Value r = linalg::IndexOp::create(gb, gl, 0);
        Value t = arith::AddIOp::create(gb, gl, row0, r);
        Value at = arith::MinUIOp::create(gb, gl, t, last);
        Value kappa =
            tensor::ExtractOp::create(gb, gl, weight, ValueRange{bi, hi, at});
        return arith::MulFOp::create(gb, gl, args[0], kappa).getResult();
      });
}

Value to_linalg::applyKeyWeightRows(LinalgBuilder &b, const TermOperands &term,
                                    Value phiK) {
  Value weight = term.decay.keyWeight;
  if (!weight)
    return phiK;
  // phi(K) [B, H, M, W] times kappa [B, H, M], row by row.
  return b.generic(
      phiK, {weight}, {b.map(4, {0, 1, 2}), b.map(4, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar},
      [](OpBuilder &gb, Location gl, ValueRange args) {
        return arith::MulFOp::create(gb, gl, args[1], args[0]).getResult();
      });
}
