//===- AttnToLinalg.cpp - Lower attn ops to tiled linalg on tensors -------===//
//
// Every attn.term becomes, on tensors:
//
//  1. (Linformer) K' = E·K and V' = F·V;
//  2. the feature rows φ(Q) and φ(K) (Q·s and K for softmax and relu2),
//     computed once per row and padded with zero rows up to a multiple of
//     the tile, so that every tile below has a static number of rows;
//  3. the core, in the order the term carries:
//     - qk-first: one scf.forall iteration per (batch, head, query tile),
//       looping over the key tiles the mask leaves visible with an online
//       (flash-style) normaliser, so that no N×M matrix exists;
//     - kv-first, no mask: a state pass S = φKᵀV, z = Σφk per (batch, head),
//       then a query pass φQ·S / φQ·z per query tile;
//     - kv-first with a causal or block mask: per (batch, head) a loop over
//       chunks carrying the state (quadratic inside a chunk when the mask
//       needs it), so the extra memory is one w×E state;
//  4. the normaliser, with zero rows (no visible key, z = 0) giving 0.
//
// attn.combine becomes an elementwise sum times the gate. With `crossover`
// both orders are emitted behind `scf.if N >= crossover`.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"
#include "attn/Conversion/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Builds the tensor-level IR of one term; every helper works on values of
/// the function being rewritten.
class Lowering {
public:
  Lowering(ImplicitLocOpBuilder &b, int64_t tile) : b(b), tile(tile) {}

  //===--------------------------------------------------------------------===//
  // Scalars
  //===--------------------------------------------------------------------===//

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value dim(Value tensor, int64_t d) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(d))
      return index(type.getDimSize(d));
    return tensor::DimOp::create(b, tensor, d);
  }
  Value ceilDiv(Value a, int64_t c) {
    return arith::CeilDivUIOp::create(b, a, index(c));
  }
  Value mul(Value a, Value c) { return arith::MulIOp::create(b, a, c); }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
  Value sub(Value a, Value c) { return arith::SubIOp::create(b, a, c); }
  Value minIdx(Value a, Value c) { return arith::MinUIOp::create(b, a, c); }
  Value maxIdx(Value a, Value c) { return arith::MaxUIOp::create(b, a, c); }
  Value indexToF32(OpBuilder &ob, Location loc, Value v) {
    Value i64 = arith::IndexCastOp::create(ob, loc, ob.getI64Type(), v);
    return arith::SIToFPOp::create(ob, loc, ob.getF32Type(), i64);
  }

  //===--------------------------------------------------------------------===//
  // Tensors
  //===--------------------------------------------------------------------===//

  /// tensor.empty of \p shape, with the sizes given as index values; static
  /// ones become static dims.
  Value empty(ArrayRef<Value> sizes) {
    SmallVector<OpFoldResult> mixed;
    for (Value size : sizes) {
      if (std::optional<int64_t> c = getConstantIntValue(size))
        mixed.push_back(b.getIndexAttr(*c));
      else
        mixed.push_back(size);
    }
    return tensor::EmptyOp::create(b, mixed, b.getF32Type());
  }
  Value filled(ArrayRef<Value> sizes, double value) {
    return linalg::FillOp::create(b, ValueRange{f32(value)},
                                  ValueRange{empty(sizes)})
        .getResult(0);
  }

  static OpFoldResult ofr(Value v) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return IntegerAttr::get(IndexType::get(v.getContext()), *c);
    return v;
  }

  /// The 2-D slice [rows, cols] of the 4-D \p tensor at (bi, hi, row0, 0).
  Value tile2d(Value tensor, Value bi, Value hi, Value row0, int64_t rows,
               Value cols) {
    return tile2d(tensor, bi, hi, row0, index(rows), cols);
  }
  Value tile2d(Value tensor, Value bi, Value hi, Value row0, Value rows,
               Value cols) {
    auto type = RankedTensorType::get(
        {getConstantIntValue(rows).value_or(ShapedType::kDynamic),
         getConstantIntValue(cols).value_or(ShapedType::kDynamic)},
        b.getF32Type());
    SmallVector<OpFoldResult> offsets = {bi, hi, row0, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       ofr(rows), ofr(cols)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, type, tensor, offsets, sizes,
                                          strides);
  }
  /// The 2-D slice [rows, cols] of the 4-D \p tensor at (bi, hi, 0, col0).
  Value tile2dColumns(Value tensor, Value bi, Value hi, Value col0,
                      Value rows, int64_t cols) {
    auto type = RankedTensorType::get(
        {getConstantIntValue(rows).value_or(ShapedType::kDynamic), cols},
        b.getF32Type());
    SmallVector<OpFoldResult> offsets = {bi, hi, b.getIndexAttr(0), col0};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       ofr(rows), b.getIndexAttr(cols)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, type, tensor, offsets, sizes,
                                          strides);
  }

  /// [B, H, L, X] → [B, H, X, L]
  Value transposeRows(Value tensor) {
    Value init = empty({dim(tensor, 0), dim(tensor, 1), dim(tensor, 3),
                        dim(tensor, 2)});
    return linalg::TransposeOp::create(b, tensor, init,
                                       ArrayRef<int64_t>{0, 1, 3, 2})
        .getResult()[0];
  }

  /// The 1-D slice [cols] of the 3-D \p tensor at (bi, hi, 0).
  Value tile1d(Value tensor, Value bi, Value hi, Value cols) {
    auto type = RankedTensorType::get(
        {getConstantIntValue(cols).value_or(ShapedType::kDynamic)},
        b.getF32Type());
    SmallVector<OpFoldResult> offsets = {bi, hi, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                       ofr(cols)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, type, tensor, offsets, sizes,
                                          strides);
  }

  /// Pads the sequence dimension (2) of a 4-D tensor with zero rows up to
  /// \p length.
  Value padRows(Value tensor, Value length) {
    Value rows = dim(tensor, 2);
    Value extra = sub(length, rows);
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[2] = getConstantIntValue(length).value_or(ShapedType::kDynamic);
    SmallVector<OpFoldResult> low(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> high(4, b.getIndexAttr(0));
    high[2] = ofr(extra);
    return tensor::PadOp::create(
        b, RankedTensorType::get(shape, b.getF32Type()), tensor, low, high,
        f32(0.0), /*nofold=*/false);
  }

  //===--------------------------------------------------------------------===//
  // linalg.generic builders
  //===--------------------------------------------------------------------===//

  using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;

  Value generic(Value init, ValueRange inputs, ArrayRef<AffineMap> maps,
                ArrayRef<IteratorType> iterators, Body body) {
    auto op = linalg::GenericOp::create(
        b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
        iterators, [&](OpBuilder &ob, Location loc, ValueRange args) {
          linalg::YieldOp::create(ob, loc, body(ob, loc, args));
        });
    return op.getResult(0);
  }

  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(b.getAffineDimExpr(d));
    return AffineMap::get(numDims, 0, exprs, b.getContext());
  }

  static Value mulAdd(OpBuilder &ob, Location loc, Value x, Value y,
                      Value acc) {
    Value product = arith::MulFOp::create(ob, loc, x, y);
    return arith::AddFOp::create(ob, loc, acc, product);
  }

  /// C[r, e] = init + Σ_c A[r, c]·B[c, e]
  Value matmulNN(Value a, Value bm, Value init) {
    return generic(init, {a, bm},
                   {map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
                   {kPar, kPar, kRed}, [](OpBuilder &ob, Location loc,
                                          ValueRange args) {
                     return mulAdd(ob, loc, args[0], args[1], args[2]);
                   });
  }
  /// y[r] = init + Σ_w A[r, w]·x[w]
  Value matvec(Value a, Value x, Value init) {
    return generic(init, {a, x}, {map(2, {0, 1}), map(2, {1}), map(2, {0})},
                   {kPar, kRed},
                   [](OpBuilder &ob, Location loc, ValueRange args) {
                     return mulAdd(ob, loc, args[0], args[1], args[2]);
                   });
  }
  /// y[r] = init (+|max) Σ_c A[r, c]
  Value rowReduce(Value a, Value init, bool isMax) {
    return generic(init, {a}, {map(2, {0, 1}), map(2, {0})}, {kPar, kRed},
                   [isMax](OpBuilder &ob, Location loc, ValueRange args) {
                     if (isMax)
                       return arith::MaximumFOp::create(ob, loc, args[0],
                                                        args[1])
                           .getResult();
                     return arith::AddFOp::create(ob, loc, args[0], args[1])
                         .getResult();
                   });
  }
  ImplicitLocOpBuilder &b;
  int64_t tile;
};

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

