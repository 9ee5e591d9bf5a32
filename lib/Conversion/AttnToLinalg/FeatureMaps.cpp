//===- FeatureMaps.cpp - Feature rows and the Linformer projection --------===//
//
// Every strategy works on feature rows, computed once per row: phi(Q),
// phi(K) for a kernel term, (Q s, K) for softmax and relu2, so that the scale
// is applied N times rather than N M times. Two forms: whole sequences before
// any tiling (buildFeatureRows, the static-tiles form the GPU pipeline uses),
// or one tile of rows where a strategy consumes it (featureTile, the CPU
// form: no pass over the sequence, and the tile is still in L1 when the
// product reads it). Linformer's projections E K and F V come before, and
// shorten the key sequence.
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

/// X' = P X per (batch, head) for the CPU: one forall iteration per
/// (batch, head), the sequence in tiles of \p tile rows, each
/// X'_bh += P_t X_t a register-tiled product (P^T's rows and X's, zero past
/// N). The 5-D contraction as one linalg.generic ran as a scalar loop nest
/// on one core (~2 GFLOP/s: Linformer's projections were 98% of its time).
static Value projectSequenceInTiles(LinalgBuilder &b, Value projection, Value x,
                                    int64_t tile) {
  ImplicitLocOpBuilder &ob = b.b;
  Value rows = b.dim(projection, 0), length = b.dim(x, 2), width = b.dim(x, 3);
  Value batch = b.dim(x, 0), heads = b.dim(x, 1);
  // P^T [N, k] once, as a [1, 1, N, k] tensor whose row tiles rowTile pads.
  Value transposed = b.transposeTile(projection);
  auto transposedType = cast<RankedTensorType>(transposed.getType());
  SmallVector<int64_t> expandedShape = {1, 1, transposedType.getDimSize(0),
                                        transposedType.getDimSize(1)};
  Value expanded = tensor::ExpandShapeOp::create(
      ob, RankedTensorType::get(expandedShape, transposedType.getElementType()),
      transposed, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}},
      SmallVector<OpFoldResult>{ob.getIndexAttr(1), ob.getIndexAttr(1),
                                LinalgBuilder::ofr(length),
                                LinalgBuilder::ofr(rows)});
  Value tiles = b.ceilDiv(length, tile);
  Value projected = b.empty({batch, heads, rows, width});
  auto forall =
      scf::ForallOp::create(ob,
                            ArrayRef<OpFoldResult>{LinalgBuilder::ofr(batch),
                                                   LinalgBuilder::ofr(heads)},
                            ValueRange{projected}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(forall.getTerminator());
    Value bi = forall.getInductionVars()[0];
    Value hi = forall.getInductionVars()[1];
    Value zero = b.index(0);
    auto loop = scf::ForOp::create(
        ob, zero, tiles, b.index(1), ValueRange{b.filled({rows, width}, 0.0)},
        [&](OpBuilder &nb, Location loc, Value t, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nb);
          LinalgBuilder inner(ib);
          Value row0 = inner.mul(t, inner.index(tile));
          Value pTile =
              rowTile(inner, expanded, zero, zero, row0, tile, length);
          Value xTile = rowTile(inner, x, bi, hi, row0, tile, length);
          scf::YieldOp::create(ib, inner.matmulTN(pTile, xTile, iter[0]));
        });
    ob.setInsertionPointToStart(forall.getTerminator().getBody());
    storeHeadRows(ob, forall, loop.getResult(0), bi, hi, rows, width);
  }
  return forall.getResult(0);
}

