//===- FeatureMaps.cpp - Feature rows and the Linformer projection --------===//
//
// Every strategy works on feature rows computed once per row before any
// tiling: phi(Q), phi(K) for a kernel term, (Q s, K) for softmax and relu2,
// so that the scale is applied N times rather than N M times. Linformer's
// projections E K and F V come before, and shorten the key sequence.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

Value to_linalg::projectSequence(LinalgBuilder &b, Value projection, Value x) {
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
                     return fn(ob, loc, args[0], pos);
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

/// phi(x) for identity, relu and elu1.
static Value pointwiseFeatures(LinalgBuilder &b, FeatureMap fm, Value x) {
  if (fm == FeatureMap::Identity)
    return x;
  return mapRows(
      b, x, emptyLike(b, x, b.dim(x, 3)),
      [&](OpBuilder &ob, Location loc, Value e, Value) -> Value {
        if (fm == FeatureMap::Relu)
          return relu(ob, loc, e);
        // elu1: x + 1 for x > 0, e^x otherwise.
        Value zero =
            arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
        Value one = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(1.0));
        Value positive =
            arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OGT, e, zero);
        Value plusOne = arith::AddFOp::create(ob, loc, e, one);
        Value expd = math::ExpOp::create(ob, loc, e);
        return arith::SelectOp::create(ob, loc, positive, plusOne, expd);
      });
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
          Value angle = arith::MulFOp::create(
              ob, loc, LinalgBuilder::indexToF32(ob, loc, pos), angleScale);
          Value trig = isSin ? math::SinOp::create(ob, loc, angle).getResult()
                             : math::CosOp::create(ob, loc, angle).getResult();
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
static Value favorFeatures(LinalgBuilder &b, TermOp op, Value featureDim,
                           Value x) {
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
  return b.generic(
      b.empty({b.dim(x, 0), b.dim(x, 1), b.dim(x, 2), numFeatures}),
      {proj, halfNorm},
      {b.map(4, {0, 1, 2, 3}), b.map(4, {0, 1, 2}), b.map(4, {0, 1, 2, 3})},
      {kPar, kPar, kPar, kPar},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value arg = arith::SubFOp::create(ob, loc, args[0], args[1]);
        Value e = math::ExpOp::create(ob, loc, arg);
        return arith::MulFOp::create(ob, loc, e, invRootM).getResult();
      });
}

std::pair<Value, Value> to_linalg::buildFeatureRows(LinalgBuilder &b, TermOp op,
                                                    Value q, Value k,
                                                    Value queries,
                                                    Value featureDim) {
  if (!op.hasProductForm()) {
    // softmax and relu2 score q s . k: scale the N query rows once.
    Value s = scaleValue(b, op, featureDim);
    Value fq =
        mapRows(b, q, emptyLike(b, q, featureDim),
                [&](OpBuilder &ob, Location loc, Value e, Value) {
                  return arith::MulFOp::create(ob, loc, e, s).getResult();
                });
    return {fq, k};
  }
  switch (*op.getFeatureMap()) {
  case FeatureMap::FavorPlus: {
    Value fq = favorFeatures(b, op, featureDim, q);
    Value fk = favorFeatures(b, op, featureDim, k);
    return {fq, fk};
  }
  case FeatureMap::CosFormer: {
    // L = max(N, M) of the term as written (before any projection).
    Value length = b.maxIdx(queries, b.dim(op.getKey(), 2));
    Value fq = cosformerFeatures(b, q, length);
    Value fk = cosformerFeatures(b, k, length);
    return {fq, fk};
  }
  default: {
    Value fq = pointwiseFeatures(b, *op.getFeatureMap(), q);
    Value fk = pointwiseFeatures(b, *op.getFeatureMap(), k);
    return {fq, fk};
  }
  }
}