/// Emits `mask allows (i, j)` (i1) for index values i, j.
Value maskAllows(OpBuilder &ob, Location loc, MaskKind kind, int64_t block,
                 Value i, Value j) {
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(ob, loc, p, x, y).getResult();
  };
  auto blockOf = [&](Value x) {
    Value c = arith::ConstantIndexOp::create(ob, loc, block);
    return arith::DivUIOp::create(ob, loc, x, c).getResult();
  };
  switch (kind) {
  case MaskKind::None:
    return arith::ConstantIntOp::create(ob, loc, 1, 1);
  case MaskKind::Causal:
    return cmp(arith::CmpIPredicate::ule, j, i);
  case MaskKind::Block:
    return cmp(arith::CmpIPredicate::eq, blockOf(i), blockOf(j));
  case MaskKind::BlockCausal:
    return arith::AndIOp::create(
        ob, loc, cmp(arith::CmpIPredicate::eq, blockOf(i), blockOf(j)),
        cmp(arith::CmpIPredicate::ule, j, i));
  case MaskKind::PriorBlocks:
    return cmp(arith::CmpIPredicate::ult, blockOf(j), blockOf(i));
  }
  return {};
}

/// The number of keys j < keys that the mask lets query i see, as f32.
Value visibleKeys(OpBuilder &ob, Location loc, MaskKind kind, int64_t block,
                  Value i, Value keys) {
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v).getResult();
  };
  Value count;
  Value one = c(1);
  switch (kind) {
  case MaskKind::None:
    count = keys;
    break;
  case MaskKind::Causal:
    count = arith::MinUIOp::create(ob, loc,
                                   arith::AddIOp::create(ob, loc, i, one), keys);
    break;
  default: {
    Value blk = c(block);
    Value start = arith::MulIOp::create(
        ob, loc, arith::DivUIOp::create(ob, loc, i, blk), blk);
    Value end;
    if (kind == MaskKind::Block)
      end = arith::MinUIOp::create(ob, loc,
                                   arith::AddIOp::create(ob, loc, start, blk),
                                   keys);
    else if (kind == MaskKind::BlockCausal)
      end = arith::MinUIOp::create(
          ob, loc, arith::AddIOp::create(ob, loc, i, one), keys);
    if (kind == MaskKind::PriorBlocks) {
      count = arith::MinUIOp::create(ob, loc, start, keys);
    } else {
      // max(0, end − start) without going below zero in unsigned index.
      Value clampedStart = arith::MinUIOp::create(ob, loc, start, end);
      count = arith::SubIOp::create(ob, loc, end, clampedStart);
    }
  }
  }
  Value i64 = arith::IndexCastOp::create(ob, loc, ob.getI64Type(), count);
  return arith::SIToFPOp::create(ob, loc, ob.getF32Type(), i64);
}

//===----------------------------------------------------------------------===//
// One term
//===----------------------------------------------------------------------===//