Value to_linalg::projectSequence(LinalgBuilder &b, Value projection, Value x,
                                 int64_t tile, bool staticTiles) {
  if (!staticTiles)
    return projectSequenceInTiles(b, projection, x, tile);
  Value rows = b.dim(projection, 0);
  Value init = b.filled({b.dim(x, 0), b.dim(x, 1), rows, b.dim(x, 3)}, 0.0);
  // (b, h, r, d, j)
  return b.generic(
      init, {projection, x},
      {b.map(5, {2, 4}), b.map(5, {0, 1, 4, 3}), b.map(5, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar, kRed},
      [](OpBuilder &ob, Location loc, ValueRange args) {
        return LinalgBuilder::mulAdd(ob, loc, args[0], args[1], args[2]);
      });
}

/// The term's scale s: the clause or the default 1/sqrt(D), at run time
/// when D is dynamic.
static Value scaleValue(LinalgBuilder &b, TermOp op, Value featureDim) {
  if (std::optional<double> s = op.getEffectiveScale())
    return b.f32(*s);
  Value d = LinalgBuilder::indexToF32(b.b, b.b.getLoc(), featureDim);
  return arith::DivFOp::create(b.b, b.f32(1.0), math::SqrtOp::create(b.b, d));
}

/// Elementwise map of a 4-D tensor, with the sequence position available.
static Value
mapRows(LinalgBuilder &b, Value x, Value init,
        function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
  return b.generic(init, {x}, {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2, 3})},
                   {kPar, kPar, kPar, kPar},
                   [&](OpBuilder &ob, Location loc, ValueRange args) {
                     Value pos = linalg::IndexOp::create(ob, loc, 2);
                     // An f16 / bf16 Q or K (C19) widens as it is mapped.
                     Value e = args[0];
                     if (!e.getType().isF32())
                       e = arith::ExtFOp::create(ob, loc, ob.getF32Type(), e);
                     return fn(ob, loc, e, pos);
                   });
}

/// tensor.empty [B, H, L, lastDim] for the 4-D \p x [B, H, L, X].
static Value emptyLike(LinalgBuilder &b, Value x, Value lastDim) {
  return b.empty({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), lastDim});
}

static Value relu(OpBuilder &ob, Location loc, Value x) {
  Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
  return arith::MaximumFOp::create(ob, loc, x, zero);
}

/// phi(e) of one element for identity, relu and elu1.
static Value pointwiseFeature(OpBuilder &ob, Location loc, FeatureMap fm,
                              Value e) {
  if (fm == FeatureMap::Identity)
    return e;
  if (fm == FeatureMap::Relu)
    return relu(ob, loc, e);
  // elu1: x + 1 for x > 0, e^x otherwise, as max(x, 0) + e^min(x, 0)
  // (e^0 = 1). Each half is `x pred 0 ? 0 : x`, one max or min instruction
  // on x86 that keeps a NaN x, and the exponent is known to be at most 0,
  // so that attn-approximate-math drops exp's overflow clamp. (The select
  // of x + 1 or e^x took a compare and a blend more, ~10% of the feature
  // map's instructions.)
  Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
  auto zeroWhere = [&](arith::CmpFPredicate pred) -> Value {
    Value beyond = arith::CmpFOp::create(ob, loc, pred, e, zero);
    return arith::SelectOp::create(ob, loc, beyond, zero, e);
  };
  Value positivePart = zeroWhere(arith::CmpFPredicate::OLT);
  Value negativePart = zeroWhere(arith::CmpFPredicate::OGT);
  return arith::AddFOp::create(ob, loc, positivePart,
                               math::ExpOp::create(ob, loc, negativePart));
}

/// phi(x) for identity, relu and elu1.
static Value pointwiseFeatures(LinalgBuilder &b, FeatureMap fm, Value x) {
  if (fm == FeatureMap::Identity)
    return widened(b, x);
  return mapRows(b, x, emptyLike(b, x, b.dim(x, 3)),
                 [&](OpBuilder &ob, Location loc, Value e, Value) {
                   return pointwiseFeature(ob, loc, fm, e);
                 });
}

/// cosFormer's angle pi pos / 2L, with \p angleScale = pi / 2L.
static Value cosformerTrig(OpBuilder &ob, Location loc, Value pos,
                           Value angleScale, bool isSin) {
  Value angle = arith::MulFOp::create(
      ob, loc, LinalgBuilder::indexToF32(ob, loc, pos), angleScale);
  return isSin ? math::SinOp::create(ob, loc, angle).getResult()
               : math::CosOp::create(ob, loc, angle).getResult();
}

/// cosFormer: [relu(x) cos(pi i / 2L), relu(x) sin(pi i / 2L)], L = max(N, M),
/// written as two halves of the 2D-wide feature row.
static Value cosformerFeatures(LinalgBuilder &b, Value x, Value length) {
  Value width = b.dim(x, 3);
  Value lengthF = LinalgBuilder::indexToF32(b.b, b.b.getLoc(), length);
  Value angleScale = arith::DivFOp::create(b.b, b.f32(M_PI / 2.0), lengthF);
  auto half = [&](bool isSin) {
    return mapRows(
        b, x, emptyLike(b, x, width),
        [&](OpBuilder &ob, Location loc, Value e, Value pos) {
          Value trig = cosformerTrig(ob, loc, pos, angleScale, isSin);
          return arith::MulFOp::create(ob, loc, relu(ob, loc, e), trig)
              .getResult();
        });
  };
  Value result = emptyLike(b, x, b.add(width, width));
  SmallVector<OpFoldResult> strides(4, b.b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {
      LinalgBuilder::ofr(b.dim(x, 0)), LinalgBuilder::ofr(b.dim(x, 1)),
      LinalgBuilder::ofr(b.dim(x, 2)), LinalgBuilder::ofr(width)};
  SmallVector<OpFoldResult> first = {b.b.getIndexAttr(0), b.b.getIndexAttr(0),
                                     b.b.getIndexAttr(0), b.b.getIndexAttr(0)};
  SmallVector<OpFoldResult> second = first;
  second[3] = LinalgBuilder::ofr(width);
  result = tensor::InsertSliceOp::create(b.b, half(false), result, first, sizes,
                                         strides);
  return tensor::InsertSliceOp::create(b.b, half(true), result, second, sizes,
                                       strides);
}

/// FAVOR+: exp(w x' - |x'|^2 / 2) / sqrt(m), x' = x s^(1/2), so that
/// phi(q) . phi(k) estimates exp(s q . k).
Value to_linalg::favorStabiliser(LinalgBuilder &b, Value omega,
                                 double headroom) {
  // |w_r|^2 per feature, then c = max(0, max_r |w_r|^2 / 2 - headroom) into
  // one element (not 0-d: the GPU mapping lowers every op to loops).
  Value squares = b.generic(
      b.filled({b.dim(omega, 0)}, 0.0), {omega},
      {b.map(2, {0, 1}), b.map(2, {0})}, {kPar, kRed},
      [](OpBuilder &ob, Location loc, ValueRange args) {
        return LinalgBuilder::mulAdd(ob, loc, args[0], args[0], args[1]);
      });
  return b.generic(
      b.filled({b.index(1)}, 0.0), {squares},
      {b.map(2, {1}), b.map(2, {0})}, {kPar, kRed},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value half = arith::MulFOp::create(
            ob, loc, args[0],
            arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.5)));
        Value above = arith::SubFOp::create(
            ob, loc, half,
            arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(headroom)));
        return arith::MaximumFOp::create(ob, loc, args[1], above).getResult();
      });
}