class TermLowering : public Lowering {
public:
  TermLowering(ImplicitLocOpBuilder &b, TermOp op, int64_t defaultTile)
      : Lowering(b, defaultTile), op(op) {}

  /// Emits the term and returns its [B, H, N, E] value.
  Value lower() {
    q = op.getQuery();
    k = op.getKey();
    v = op.getValue();
    batch = dim(q, 0);
    heads = dim(q, 1);
    queries = dim(q, 2);
    featureDim = dim(q, 3);
    valueDim = dim(v, 3);
    keys = dim(k, 2);
    mask = op.getMaskKind();
    block = op.getMaskBlock();
    normalizer = op.getEffectiveNormalizer();
    eps = op.getEffectiveEps();

    if (op.isProjected()) {
      k = project(op.getKeyProjection(), k);
      v = project(op.getValueProjection(), v);
      keys = dim(k, 2);
      mask = MaskKind::None;
    }
    computeFeatures();

    Order order = op.getOrder();
    bool hasCrossover = op.getCrossover().has_value();
    if (order == Order::Auto && !hasCrossover)
      order = Order::QkFirst;
    if (!op.hasProductForm())
      order = Order::QkFirst;

    if (order == Order::Auto) {
      Value threshold = index(*op.getCrossover());
      Value useKv = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                          queries, threshold);
      auto ifOp = scf::IfOp::create(b, TypeRange{op.getType()}, useKv,
                                    /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        scf::YieldOp::create(b, kvFirst());
        b.setInsertionPointToStart(&ifOp.getElseRegion().front());
        scf::YieldOp::create(b, qkFirst());
      }
      return ifOp.getResult(0);
    }
    return order == Order::KvFirst ? kvFirst() : qkFirst();
  }