/// FAVOR+ over whole rows, with \p shiftTensor ([1]) the keys' stabiliser
/// c_k (or null: unstabilised). Keys: c_k subtracted from every exponent.
/// Queries (\p rowEps given): each row's own maximum less kFavorHeadroom,
/// and *rowEps = eps exp(-(c_r + c_k)) [B, H, N, 1].
static Value favorFeatures(LinalgBuilder &b, const TermOperands &term,
                           Value x, Value shiftTensor, Value *rowEps) {
  TermOp op = term.op;
  Value featureDim = term.featureDim;
  Value omega = op.getOmega();
  Value numFeatures = b.dim(omega, 0);
  Value rootScale = math::SqrtOp::create(b.b, scaleValue(b, op, featureDim));
  // (b, h, i, f, d): w x'
  Value proj = b.generic(
      b.filled({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), numFeatures}, 0.0),
      {x, omega},
      {b.map(5, {0, 1, 2, 4}), b.map(5, {3, 4}), b.map(5, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar, kRed},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value scaled = arith::MulFOp::create(ob, loc, args[0], rootScale);
        return LinalgBuilder::mulAdd(ob, loc, scaled, args[1], args[2]);
      });
  // (b, h, i, d): |x'|^2 / 2
  Value halfNorm = b.generic(
      b.filled({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2)}, 0.0), {x},
      {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2})}, {kPar, kPar, kPar, kRed},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value scaled = arith::MulFOp::create(ob, loc, args[0], rootScale);
        Value sq = arith::MulFOp::create(ob, loc, scaled, scaled);
        Value half = arith::MulFOp::create(
            ob, loc, sq,
            arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.5)));
        return arith::AddFOp::create(ob, loc, args[1], half).getResult();
      });
  Value invRootM = arith::DivFOp::create(
      b.b, b.f32(1.0),
      math::SqrtOp::create(
          b.b, LinalgBuilder::indexToF32(b.b, b.b.getLoc(), numFeatures)));
  AffineMap element0 =
      AffineMap::get(4, 0, {b.b.getAffineConstantExpr(0)}, b.b.getContext());
  if (rowEps) {
    // Queries: c_r = max_f (w x')_f - |x'|^2 / 2 - headroom per row.
    Value projMax = b.generic(
        b.filled({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2)}, -INFINITY), {proj},
        {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2})},
        {kPar, kPar, kPar, kRed},
        [](OpBuilder &ob, Location loc, ValueRange args) {
          return arith::MaximumFOp::create(ob, loc, args[0], args[1])
              .getResult();
        });
    Value headroom = b.f32(kFavorHeadroom);
    double eps = term.eps;
    *rowEps = b.generic(
        b.empty({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), b.index(1)}),
        {projMax, halfNorm, shiftTensor},
        {b.map(4, {0, 1, 2}), b.map(4, {0, 1, 2}), element0,
         b.map(4, {0, 1, 2, 3})},
        {kPar, kPar, kPar, kPar},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value shift = arith::SubFOp::create(ob, loc, args[0], args[1]);
          shift = arith::SubFOp::create(ob, loc, shift, headroom);
          Value total = arith::AddFOp::create(ob, loc, shift, args[2]);
          Value factor = math::ExpOp::create(
              ob, loc, arith::NegFOp::create(ob, loc, total));
          return arith::MulFOp::create(
                     ob, loc, factor,
                     arith::ConstantOp::create(ob, loc,
                                               ob.getF32FloatAttr(eps)))
              .getResult();
        });
    return b.generic(
        b.empty({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), numFeatures}),
        {proj, projMax},
        {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2}), b.map(4, {0, 1, 2, 3})},
        {kPar, kPar, kPar, kPar},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value top = arith::SubFOp::create(ob, loc, args[1], headroom);
          Value arg = arith::SubFOp::create(ob, loc, args[0], top);
          Value e = math::ExpOp::create(ob, loc, arg);
          return arith::MulFOp::create(ob, loc, e, invRootM).getResult();
        });
  }
  SmallVector<Value> inputs = {proj, halfNorm};
  SmallVector<AffineMap> maps = {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2})};
  if (shiftTensor) {
    // The stabiliser's one element, read by every (b, h, i, f): a tensor
    // input rather than a scalar, which the GPU mapping could not place.
    inputs.push_back(shiftTensor);
    maps.push_back(element0);
  }
  maps.push_back(b.map(4, {0, 1, 2, 3}));
  return b.generic(
      b.empty({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), numFeatures}), inputs,
      maps, {kPar, kPar, kPar, kPar},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value arg = arith::SubFOp::create(ob, loc, args[0], args[1]);
        if (shiftTensor)
          arg = arith::SubFOp::create(ob, loc, arg, args[2]);
        Value e = math::ExpOp::create(ob, loc, arg);
        return arith::MulFOp::create(ob, loc, e, invRootM).getResult();
      });
}

/// 1 / sqrt(sumSquares), 0 for a zero row: x / |x| with 0 for x = 0. As
/// exp(-log(sumSquares) / 2): exp and log have vectorisable polynomial
/// forms on every target (attn-approximate-math), a square root inside a
/// GPU kernel would call libdevice.
static Value inverseNorm(OpBuilder &ob, Location loc, Value sumSquares) {
  Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
  Value minusHalf =
      arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(-0.5));
  Value positive = arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OGT,
                                         sumSquares, zero);
  Value inverse = math::ExpOp::create(
      ob, loc,
      arith::MulFOp::create(ob, loc, math::LogOp::create(ob, loc, sumSquares),
                            minusHalf));
  return arith::SelectOp::create(ob, loc, positive, inverse, zero);
}

/// RFA's [sin(a), cos(a)] / sqrt(m) for the angle a = (w x)_f / |x| (h = 0:
/// the sine half).
static Value rfaFeature(OpBuilder &ob, Location loc, Value half,
                        Value projection, Value invNorm, Value invRootM) {
  Value angle = arith::MulFOp::create(ob, loc, projection, invNorm);
  Value isCos =
      arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ne, half,
                            arith::ConstantIndexOp::create(ob, loc, 0));
  Value trig = arith::SelectOp::create(ob, loc, isCos,
                                       math::CosOp::create(ob, loc, angle),
                                       math::SinOp::create(ob, loc, angle));
  return arith::MulFOp::create(ob, loc, trig, invRootM);
}

/// RFA over whole rows: [B, H, L, 2m].
static Value rfaFeatures(LinalgBuilder &b, const TermOperands &term, Value x) {
  TermOp op = term.op;
  Value omega = op.getOmega();
  Value numFeatures = b.dim(omega, 0);
  Value d0 = b.dim(x, 0), d1 = b.dim(x, 1), d2 = b.dim(x, 2);
  // (b, h, i, f, d): w x
  Value proj = b.generic(
      b.filled({d0, d1, d2, numFeatures}, 0.0), {x, omega},
      {b.map(5, {0, 1, 2, 4}), b.map(5, {3, 4}), b.map(5, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar, kRed},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        return LinalgBuilder::mulAdd(ob, loc, args[0], args[1], args[2]);
      });
  // (b, h, i, d): |x|^2
  Value sumSquares = b.generic(
      b.filled({d0, d1, d2}, 0.0), {x},
      {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2})}, {kPar, kPar, kPar, kRed},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        return LinalgBuilder::mulAdd(ob, loc, args[0], args[0], args[1]);
      });
  Value invRootM = term.features.invRootM;
  Value both = b.generic(
      b.empty({d0, d1, d2, b.index(2), numFeatures}), {proj, sumSquares},
      {b.map(5, {0, 1, 2, 4}), b.map(5, {0, 1, 2}), b.map(5, {0, 1, 2, 3, 4})},
      {kPar, kPar, kPar, kPar, kPar},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value half = linalg::IndexOp::create(ob, loc, 3);
        return rfaFeature(ob, loc, half, args[0], inverseNorm(ob, loc, args[1]),
                          invRootM);
      });
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2}, {3, 4}};
  return tensor::CollapseShapeOp::create(b.b, both, groups);
}