private:
  //===--------------------------------------------------------------------===//
  // Linformer and feature maps
  //===--------------------------------------------------------------------===//

  /// X'[b, h, r, d] = Σ_j P[r, j]·X[b, h, j, d]
  Value project(Value projection, Value x) {
    Value rows = dim(projection, 0);
    Value init = filled({dim(x, 0), dim(x, 1), rows, dim(x, 3)}, 0.0);
    // (b, h, r, d, j)
    return generic(init, {projection, x},
                   {map(5, {2, 4}), map(5, {0, 1, 4, 3}), map(5, {0, 1, 2, 3})},
                   {kPar, kPar, kPar, kPar, kRed},
                   [](OpBuilder &ob, Location loc, ValueRange args) {
                     return mulAdd(ob, loc, args[0], args[1], args[2]);
                   });
  }

  Value scaleValue() {
    if (std::optional<double> s = op.getEffectiveScale())
      return f32(*s);
    // Dynamic D: 1/sqrt(D) at run time.
    Value d = indexToF32(b, b.getLoc(), featureDim);
    return arith::DivFOp::create(b, f32(1.0), math::SqrtOp::create(b, d));
  }

  /// Elementwise map of a 4-D tensor, with the sequence position available.
  Value mapRows(Value x, Value init,
                function_ref<Value(OpBuilder &, Location, Value, Value)> fn) {
    return generic(init, {x}, {map(4, {0, 1, 2, 3}), map(4, {0, 1, 2, 3})},
                   {kPar, kPar, kPar, kPar},
                   [&](OpBuilder &ob, Location loc, ValueRange args) {
                     Value pos = linalg::IndexOp::create(ob, loc, 2);
                     return fn(ob, loc, args[0], pos);
                   });
  }

  Value emptyLike(Value x, Value lastDim) {
    return empty({dim(x, 0), dim(x, 1), dim(x, 2), lastDim});
  }

  Value relu(OpBuilder &ob, Location loc, Value x) {
    Value zero = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.0));
    return arith::MaximumFOp::create(ob, loc, x, zero);
  }

  /// φ(x) for identity, relu and elu1.
  Value pointwiseFeatures(Value x) {
    FeatureMap fm = *op.getFeatureMap();
    if (fm == FeatureMap::Identity)
      return x;
    return mapRows(x, emptyLike(x, dim(x, 3)),
                   [&](OpBuilder &ob, Location loc, Value e, Value) -> Value {
                     if (fm == FeatureMap::Relu)
                       return relu(ob, loc, e);
                     // elu1: x + 1 for x > 0, e^x otherwise.
                     Value zero = arith::ConstantOp::create(
                         ob, loc, ob.getF32FloatAttr(0.0));
                     Value one = arith::ConstantOp::create(
                         ob, loc, ob.getF32FloatAttr(1.0));
                     Value positive = arith::CmpFOp::create(
                         ob, loc, arith::CmpFPredicate::OGT, e, zero);
                     Value plusOne = arith::AddFOp::create(ob, loc, e, one);
                     Value expd = math::ExpOp::create(ob, loc, e);
                     return arith::SelectOp::create(ob, loc, positive,
                                                    plusOne, expd);
                   });
  }

  /// cosFormer: [relu(x)·cos(πi/2L), relu(x)·sin(πi/2L)], L = max(N, M).
  Value cosformerFeatures(Value x, Value length) {
    Value width = dim(x, 3);
    Value lengthF = indexToF32(b, b.getLoc(), length);
    Value angleScale =
        arith::DivFOp::create(b, f32(M_PI / 2.0), lengthF);
    auto half = [&](bool isSin) {
      return mapRows(x, emptyLike(x, width),
                     [&](OpBuilder &ob, Location loc, Value e, Value pos) {
                       Value angle = arith::MulFOp::create(
                           ob, loc, indexToF32(ob, loc, pos), angleScale);
                       Value trig =
                           isSin ? math::SinOp::create(ob, loc, angle)
                                       .getResult()
                                 : math::CosOp::create(ob, loc, angle)
                                       .getResult();
                       return arith::MulFOp::create(ob, loc, relu(ob, loc, e),
                                                    trig)
                           .getResult();
                     });
    };
    Value result = emptyLike(x, add(width, width));
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes = {ofr(dim(x, 0)), ofr(dim(x, 1)),
                                       ofr(dim(x, 2)), ofr(width)};
    SmallVector<OpFoldResult> first = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
    SmallVector<OpFoldResult> second = first;
    second[3] = ofr(width);
    result = tensor::InsertSliceOp::create(b, half(false), result, first,
                                           sizes, strides);
    return tensor::InsertSliceOp::create(b, half(true), result, second, sizes,
                                         strides);
  }

  /// FAVOR+: exp(ω x' − |x'|²/2) / sqrt(m), x' = x·s^(1/2).
  Value favorFeatures(Value x) {
    Value omega = op.getOmega();
    Value numFeatures = dim(omega, 0);
    Value rootScale = math::SqrtOp::create(b, scaleValue());
    // (b, h, i, f, d): ω x'
    Value proj = generic(
        filled({dim(x, 0), dim(x, 1), dim(x, 2), numFeatures}, 0.0),
        {x, omega},
        {map(5, {0, 1, 2, 4}), map(5, {3, 4}), map(5, {0, 1, 2, 3})},
        {kPar, kPar, kPar, kPar, kRed},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value scaled = arith::MulFOp::create(ob, loc, args[0], rootScale);
          return mulAdd(ob, loc, scaled, args[1], args[2]);
        });
    // (b, h, i, d): |x'|² / 2
    Value halfNorm = generic(
        filled({dim(x, 0), dim(x, 1), dim(x, 2)}, 0.0), {x},
        {map(4, {0, 1, 2, 3}), map(4, {0, 1, 2})}, {kPar, kPar, kPar, kRed},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value scaled = arith::MulFOp::create(ob, loc, args[0], rootScale);
          Value sq = arith::MulFOp::create(ob, loc, scaled, scaled);
          Value half = arith::MulFOp::create(
              ob, loc, sq,
              arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(0.5)));
          return arith::AddFOp::create(ob, loc, args[1], half).getResult();
        });
    Value invRootM = arith::DivFOp::create(
        b, f32(1.0),
        math::SqrtOp::create(b, indexToF32(b, b.getLoc(), numFeatures)));
    return generic(empty({dim(x, 0), dim(x, 1), dim(x, 2), numFeatures}),
                   {proj, halfNorm},
                   {map(4, {0, 1, 2, 3}), map(4, {0, 1, 2}),
                    map(4, {0, 1, 2, 3})},
                   {kPar, kPar, kPar, kPar},
                   [&](OpBuilder &ob, Location loc, ValueRange args) {
                     Value arg =
                         arith::SubFOp::create(ob, loc, args[0], args[1]);
                     Value e = math::ExpOp::create(ob, loc, arg);
                     return arith::MulFOp::create(ob, loc, e, invRootM)
                         .getResult();
                   });
  }

  void computeFeatures() {
    if (!op.hasProductForm()) {
      Value s = scaleValue();
      fq = mapRows(q, emptyLike(q, featureDim),
                   [&](OpBuilder &ob, Location loc, Value e, Value) {
                     return arith::MulFOp::create(ob, loc, e, s).getResult();
                   });
      fk = k;
    } else {
      switch (*op.getFeatureMap()) {
      case FeatureMap::FavorPlus:
        fq = favorFeatures(q);
        fk = favorFeatures(k);
        break;
      case FeatureMap::CosFormer: {
        // L = max(N, M) of the term as written (before any projection).
        Value length = maxIdx(queries, dim(op.getKey(), 2));
        fq = cosformerFeatures(q, length);
        fk = cosformerFeatures(k, length);
        break;
      }
      default:
        fq = pointwiseFeatures(q);
        fk = pointwiseFeatures(k);
      }
    }
    width = dim(fq, 3);
  }

  //===--------------------------------------------------------------------===//
  // Normalisation
  //===--------------------------------------------------------------------===//

  /// out[r, e] = num[r, e] / z_r, 0 when z_r = 0; z_r from \p sums (rows),
  /// the visible key count (length) or 1 (none). Row r is query row0 + r.
  Value normalize(Value num, Value sums, Value row0) {
    Value zero = f32(0.0);
    Value epsValue = f32(eps);
    Value init = empty({index(tile), valueDim});
    return generic(
        init, {num, sums}, {map(2, {0, 1}), map(2, {0}), map(2, {0, 1})},
        {kPar, kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value z;
          if (normalizer == Normalizer::Rows) {
            z = arith::AddFOp::create(ob, loc, args[1], epsValue);
          } else if (normalizer == Normalizer::Length) {
            Value r = linalg::IndexOp::create(ob, loc, 0);
            Value i = arith::AddIOp::create(ob, loc, row0, r);
            z = visibleKeys(ob, loc, mask, block, i, keys);
          } else {
            z = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(1.0));
          }
          Value isZero = arith::CmpFOp::create(
              ob, loc, arith::CmpFPredicate::OEQ, z, zero);
          Value quotient = arith::DivFOp::create(ob, loc, args[0], z);
          return arith::SelectOp::create(ob, loc, isZero, zero, quotient)
              .getResult();
        });
  }

  //===--------------------------------------------------------------------===//
  // Tiled loops
  //===--------------------------------------------------------------------===//

  /// scf.forall over \p upperBounds writing [B, H, rows, E] tiles into a
  /// fresh tensor; \p body returns the [tile, E] tile for the iteration's
  /// (bi, hi, row0) and the result is sliced back to N rows.
  Value forallTiles(Value paddedRows, ArrayRef<Value> upperBounds,
                    function_ref<Value(ValueRange ivs)> body,
                    function_ref<Value(ValueRange ivs)> rowOf) {
    Value out = empty({batch, heads, paddedRows, valueDim});
    SmallVector<OpFoldResult> ubs;
    for (Value ub : upperBounds)
      ubs.push_back(ofr(ub));
    auto forall =
        scf::ForallOp::create(b, ubs, ValueRange{out}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      SmallVector<Value> ivs(forall.getInductionVars());
      Value result = body(ivs);
      Value row0 = rowOf(ivs);
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      SmallVector<OpFoldResult> offsets = {ivs[0], ivs[1], row0,
                                           b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                         b.getIndexAttr(tile),
                                         ofr(valueDim)};
      SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
      tensor::ParallelInsertSliceOp::create(
          b, result, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    }
    return sliceRows(forall.getResult(0));
  }

  Value sliceRows(Value padded) {
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {ofr(batch), ofr(heads), ofr(queries),
                                       ofr(valueDim)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, type, padded, offsets, sizes,
                                          strides);
  }

  //===--------------------------------------------------------------------===//
  // qk-first
  //===--------------------------------------------------------------------===//

  /// The first and one-past-last key tile that query rows [row0, row0 + T)
  /// can see.
  std::pair<Value, Value> keyTileRange(Value row0, Value keyTiles) {
    Value lastRow = sub(minIdx(add(row0, index(tile)), queries), index(1));
    Value blk = index(std::max<int64_t>(block, 1));
    Value firstBlockStart = mul(arith::DivUIOp::create(b, row0, blk), blk);
    Value lastBlockStart = mul(arith::DivUIOp::create(b, lastRow, blk), blk);
    auto tileOf = [&](Value key) {
      return arith::DivUIOp::create(b, key, index(tile)).getResult();
    };
    Value lo = index(0), hi = keyTiles;
    switch (mask) {
    case MaskKind::None:
      break;
    case MaskKind::Causal:
      hi = minIdx(keyTiles, add(tileOf(lastRow), index(1)));
      break;
    case MaskKind::Block:
      lo = tileOf(firstBlockStart);
      hi = minIdx(keyTiles, ceilDiv(add(lastBlockStart, blk), tile));
      break;
    case MaskKind::BlockCausal:
      lo = tileOf(firstBlockStart);
      hi = minIdx(keyTiles, add(tileOf(lastRow), index(1)));
      break;
    case MaskKind::PriorBlocks:
      hi = minIdx(keyTiles, ceilDiv(lastBlockStart, tile));
      break;
    }
    // An empty range (prior_blocks' first block) must not run backwards.
    return {minIdx(lo, hi), hi};
  }

  /// φ(Q), φ(K)ᵀ and V padded to whole tiles, for the tiled loops of
  /// qk-first and of unmasked kv-first.
  struct PaddedOperands {
    Value queryTiles, keyTiles, queries, keysT, values;
  };
  PaddedOperands padToTiles() {
    PaddedOperands padded;
    padded.queryTiles = ceilDiv(queries, tile);
    padded.keyTiles = ceilDiv(keys, tile);
    padded.queries = padRows(fq, mul(padded.queryTiles, index(tile)));
    // K is transposed once so that every tile product is a plain matmul
    // with contiguous rows on both sides.
    padded.keysT =
        transposeRows(padRows(fk, mul(padded.keyTiles, index(tile))));
    padded.values = padRows(v, mul(padded.keyTiles, index(tile)));
    return padded;
  }

  Value qkFirst() {
    PaddedOperands padded = padToTiles();
    Value queryTiles = padded.queryTiles, keyTiles = padded.keyTiles;
    Value paddedQ = padded.queries, paddedKT = padded.keysT,
          paddedV = padded.values;
    Score score = op.getScore();
    bool isSoftmax = score == Score::Softmax;
    Value negInf = f32(-INFINITY);

    auto rowOf = [&](ValueRange ivs) { return mul(ivs[2], index(tile)); };
    auto body = [&](ValueRange ivs) -> Value {
      Value bi = ivs[0], hi = ivs[1], row0 = rowOf(ivs);
      Value qTile = tile2d(paddedQ, bi, hi, row0, tile, width);
      Value t = index(tile);
      Value runningMax = filled({t}, -INFINITY);
      Value sums = filled({t}, 0.0);
      Value acc = filled({t, valueDim}, 0.0);
      auto [lo, hiTile] = keyTileRange(row0, keyTiles);
      auto loop = scf::ForOp::create(
          b, lo, hiTile, index(1), ValueRange{runningMax, sums, acc},
          [&](OpBuilder &ob, Location loc, Value kt, ValueRange iter) {
            ImplicitLocOpBuilder ib(loc, ob);
            Lowering inner(ib, tile);
            Value col0 = inner.mul(kt, inner.index(tile));
            Value kTile =
                inner.tile2dColumns(paddedKT, bi, hi, col0, width, tile);
            Value vTile = inner.tile2d(paddedV, bi, hi, col0, tile, valueDim);
            Value tt = inner.index(tile);
            Value scores =
                inner.matmulNN(qTile, kTile, inner.filled({tt, tt}, 0.0));
            // Weights of the visible pairs; padded keys (j >= M) are masked.
            Value weights = inner.generic(
                scores, {}, {inner.map(2, {0, 1})}, {kPar, kPar},
                [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
                  Value r = linalg::IndexOp::create(gb, gl, 0);
                  Value c = linalg::IndexOp::create(gb, gl, 1);
                  Value i = arith::AddIOp::create(gb, gl, row0, r);
                  Value j = arith::AddIOp::create(gb, gl, col0, c);
                  Value inRange = arith::CmpIOp::create(
                      gb, gl, arith::CmpIPredicate::ult, j, keys);
                  Value visible = arith::AndIOp::create(
                      gb, gl, inRange, maskAllows(gb, gl, mask, block, i, j));
                  Value s = args[0];
                  Value zero = arith::ConstantOp::create(
                      gb, gl, gb.getF32FloatAttr(0.0));
                  if (score == Score::Softmax) {
                    Value minusInf = arith::ConstantOp::create(
                        gb, gl, gb.getF32FloatAttr(-INFINITY));
                    return arith::SelectOp::create(gb, gl, visible, s,
                                                   minusInf);
                  }
                  Value w = s;
                  if (score == Score::Relu2) {
                    Value r0 = arith::MaximumFOp::create(gb, gl, s, zero);
                    w = arith::MulFOp::create(gb, gl, r0, r0);
                  }
                  return arith::SelectOp::create(gb, gl, visible, w, zero);
                });
            if (!isSoftmax) {
              Value newSums = inner.rowReduce(weights, iter[1], false);
              Value newAcc = inner.matmulNN(weights, vTile, iter[2]);
              scf::YieldOp::create(ib, ValueRange{iter[0], newSums, newAcc});
              return;
            }
            // Online softmax: rescale what was accumulated under the old
            // maximum. A row with no visible key so far keeps −inf, and its
            // weights and correction are 0 rather than NaN. Every update
            // writes into its loop-carried tensor so that bufferization
            // reuses the buffers across iterations.
            Value tileMax =
                inner.rowReduce(weights, inner.filled({tt}, -INFINITY), true);
            Value correction = inner.generic(
                inner.empty({tt}), {iter[0], tileMax},
                {inner.map(1, {0}), inner.map(1, {0}), inner.map(1, {0})},
                {kPar}, [&](OpBuilder &gb, Location gl, ValueRange args) {
                  Value newMax =
                      arith::MaximumFOp::create(gb, gl, args[0], args[1]);
                  Value noneYet = arith::CmpFOp::create(
                      gb, gl, arith::CmpFPredicate::OEQ, args[0], negInf);
                  Value shifted =
                      arith::SubFOp::create(gb, gl, args[0], newMax);
                  Value e = math::ExpOp::create(gb, gl, shifted);
                  Value zero = arith::ConstantOp::create(
                      gb, gl, gb.getF32FloatAttr(0.0));
                  return arith::SelectOp::create(gb, gl, noneYet, zero, e)
                      .getResult();
                });
            Value newMax = inner.generic(
                iter[0], {tileMax}, {inner.map(1, {0}), inner.map(1, {0})},
                {kPar}, [](OpBuilder &gb, Location gl, ValueRange args) {
                  return arith::MaximumFOp::create(gb, gl, args[0], args[1])
                      .getResult();
                });
            Value probs = inner.generic(
                weights, {newMax}, {inner.map(2, {0}), inner.map(2, {0, 1})},
                {kPar, kPar},
                [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
                  Value noneYet = arith::CmpFOp::create(
                      gb, gl, arith::CmpFPredicate::OEQ, args[0], negInf);
                  Value shifted =
                      arith::SubFOp::create(gb, gl, args[1], args[0]);
                  Value e = math::ExpOp::create(gb, gl, shifted);
                  Value zero = arith::ConstantOp::create(
                      gb, gl, gb.getF32FloatAttr(0.0));
                  return arith::SelectOp::create(gb, gl, noneYet, zero, e);
                });
            auto scaleRows = [&](Value target, unsigned rank) {
              SmallVector<unsigned> all = rank == 1
                                              ? SmallVector<unsigned>{0}
                                              : SmallVector<unsigned>{0, 1};
              SmallVector<IteratorType> iters(rank, kPar);
              return inner.generic(
                  target, {correction},
                  {inner.map(rank, {0}), inner.map(rank, all)}, iters,
                  [](OpBuilder &gb, Location gl, ValueRange args) {
                    return arith::MulFOp::create(gb, gl, args[1], args[0])
                        .getResult();
                  });
            };
            Value newSums = inner.rowReduce(probs, scaleRows(iter[1], 1),
                                            false);
            Value newAcc = inner.matmulNN(probs, vTile, scaleRows(iter[2], 2));
            scf::YieldOp::create(ib, ValueRange{newMax, newSums, newAcc});
          });
      return normalize(loop.getResult(2), loop.getResult(1), row0);
    };
    return forallTiles(mul(queryTiles, index(tile)),
                       {batch, heads, queryTiles}, body, rowOf);
  }

  //===--------------------------------------------------------------------===//
  // kv-first
  //===--------------------------------------------------------------------===//

  Value kvFirst() {
    if (mask == MaskKind::None)
      return kvFirstGlobal();
    return kvFirstChunked();
  }

  /// No mask: S = Σ_j φ(k_j) v_jᵀ, z = Σ_j φ(k_j) per (batch, head), then
  /// φ(q_i)·S / φ(q_i)·z per query tile.
  Value kvFirstGlobal() {
    PaddedOperands padded = padToTiles();
    Value queryTiles = padded.queryTiles, keyTiles = padded.keyTiles;
    Value paddedQ = padded.queries, paddedKT = padded.keysT,
          paddedV = padded.values;

    // State pass.
    Value states = empty({batch, heads, width, valueDim});
    Value norms = empty({batch, heads, width});
    auto statePass = scf::ForallOp::create(
        b, ArrayRef<OpFoldResult>{ofr(batch), ofr(heads)},
        ValueRange{states, norms}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(statePass.getTerminator());
      Value bi = statePass.getInductionVars()[0];
      Value hi = statePass.getInductionVars()[1];
      Value state = filled({width, valueDim}, 0.0);
      Value norm = filled({width}, 0.0);
      auto loop = scf::ForOp::create(
          b, index(0), keyTiles, index(1), ValueRange{state, norm},
          [&](OpBuilder &ob, Location loc, Value kt, ValueRange iter) {
            ImplicitLocOpBuilder ib(loc, ob);
            Lowering inner(ib, tile);
            Value row0 = inner.mul(kt, inner.index(tile));
            Value kTile =
                inner.tile2dColumns(paddedKT, bi, hi, row0, width, tile);
            Value vTile = inner.tile2d(paddedV, bi, hi, row0, tile, valueDim);
            Value newState = inner.matmulNN(kTile, vTile, iter[0]);
            Value newNorm = inner.rowReduce(kTile, iter[1], false);
            scf::YieldOp::create(ib, ValueRange{newState, newNorm});
          });
      b.setInsertionPointToStart(statePass.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          b, loop.getResult(0), statePass.getRegionIterArgs()[0],
          {bi, hi, b.getIndexAttr(0), b.getIndexAttr(0)},
          {b.getIndexAttr(1), b.getIndexAttr(1), ofr(width), ofr(valueDim)},
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
      tensor::ParallelInsertSliceOp::create(
          b, loop.getResult(1), statePass.getRegionIterArgs()[1],
          {bi, hi, b.getIndexAttr(0)},
          {b.getIndexAttr(1), b.getIndexAttr(1), ofr(width)},
          SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
    }
    Value allStates = statePass.getResult(0);
    Value allNorms = statePass.getResult(1);

    // Query pass.
    auto rowOf = [&](ValueRange ivs) { return mul(ivs[2], index(tile)); };
    auto body = [&](ValueRange ivs) -> Value {
      Value bi = ivs[0], hi = ivs[1], row0 = rowOf(ivs);
      Value qTile = tile2d(paddedQ, bi, hi, row0, tile, width);
      Value state = tile2d(allStates, bi, hi, index(0), width, valueDim);
      Value norm = tile1d(allNorms, bi, hi, width);
      Value num = matmulNN(qTile, state, filled({index(tile), valueDim}, 0.0));
      Value den = matvec(qTile, norm, filled({index(tile)}, 0.0));
      return normalize(num, den, row0);
    };
    return forallTiles(mul(queryTiles, index(tile)),
                       {batch, heads, queryTiles}, body, rowOf);
  }

  /// Causal and block masks: per (batch, head), a loop over chunks of C
  /// rows carrying the state of the keys before the chunk.
  Value kvFirstChunked() {
    int64_t chunk = tile;
    bool intraCausal = false, intraFull = false, carry = true;
    int64_t resetEvery = 0; // in chunks; 0 = never
    switch (mask) {
    case MaskKind::Causal:
      chunk = op.getChunk().value_or(tile);
      intraCausal = true;
      break;
    case MaskKind::BlockCausal:
      chunk = op.getChunk().value_or(tile);
      if (block % chunk != 0)
        chunk = block;
      intraCausal = true;
      resetEvery = block / chunk;
      break;
    case MaskKind::PriorBlocks:
      chunk = block;
      break;
    case MaskKind::Block:
      chunk = block;
      intraFull = true;
      carry = false;
      break;
    case MaskKind::None:
      break;
    }
    tile = chunk;
    Value longest = maxIdx(queries, keys);
    Value chunks = ceilDiv(longest, chunk);
    Value padded = mul(chunks, index(chunk));
    Value paddedQ = padRows(fq, padded);
    Value paddedKT = transposeRows(padRows(fk, padded));
    Value paddedV = padRows(v, padded);

    Value out = empty({batch, heads, padded, valueDim});
    auto forall = scf::ForallOp::create(
        b, ArrayRef<OpFoldResult>{ofr(batch), ofr(heads)}, ValueRange{out},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getTerminator());
      Value bi = forall.getInductionVars()[0];
      Value hi = forall.getInductionVars()[1];
      Value state = filled({width, valueDim}, 0.0);
      Value norm = filled({width}, 0.0);
      Value headOut = empty({padded, valueDim});
      auto loop = scf::ForOp::create(
          b, index(0), chunks, index(1), ValueRange{state, norm, headOut},
          [&](OpBuilder &ob, Location loc, Value ci, ValueRange iter) {
            ImplicitLocOpBuilder ib(loc, ob);
            Lowering inner(ib, chunk);
            Value row0 = inner.mul(ci, inner.index(chunk));
            Value cc = inner.index(chunk);
            Value qTile = inner.tile2d(paddedQ, bi, hi, row0, chunk, width);
            Value kTile =
                inner.tile2dColumns(paddedKT, bi, hi, row0, width, chunk);
            Value vTile = inner.tile2d(paddedV, bi, hi, row0, chunk, valueDim);
            Value prevState = iter[0], prevNorm = iter[1];
            Value num, den;
            if (carry) {
              num = inner.matmulNN(qTile, prevState,
                                   inner.filled({cc, valueDim}, 0.0));
              den = inner.matvec(qTile, prevNorm, inner.filled({cc}, 0.0));
            } else {
              num = inner.filled({cc, valueDim}, 0.0);
              den = inner.filled({cc}, 0.0);
            }
            if (intraCausal || intraFull) {
              Value scores =
                  inner.matmulNN(qTile, kTile, inner.filled({cc, cc}, 0.0));
              if (intraCausal)
                scores = inner.generic(
                    scores, {}, {inner.map(2, {0, 1})}, {kPar, kPar},
                    [](OpBuilder &gb, Location gl, ValueRange args) -> Value {
                      Value r = linalg::IndexOp::create(gb, gl, 0);
                      Value col = linalg::IndexOp::create(gb, gl, 1);
                      Value visible = arith::CmpIOp::create(
                          gb, gl, arith::CmpIPredicate::ule, col, r);
                      Value zero = arith::ConstantOp::create(
                          gb, gl, gb.getF32FloatAttr(0.0));
                      return arith::SelectOp::create(gb, gl, visible, args[0],
                                                     zero);
                    });
              den = inner.rowReduce(scores, den, false);
              num = inner.matmulNN(scores, vTile, num);
            }
            Value result = normalizeWith(ib, num, den, row0, chunk);
            SmallVector<OpFoldResult> offsets = {row0, ib.getIndexAttr(0)};
            SmallVector<OpFoldResult> sizes = {ib.getIndexAttr(chunk),
                                               ofr(valueDim)};
            SmallVector<OpFoldResult> strides(2, ib.getIndexAttr(1));
            Value newOut = tensor::InsertSliceOp::create(ib, result, iter[2],
                                                         offsets, sizes,
                                                         strides);
            Value newState = prevState, newNorm = prevNorm;
            if (carry) {
              newState = inner.matmulNN(kTile, vTile, prevState);
              newNorm = inner.rowReduce(kTile, prevNorm, false);
            }
            if (resetEvery > 0) {
              // block_causal: the state restarts where the next block does.
              Value next = arith::AddIOp::create(ib, ci, inner.index(1));
              Value rem =
                  arith::RemUIOp::create(ib, next, inner.index(resetEvery));
              Value restart = arith::CmpIOp::create(
                  ib, arith::CmpIPredicate::eq, rem, inner.index(0));
              Value keep = arith::SelectOp::create(ib, restart, inner.f32(0.0),
                                                   inner.f32(1.0));
              auto scale = [&](Value target, unsigned rank) {
                SmallVector<unsigned> all =
                    rank == 1 ? SmallVector<unsigned>{0}
                              : SmallVector<unsigned>{0, 1};
                SmallVector<IteratorType> iters(rank, kPar);
                return inner.generic(
                    target, {}, {inner.map(rank, all)}, iters,
                    [&](OpBuilder &gb, Location gl, ValueRange args) {
                      return arith::MulFOp::create(gb, gl, args[0], keep)
                          .getResult();
                    });
              };
              newState = scale(newState, 2);
              newNorm = scale(newNorm, 1);
            }
            scf::YieldOp::create(ib, ValueRange{newState, newNorm, newOut});
          });
      b.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          b, loop.getResult(2), forall.getRegionIterArgs()[0],
          {bi, hi, b.getIndexAttr(0), b.getIndexAttr(0)},
          {b.getIndexAttr(1), b.getIndexAttr(1), ofr(padded), ofr(valueDim)},
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    }
    return sliceRows(forall.getResult(0));
  }

  /// normalize() emitted with another builder (inside a loop body).
  Value normalizeWith(ImplicitLocOpBuilder &ib, Value num, Value sums,
                      Value row0, int64_t rows) {
    TermLowering nested(ib, op, rows);
    nested.copySizesFrom(*this);
    return nested.normalize(num, sums, row0);
  }

  void copySizesFrom(const TermLowering &other) {
    queries = other.queries;
    keys = other.keys;
    valueDim = other.valueDim;
    mask = other.mask;
    block = other.block;
    normalizer = other.normalizer;
    eps = other.eps;
  }

  TermOp op;
  Value q, k, v, fq, fk;
  Value batch, heads, queries, keys, featureDim, valueDim, width;
  MaskKind mask = MaskKind::None;
  int64_t block = 0;
  Normalizer normalizer = Normalizer::Rows;
  double eps = 0.0;
};

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct TermOpLowering : public OpRewritePattern<TermOp> {
  TermOpLowering(MLIRContext *context, int64_t tile)
      : OpRewritePattern<TermOp>(context), tile(tile) {}

  LogicalResult matchAndRewrite(TermOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    int64_t termTile = tile;
    // The qk-first key tile is the term's chunk when it has one.
    if (std::optional<int64_t> chunk = op.getChunk();
        chunk && op.getOrder() == Order::QkFirst)
      termTile = *chunk;
    TermLowering lowering(b, op, termTile);
    rewriter.replaceOp(op, lowering.lower());
    return success();
  }
  int64_t tile;
};

struct CombineOpLowering : public OpRewritePattern<CombineOp> {
  using OpRewritePattern<CombineOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CombineOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Lowering helper(b, 0);
    SmallVector<Value> inputs(op.getTerms());
    if (Value gate = op.getGate())
      inputs.push_back(gate);
    size_t numTerms = op.getTerms().size();
    bool gated = op.getGate() != nullptr;
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                helper.map(4, {0, 1, 2, 3}));
    Value init = tensor::EmptyOp::create(
        b,
        tensor::getMixedSizes(b, b.getLoc(), op.getTerms().front()),
        b.getF32Type());
    Value result = helper.generic(
        init, inputs, maps, {kPar, kPar, kPar, kPar},
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value sum = args[0];
          for (size_t t = 1; t < numTerms; ++t)
            sum = arith::AddFOp::create(ob, loc, sum, args[t]);
          if (gated)
            sum = arith::MulFOp::create(ob, loc, sum, args[numTerms]);
          return sum;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertAttnToLinalgPass
    : public mlir::attn::impl::ConvertAttnToLinalgBase<
          ConvertAttnToLinalgPass> {
  using ConvertAttnToLinalgBase::ConvertAttnToLinalgBase;

  void runOnOperation() override {
    if (tileSize <= 0) {
      getOperation()->emitError()
          << "convert-attn-to-linalg: tile-size must be positive, got "
          << static_cast<int64_t>(tileSize);
      return signalPassFailure();
    }
    ConversionTarget target(getContext());
    target.addIllegalDialect<AttnDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, affine::AffineDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns, tileSize);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns,
                                              int64_t tileSize) {
  patterns.add<TermOpLowering>(patterns.getContext(), tileSize);
  patterns.add<CombineOpLowering>(patterns.getContext());
}