std::pair<Value, Value> to_linalg::buildFeatureRows(LinalgBuilder &b,
                                                    const TermOperands &term,
                                                    Value *queryRowEps) {
  if (queryRowEps)
    *queryRowEps = Value();
  TermOp op = term.op;
  Value q = term.rawQ, k = term.rawK, queries = term.queries,
        featureDim = term.featureDim;
  if (!op.hasProductForm()) {
    // softmax and relu2 score q s . k: scale the N query rows once.
    Value s = scaleValue(b, op, featureDim);
    Value fq =
        mapRows(b, q, emptyLike(b, q, featureDim),
                [&](OpBuilder &ob, Location loc, Value e, Value) {
                  return arith::MulFOp::create(ob, loc, e, s).getResult();
                });
    return {fq, widened(b, k)};
  }
  if (*op.getFeatureMap() == FeatureMap::FavorPlus ||
      *op.getFeatureMap() == FeatureMap::Rfa) {
    // Their features are products with omega over whole rows.
    q = widened(b, q);
    k = widened(b, k);
  }
  switch (*op.getFeatureMap()) {
  case FeatureMap::FavorPlus: {
    Value keyShift = term.features.favorShiftTensor;
    // The stabilised form needs the caller to take the rows' eps.
    bool stabilised = keyShift && queryRowEps;
    Value fq = favorFeatures(b, term, q, stabilised ? keyShift : Value(),
                             stabilised ? queryRowEps : nullptr);
    Value fk = favorFeatures(b, term, k, stabilised ? keyShift : Value(),
                             nullptr);
    return {fq, applyKeyWeightRows(b, term, fk)};
  }
  case FeatureMap::Rfa:
    return {rfaFeatures(b, term, q),
            applyKeyWeightRows(b, term, rfaFeatures(b, term, k))};
  case FeatureMap::CosFormer: {
    // L = max(N, M) of the term as written (before any projection).
    Value length = b.maxIdx(queries, b.dim(op.getKey(), 2));
    Value fq = cosformerFeatures(b, q, length);
    Value fk = cosformerFeatures(b, k, length);
    return {fq, applyKeyWeightRows(b, term, fk)};
  }
  default: {
    Value fq = pointwiseFeatures(b, *op.getFeatureMap(), q);
    Value fk = pointwiseFeatures(b, *op.getFeatureMap(), k);
    return {fq, applyKeyWeightRows(b, term, fk)};
  }
  }
}

//===----------------------------------------------------------------------===//
// Feature tiles
//===----------------------------------------------------------------------===//

FeatureTiles to_linalg::buildFeatureTiles(LinalgBuilder &b, TermOp op,
                                          Value queries, Value featureDim,
                                          bool staticTiles) {
  FeatureTiles tiles;
  if (!op.hasProductForm()) {
    tiles.scale = scaleValue(b, op, featureDim);
    return tiles;
  }
  tiles.map = *op.getFeatureMap();
  if (tiles.map == FeatureMap::CosFormer) {
    Value length = b.maxIdx(queries, b.dim(op.getKey(), 2));
    Value lengthF = LinalgBuilder::indexToF32(b.b, b.b.getLoc(), length);
    tiles.angleScale = arith::DivFOp::create(b.b, b.f32(M_PI / 2.0), lengthF);
  }
  if (tiles.map == FeatureMap::Rfa) {
    Value omega = op.getOmega();
    Value numFeatures = b.dim(omega, 0);
    tiles.invRootM = arith::DivFOp::create(
        b.b, b.f32(1.0),
        math::SqrtOp::create(
            b.b, LinalgBuilder::indexToF32(b.b, b.b.getLoc(), numFeatures)));
    tiles.omegaT = b.generic(
        b.empty({b.dim(omega, 1), numFeatures}), {omega},
        {b.map(2, {1, 0}), b.map(2, {0, 1})}, {kPar, kPar},
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  }
  if (tiles.map == FeatureMap::FavorPlus) {
    Value omega = op.getOmega();
    Value numFeatures = b.dim(omega, 0);
    tiles.rootScale = math::SqrtOp::create(b.b, scaleValue(b, op, featureDim));
    tiles.invRootM = arith::DivFOp::create(
        b.b, b.f32(1.0),
        math::SqrtOp::create(
            b.b, LinalgBuilder::indexToF32(b.b, b.b.getLoc(), numFeatures)));
    if (op.getEffectiveNormalizer() == Normalizer::Rows) {
      // A constant for the keys; the queries subtract their own row maxima
      // (and scale eps per row).
      tiles.favorShiftTensor = favorStabiliser(b, omega, kFavorKeyHeadroom);
      if (!staticTiles)
        tiles.favorShift = tensor::ExtractOp::create(
            b.b, tiles.favorShiftTensor, ValueRange{b.index(0)});
    }
    // w^T [D, m] once, so that every tile's projection is a plain product.
    tiles.omegaT = b.generic(
        b.empty({b.dim(omega, 1), numFeatures}), {omega},
        {b.map(2, {1, 0}), b.map(2, {0, 1})}, {kPar, kPar},
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  }
  return tiles;
}

bool to_linalg::isElementwiseFeature(const FeatureTiles &features,
                                     bool keySide) {
  if (!features.map)
    return !keySide; // q s; the key side is K itself
  return *features.map != FeatureMap::FavorPlus &&
         *features.map != FeatureMap::Rfa;
}

Value to_linalg::featureTile(LinalgBuilder &b, const FeatureTiles &features,
                             Value tile, Value row0, Value validRows,
                             bool keySide, Value *rowShift) {
  auto type = cast<RankedTensorType>(tile.getType());
  int64_t rows = type.getDimSize(0);
  Value rowsV = b.index(rows);
  Value inWidth = b.dim(tile, 1);
  // Rows r >= validRows are padding: their features are 0 (phi(0) is not).
  auto masked = [&](OpBuilder &ob, Location loc, Value phi) -> Value {
    if (!validRows)
      return phi;
    Value r = linalg::IndexOp::create(ob, loc, 0);
    Value valid =
        arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult, r, validRows);
    Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
    return arith::SelectOp::create(ob, loc, valid, phi, zero);
  };
  auto elementwise = [&](Value init, Value x, auto fn) {
    return b.generic(init, {x}, {b.map(2, {0, 1}), b.map(2, {0, 1})},
                     {kPar, kPar},
                     [&](OpBuilder &ob, Location loc, ValueRange args) {
                       return masked(ob, loc, fn(ob, loc, args[0]));
                     });
  };

  if (!features.map && keySide)
    // softmax and relu2 score q s . k: the keys as they are
    return tile;
  if (!features.map) {
    // softmax and relu2: q s
    Value s = features.scale;
    return elementwise(b.empty({rowsV, inWidth}), tile,
                       [&](OpBuilder &ob, Location loc, Value e) -> Value {
                         return arith::MulFOp::create(ob, loc, e, s);
                       });
  }
  switch (*features.map) {
  case FeatureMap::FavorPlus: {
    Value numFeatures = b.dim(features.omegaT, 1);
    Value rootScale = features.rootScale;
    // x' = x s^(1/2); |x'|^2 / 2 per row
    Value scaled = b.generic(
        b.empty({rowsV, inWidth}), {tile}, {b.map(2, {0, 1}), b.map(2, {0, 1})},
        {kPar, kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          return arith::MulFOp::create(ob, loc, args[0], rootScale).getResult();
        });
    Value halfNorm = b.generic(
        b.filled({rowsV}, 0.0), {scaled}, {b.map(2, {0, 1}), b.map(2, {0})},
        {kPar, kRed}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value sq = arith::MulFOp::create(ob, loc, args[0], args[0]);
          Value half = arith::MulFOp::create(
              ob, loc, sq,
              arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.5)));
          return arith::AddFOp::create(ob, loc, args[1], half).getResult();
        });
    // w x', register-tiled like every other tile product
    Value proj = b.matmulNN(scaled, features.omegaT,
                            b.filled({rowsV, numFeatures}, 0.0));
    Value invRootM = features.invRootM;
    if (features.favorShift && !keySide) {
      // The query's own stabiliser c_r = max_f (w x')_f - |x'|^2 / 2 -
      // headroom, so that its largest feature is e^headroom / sqrt(m):
      // exp(w x' - (max_f w x' - headroom)). (Not 1: a row whose visible
      // keys are large on another feature keeps that feature's range.)
      Value projMax = b.rowReduce(proj, b.filled({rowsV}, -INFINITY), true);
      Value headroom = b.f32(kFavorHeadroom);
      Value phi = b.generic(
          proj, {projMax}, {b.map(2, {0}), b.map(2, {0, 1})}, {kPar, kPar},
          [&](OpBuilder &ob, Location loc, ValueRange args) {
            Value top = arith::SubFOp::create(ob, loc, args[0], headroom);
            Value arg = arith::SubFOp::create(ob, loc, args[1], top);
            Value e = math::ExpOp::create(ob, loc, arg);
            return masked(ob, loc, arith::MulFOp::create(ob, loc, e, invRootM));
          });
      if (rowShift)
        *rowShift = b.generic(
            b.empty({rowsV}), {projMax, halfNorm},
            {b.map(1, {0}), b.map(1, {0}), b.map(1, {0})}, {kPar},
            [&](OpBuilder &ob, Location loc, ValueRange args) {
              Value shift = arith::SubFOp::create(ob, loc, args[0], args[1]);
              return arith::SubFOp::create(ob, loc, shift, headroom)
                  .getResult();
            });
      return phi;
    }
    return b.generic(
        proj, {halfNorm}, {b.map(2, {0}), b.map(2, {0, 1})}, {kPar, kPar},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value arg = arith::SubFOp::create(ob, loc, args[1], args[0]);
          if (features.favorShift)
            arg = arith::SubFOp::create(ob, loc, arg, features.favorShift);
          Value e = math::ExpOp::create(ob, loc, arg);
          return masked(ob, loc, arith::MulFOp::create(ob, loc, e, invRootM));
        });
  }
  case FeatureMap::Rfa: {
    // w x (register-tiled) and |x|^2 per row, then [sin, cos] of w x / |x|
    // as [rows, 2, m] (h = 0 the sine half).
    Value numFeatures = b.dim(features.omegaT, 1);
    Value proj =
        b.matmulNN(tile, features.omegaT, b.filled({rowsV, numFeatures}, 0.0));
    Value sumSquares = b.generic(
        b.filled({rowsV}, 0.0), {tile}, {b.map(2, {0, 1}), b.map(2, {0})},
        {kPar, kRed}, [](OpBuilder &ob, Location loc, ValueRange args) {
          return LinalgBuilder::mulAdd(ob, loc, args[0], args[0], args[1]);
        });
    Value invRootM = features.invRootM;
    Value both = b.generic(
        b.empty({rowsV, b.index(2), numFeatures}), {proj, sumSquares},
        {b.map(3, {0, 2}), b.map(3, {0}), b.map(3, {0, 1, 2})},
        {kPar, kPar, kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value half = linalg::IndexOp::create(ob, loc, 1);
          return masked(ob, loc,
                        rfaFeature(ob, loc, half, args[0],
                                   inverseNorm(ob, loc, args[1]), invRootM));
        });
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
    return tensor::CollapseShapeOp::create(b.b, both, groups);
  }
  case FeatureMap::CosFormer: {
    // [relu(x) cos, relu(x) sin] side by side, as [rows, 2, D] (h = 0 the
    // cosine half) so that the element loop stays contiguous; the angle
    // depends on the row only, and LLVM hoists it out of the element loop.
    Value angleScale = features.angleScale;
    Value init = b.empty({rowsV, b.index(2), inWidth});
    Value both = b.generic(
        init, {tile}, {b.map(3, {0, 2}), b.map(3, {0, 1, 2})},
        {kPar, kPar, kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value r = linalg::IndexOp::create(ob, loc, 0);
          Value h = linalg::IndexOp::create(ob, loc, 1);
          Value pos = arith::AddIOp::create(ob, loc, row0, r);
          Value isSin =
              arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ne, h,
                                    arith::ConstantIndexOp::create(ob, loc, 0));
          Value trig = arith::SelectOp::create(
              ob, loc, isSin, cosformerTrig(ob, loc, pos, angleScale, true),
              cosformerTrig(ob, loc, pos, angleScale, false));
          return masked(
              ob, loc,
              arith::MulFOp::create(ob, loc, relu(ob, loc, args[0]), trig));
        });
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}};
    return tensor::CollapseShapeOp::create(b.b, both, groups);
  }
  default: {
    FeatureMap fm = *features.map;
    return elementwise(b.empty({rowsV, inWidth}), tile,
                       [&](OpBuilder &ob, Location loc, Value e) {
                         return pointwiseFeature(ob, loc, fm, e);
                       });
  }
  }
}
