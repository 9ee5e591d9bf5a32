//===- LinalgBuilders.cpp - Builders shared by the linalg strategies ------===//
//
// The pieces every strategy of convert-attn-to-linalg is made of: index
// arithmetic, slices of [B, H, L, X] tensors, padding to whole tiles, the
// linalg.generic forms of matmul, matvec and row reductions, the normaliser
// and the forall over query tiles.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value LinalgBuilder::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value LinalgBuilder::f32(double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

Value LinalgBuilder::dim(Value tensor, int64_t d) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(d))
    return index(type.getDimSize(d));
  return tensor::DimOp::create(b, tensor, d);
}

Value LinalgBuilder::ceilDiv(Value a, int64_t c) {
  return arith::CeilDivUIOp::create(b, a, index(c));
}

Value LinalgBuilder::mul(Value a, Value c) {
  return arith::MulIOp::create(b, a, c);
}

Value LinalgBuilder::add(Value a, Value c) {
  return arith::AddIOp::create(b, a, c);
}

Value LinalgBuilder::sub(Value a, Value c) {
  return arith::SubIOp::create(b, a, c);
}

Value LinalgBuilder::minIdx(Value a, Value c) {
  return arith::MinUIOp::create(b, a, c);
}

Value LinalgBuilder::maxIdx(Value a, Value c) {
  return arith::MaxUIOp::create(b, a, c);
}

Value LinalgBuilder::indexToF32(OpBuilder &ob, Location loc, Value v) {
  Value i64 = arith::IndexCastOp::create(ob, loc, ob.getI64Type(), v);
  return arith::SIToFPOp::create(ob, loc, ob.getF32Type(), i64);
}

OpFoldResult LinalgBuilder::ofr(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return IntegerAttr::get(IndexType::get(v.getContext()), *c);
  return v;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Value LinalgBuilder::empty(ArrayRef<Value> sizes) {
  SmallVector<OpFoldResult> mixed;
  for (Value size : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(size))
      mixed.push_back(b.getIndexAttr(*c));
    else
      mixed.push_back(size);
  }
  return tensor::EmptyOp::create(b, mixed, b.getF32Type());
}

Value LinalgBuilder::filled(ArrayRef<Value> sizes, double value) {
  return refilled(empty(sizes), value);
}

Value LinalgBuilder::refilled(Value tensor, double value) {
  return linalg::FillOp::create(b, ValueRange{f32(value)}, ValueRange{tensor})
      .getResult(0);
}

Value LinalgBuilder::tile2d(Value tensor, Value bi, Value hi, Value row0,
                            int64_t rows, Value cols) {
  return tile2d(tensor, bi, hi, row0, index(rows), cols);
}

Value LinalgBuilder::tile2d(Value tensor, Value bi, Value hi, Value row0,
                            Value rows, Value cols) {
  auto type = RankedTensorType::get(
      {getConstantIntValue(rows).value_or(ShapedType::kDynamic),
       getConstantIntValue(cols).value_or(ShapedType::kDynamic)},
      getElementTypeOrSelf(tensor));
  SmallVector<OpFoldResult> offsets = {bi, hi, row0, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     ofr(rows), ofr(cols)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, type, tensor, offsets, sizes,
                                        strides);
}

Value LinalgBuilder::tile2d(Value tile, Value rows, Value cols) {
  auto type = RankedTensorType::get(
      {getConstantIntValue(rows).value_or(ShapedType::kDynamic),
       getConstantIntValue(cols).value_or(ShapedType::kDynamic)},
      getElementTypeOrSelf(tile));
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {ofr(rows), ofr(cols)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, type, tile, offsets, sizes, strides);
}

Value LinalgBuilder::leading(Value vector, Value count) {
  auto type = RankedTensorType::get(
      {getConstantIntValue(count).value_or(ShapedType::kDynamic)},
      b.getF32Type());
  return tensor::ExtractSliceOp::create(
      b, type, vector, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{ofr(count)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

Value LinalgBuilder::panel(Value panels, Value bi, Value hi, Value index,
                           Value width, int64_t tile) {
  auto type = RankedTensorType::get(
      {getConstantIntValue(width).value_or(ShapedType::kDynamic), tile},
      b.getF32Type());
  SmallVector<OpFoldResult> offsets = {bi, hi, index, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1), ofr(width),
                                     b.getIndexAttr(tile)};
  SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, type, panels, offsets, sizes,
                                        strides);
}

Value LinalgBuilder::tile1d(Value tensor, Value bi, Value hi, Value cols,
                            Value offset) {
  auto type = RankedTensorType::get(
      {getConstantIntValue(cols).value_or(ShapedType::kDynamic)},
      b.getF32Type());
  SmallVector<OpFoldResult> offsets = {
      bi, hi, offset ? ofr(offset) : OpFoldResult(b.getIndexAttr(0))};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     ofr(cols)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, type, tensor, offsets, sizes,
                                        strides);
}

Value LinalgBuilder::keyPanels(Value tensor, Value tiles, int64_t tile) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value width = dim(tensor, 3);
  std::optional<int64_t> staticTiles = getConstantIntValue(tiles);
  SmallVector<int64_t> split = {type.getDimSize(0), type.getDimSize(1),
                                staticTiles.value_or(ShapedType::kDynamic),
                                tile, type.getDimSize(3)};
  SmallVector<OpFoldResult> splitSizes = {ofr(dim(tensor, 0)),
                                          ofr(dim(tensor, 1)), ofr(tiles),
                                          b.getIndexAttr(tile), ofr(width)};
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}, {4}};
  Value rows = tensor::ExpandShapeOp::create(
      b, RankedTensorType::get(split, b.getF32Type()), tensor, groups,
      splitSizes);
  Value init =
      empty({dim(tensor, 0), dim(tensor, 1), tiles, width, index(tile)});
  return linalg::TransposeOp::create(b, rows, init,
                                     ArrayRef<int64_t>{0, 1, 2, 4, 3})
      .getResult()[0];
}

Value LinalgBuilder::padRows(Value tensor, Value length) {
  // An f16 / bf16 Q, K or V (C19) is padded as f32: this copy widens it.
  tensor = to_linalg::widened(*this, tensor);
  Value rows = dim(tensor, 2);
  Value extra = sub(length, rows);
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = getConstantIntValue(length).value_or(ShapedType::kDynamic);
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(4, b.getIndexAttr(0));
  high[2] = ofr(extra);
  return tensor::PadOp::create(b, RankedTensorType::get(shape, b.getF32Type()),
                               tensor, low, high, f32(0.0), /*nofold=*/false);
}

//===----------------------------------------------------------------------===//
// linalg.generic
//===----------------------------------------------------------------------===//

// Matmuls are emitted as linalg.generic, not named ops: attn-tile-and-vectorize
// collects linalg.generic ops only, tiles the matmul-shaped ones and
// specializes each tile to a named op itself.
Value LinalgBuilder::generic(Value init, ValueRange inputs,
                             ArrayRef<AffineMap> maps,
                             ArrayRef<IteratorType> iterators, Body body) {
  auto op = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        linalg::YieldOp::create(ob, loc, body(ob, loc, args));
      });
  return op.getResult(0);
}

Value to_linalg::widened(LinalgBuilder &b, Value tensor) {
  Type f32 = b.b.getF32Type();
  return getElementTypeOrSelf(tensor) == f32 ? tensor
                                             : convertElements(b, tensor, f32);
}

Value to_linalg::convertElements(LinalgBuilder &b, Value tensor,
                                 Type elementType) {
  ImplicitLocOpBuilder &ib = b.b;
  auto type = cast<RankedTensorType>(tensor.getType());
  Value init = tensor::EmptyOp::create(
      ib, tensor::getMixedSizes(ib, ib.getLoc(), tensor), elementType);
  unsigned rank = type.getRank();
  SmallVector<unsigned> dims = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  SmallVector<AffineMap> maps(2, b.map(rank, dims));
  SmallVector<IteratorType> iterators(rank, kPar);
  bool widen = elementType.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  return b.generic(
      init, {tensor}, maps, iterators,
      [&](OpBuilder &ob, Location loc, ValueRange args) -> Value {
        if (widen)
          return arith::ExtFOp::create(ob, loc, elementType, args[0]);
        return arith::TruncFOp::create(ob, loc, elementType, args[0]);
      });
}

AffineMap LinalgBuilder::map(unsigned numDims, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(numDims, 0, exprs, b.getContext());
}

Value LinalgBuilder::mulAdd(OpBuilder &ob, Location loc, Value x, Value y,
                            Value acc) {
  Value product = arith::MulFOp::create(ob, loc, x, y);
  return arith::AddFOp::create(ob, loc, acc, product);
}

Value LinalgBuilder::matmulNN(Value a, Value bm, Value init) {
  return generic(
      init, {a, bm}, {map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
      {kPar, kPar, kRed}, [](OpBuilder &ob, Location loc, ValueRange args) {
        return mulAdd(ob, loc, args[0], args[1], args[2]);
      });
}

Value LinalgBuilder::matmulTN(Value a, Value bm, Value init) {
  return generic(
      init, {a, bm}, {map(3, {2, 0}), map(3, {2, 1}), map(3, {0, 1})},
      {kPar, kPar, kRed}, [](OpBuilder &ob, Location loc, ValueRange args) {
        return mulAdd(ob, loc, args[0], args[1], args[2]);
      });
}

Value LinalgBuilder::columnSum(Value a, Value init) {
  // (r, c) with the reduction outermost: the loop over c is contiguous.
  return generic(
      init, {a}, {map(2, {0, 1}), map(2, {1})}, {kRed, kPar},
      [](OpBuilder &ob, Location loc, ValueRange args) {
        return arith::AddFOp::create(ob, loc, args[0], args[1]).getResult();
      });
}

Value LinalgBuilder::transposeTile(Value a) {
  return copyInto(a, empty({dim(a, 1), dim(a, 0)}), /*transpose=*/true);
}

Value LinalgBuilder::copyInto(Value a, Value dest, bool transpose) {
  Type elementType = getElementTypeOrSelf(dest);
  bool widen = getElementTypeOrSelf(a) != elementType;
  // A plain copy as linalg.copy: the canonicalizer would fold an identity
  // generic into its input, and the copy would then follow the scf.if that
  // yields it, from a buffer of unknown strides (a scalar loop).
  if (!widen && !transpose)
    return linalg::CopyOp::create(b, a, dest).getResult(0);
  return generic(
      dest, {a}, {transpose ? map(2, {1, 0}) : map(2, {0, 1}), map(2, {0, 1})},
      {kPar, kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) -> Value {
        if (widen)
          return arith::ExtFOp::create(ob, loc, elementType, args[0]);
        return args[0];
      });
}

Value LinalgBuilder::paddedTile(Value tensor, Value bi, Value hi, Value row0,
                                int64_t rows, Value cols, Value validRows) {
  Value real = tile2d(tensor, bi, hi, row0, validRows, cols);
  auto realType = cast<RankedTensorType>(real.getType());
  auto type = RankedTensorType::get({rows, realType.getDimSize(1)},
                                    realType.getElementType());
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> high = {ofr(sub(index(rows), validRows)),
                                    b.getIndexAttr(0)};
  Value zero = arith::ConstantOp::create(
      b, b.getFloatAttr(realType.getElementType(), 0.0));
  return tensor::PadOp::create(b, type, real, low, high, zero,
                               /*nofold=*/false);
}

Value LinalgBuilder::matvec(Value a, Value x, Value init) {
  return generic(
      init, {a, x}, {map(2, {0, 1}), map(2, {1}), map(2, {0})}, {kPar, kRed},
      [](OpBuilder &ob, Location loc, ValueRange args) {
        // As in rowReduce: reassoc lets LLVM vectorize the row's
        // dot product (else one scalar add after another).
        auto reassoc = arith::FastMathFlagsAttr::get(
            ob.getContext(), arith::FastMathFlags::reassoc);
        Value product = arith::MulFOp::create(ob, loc, args[0], args[1]);
        return arith::AddFOp::create(ob, loc, args[2], product, reassoc)
            .getResult();
      });
}

Value LinalgBuilder::rowReduce(Value a, Value init, bool isMax) {
  return generic(
      init, {a}, {map(2, {0, 1}), map(2, {0})}, {kPar, kRed},
      [isMax](OpBuilder &ob, Location loc, ValueRange args) {
        // The order of a row's terms is unspecified (tiles already split
        // it): reassoc lets LLVM vectorize the row loop.
        auto reassoc = arith::FastMathFlagsAttr::get(
            ob.getContext(), arith::FastMathFlags::reassoc);
        // A row's maximum only shifts its exponents: a NaN among the row's
        // values makes its exp, and so the row, NaN whichever maximum is
        // taken. nnan lets the maximum be one vmaxps instead of x86's
        // NaN-propagating compare-and-blend sequence per step (8% of a
        // softmax call).
        if (isMax)
          return arith::MaxNumFOp::create(
                     ob, loc, args[0], args[1],
                     arith::FastMathFlagsAttr::get(
                         ob.getContext(), arith::FastMathFlags::reassoc |
                                              arith::FastMathFlags::nnan))
              .getResult();
        return arith::AddFOp::create(ob, loc, args[0], args[1], reassoc)
            .getResult();
      });
}

//===----------------------------------------------------------------------===//
// Shared pieces of the strategies
//===----------------------------------------------------------------------===//

PaddedOperands to_linalg::padToTiles(LinalgBuilder &b, const TermOperands &term,
                                     int64_t queryTile, int64_t keyTile) {
  Value rowEps;
  auto [featureQ, featureK] = buildFeatureRows(b, term, &rowEps);
  PaddedOperands padded;
  padded.queryTiles = b.ceilDiv(term.queries, queryTile);
  padded.keyTiles = b.ceilDiv(term.keys, keyTile);
  padded.queries =
      b.padRows(featureQ, b.mul(padded.queryTiles, b.index(queryTile)));
  if (rowEps)
    padded.rowEps =
        b.padRows(rowEps, b.mul(padded.queryTiles, b.index(queryTile)));
  // K is transposed once, tile by tile, so that every tile product is a
  // plain matmul with contiguous rows on both sides.
  padded.keysT =
      b.keyPanels(b.padRows(featureK, b.mul(padded.keyTiles, b.index(keyTile))),
                  padded.keyTiles, keyTile);
  padded.values =
      b.padRows(term.values, b.mul(padded.keyTiles, b.index(keyTile)));
  return padded;
}

KeyPanels to_linalg::keyPanelsAndValues(LinalgBuilder &b,
                                        const TermOperands &term,
                                        int64_t keyTile, Value keyTiles) {
  ImplicitLocOpBuilder &ob = b.b;
  KeyPanels result;
  result.lastValueTileOnly = getElementTypeOrSelf(term.values).isF32();
  // Per key/value head: the query heads of a group (DESIGN §1.3) share one
  // set of panels, built once.
  Value panels = b.empty(
      {term.batch, term.keyHeads, keyTiles, term.width, b.index(keyTile)});
  SmallVector<Value> outs = {panels};
  if (!result.lastValueTileOnly)
    outs.push_back(b.empty({term.batch, term.keyHeads,
                            b.mul(keyTiles, b.index(keyTile)),
                            term.valueDim}));
  auto forall = scf::ForallOp::create(
      ob,
      ArrayRef<OpFoldResult>{LinalgBuilder::ofr(term.batch),
                             LinalgBuilder::ofr(term.keyHeads),
                             LinalgBuilder::ofr(keyTiles)},
      outs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(forall.getTerminator());
    Value bi = forall.getInductionVars()[0];
    Value hi = forall.getInductionVars()[1];
    Value kt = forall.getInductionVars()[2];
    Value row0 = b.mul(kt, b.index(keyTile));
    // Written straight into this iteration's part of the outputs: a whole
    // tile is read in place, only the last one is padded first.
    Value panelDest = b.panel(forall.getRegionIterArgs()[0], bi, hi, kt,
                              term.width, keyTile);
    // phi(K_t)^T (phi = 0 on the rows past M, which the masks hide too)
    Value panel;
    if (!term.features.map && !term.decay.keyWeight)
      panel = consumeRowTile(
          b, term.rawK, bi, hi, row0, keyTile, term.keys,
          [&](LinalgBuilder &inner, Value tile, Value) {
            return inner.copyInto(tile, panelDest, /*transpose=*/true);
          });
    else
      panel = b.copyInto(keyFeatureTile(b, term, bi, hi, row0, keyTile),
                         panelDest, /*transpose=*/true);
    Value vTile;
    if (!result.lastValueTileOnly) {
      Value valueDest = b.tile2d(forall.getRegionIterArgs()[1], bi, hi, row0,
                                 keyTile, term.valueDim);
      vTile = consumeRowTile(
          b, term.values, bi, hi, row0, keyTile, term.keys,
          [&](LinalgBuilder &inner, Value tile, Value) {
            return inner.copyInto(tile, valueDest, /*transpose=*/false);
          });
    }
    ob.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        ob, panel, forall.getRegionIterArgs()[0],
        {bi, hi, kt, ob.getIndexAttr(0), ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), ob.getIndexAttr(1),
         LinalgBuilder::ofr(term.width), ob.getIndexAttr(keyTile)},
        SmallVector<OpFoldResult>(5, ob.getIndexAttr(1)));
    if (vTile)
      tensor::ParallelInsertSliceOp::create(
          ob, vTile, forall.getRegionIterArgs()[1],
          {bi, hi, row0, ob.getIndexAttr(0)},
          {ob.getIndexAttr(1), ob.getIndexAttr(1), ob.getIndexAttr(keyTile),
           LinalgBuilder::ofr(term.valueDim)},
          SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
  }
  result.panels = forall.getResult(0);
  if (!result.lastValueTileOnly) {
    result.values = forall.getResult(1);
    return result;
  }

  // The last key tile of V, zero-padded: M - (T - 1) keyTile real rows.
  Value lastRow0 = b.mul(b.sub(keyTiles, b.index(1)), b.index(keyTile));
  Value lastRows = b.sub(term.keys, lastRow0);
  auto lastForall = scf::ForallOp::create(
      ob,
      ArrayRef<OpFoldResult>{LinalgBuilder::ofr(term.batch),
                             LinalgBuilder::ofr(term.keyHeads)},
      ValueRange{b.empty({term.batch, term.keyHeads, b.index(keyTile),
                          term.valueDim})},
      std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(lastForall.getTerminator());
    Value bi = lastForall.getInductionVars()[0];
    Value hi = lastForall.getInductionVars()[1];
    Value last = b.paddedTile(term.values, bi, hi, lastRow0, keyTile,
                              term.valueDim, lastRows);
    ob.setInsertionPointToStart(lastForall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        ob, last, lastForall.getRegionIterArgs()[0],
        {bi, hi, ob.getIndexAttr(0), ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), ob.getIndexAttr(keyTile),
         LinalgBuilder::ofr(term.valueDim)},
        SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
  }
  result.values = lastForall.getResult(0);
  return result;
}

Value to_linalg::valueTile(LinalgBuilder &b, const TermOperands &term,
                          const KeyPanels &panels, Value bi, Value hi,
                          Value col0, int64_t keyTile) {
  if (!panels.lastValueTileOnly)
    return b.tile2d(panels.values, bi, hi, col0, keyTile, term.valueDim);
  Value whole = arith::CmpIOp::create(b.b, arith::CmpIPredicate::ule,
                                      b.add(col0, b.index(keyTile)), term.keys);
  return scf::IfOp::create(
             b.b, whole,
             [&](OpBuilder &ob, Location loc) {
               ImplicitLocOpBuilder ib(loc, ob);
               LinalgBuilder inner(ib);
               scf::YieldOp::create(ib, inner.tile2d(term.values, bi, hi, col0,
                                                     keyTile, term.valueDim));
             },
             [&](OpBuilder &ob, Location loc) {
               ImplicitLocOpBuilder ib(loc, ob);
               LinalgBuilder inner(ib);
               scf::YieldOp::create(
                   ib, inner.tile2d(panels.values, bi, hi, inner.index(0),
                                    keyTile, term.valueDim));
             })
      .getResult(0);
}

Value to_linalg::normalizeRows(LinalgBuilder &b, const TermOperands &term,
                               Value num, Value sums, Value row0, int64_t rows,
                               Value validRows, Value rowEps) {
  Value zero = b.f32(0.0);
  Value epsValue = b.f32(term.eps);
  Value outRows = b.index(rows);
  if (validRows) {
    // Only the real rows: the result is written in place into the output.
    outRows = validRows;
    num = b.tile2d(num, validRows, term.valueDim);
    sums = b.leading(sums, validRows);
    if (rowEps && cast<RankedTensorType>(rowEps.getType()).getRank() == 1)
      rowEps = b.leading(rowEps, validRows);
    else if (rowEps)
      rowEps = b.tile2d(rowEps, validRows, b.index(1));
  }
  // z = 1: the rows are the numerators (what an identity copy of them
  // canonicalises to).
  if (term.normalizer == Normalizer::None)
    return num;

  // One division per row, not per element: r_i = 1 / z_i (0 where z_i = 0),
  // then out = num * r. A vector division takes several FMAs' time (~5
  // cycles per 8 floats on a Sapphire Rapids core), and the normalisation
  // of a [rows, E] tile paid E of them per row.
  SmallVector<Value> rowInputs = {sums};
  SmallVector<AffineMap> rowMaps = {b.map(1, {0})};
  if (rowEps) {
    rowInputs.push_back(rowEps);
    if (cast<RankedTensorType>(rowEps.getType()).getRank() == 1)
      rowMaps.push_back(b.map(1, {0}));
    else
      rowMaps.push_back(AffineMap::get(
          1, 0, {b.b.getAffineDimExpr(0), b.b.getAffineConstantExpr(0)},
          b.b.getContext()));
  }
  rowMaps.push_back(b.map(1, {0}));
  Value reciprocals = b.generic(
      b.empty({outRows}), rowInputs, rowMaps, {kPar},
      [&](OpBuilder &ob, Location loc, ValueRange args) {
        Value z;
        if (term.normalizer == Normalizer::Rows) {
          z = arith::AddFOp::create(ob, loc, args[0],
                                    rowEps ? args[1] : epsValue);
        } else {
          Value r = linalg::IndexOp::create(ob, loc, 0);
          Value i = arith::AddIOp::create(ob, loc, row0, r);
          z = visibleKeys(ob, loc, term, i, term.keys);
        }
        // A row that sees no key (z = 0) is 0, not NaN.
        Value isZero =
            arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OEQ, z, zero);
        Value one = arith::ConstantOp::create(ob, loc, ob.getF32FloatAttr(1.0));
        Value reciprocal = arith::DivFOp::create(ob, loc, one, z);
        return arith::SelectOp::create(ob, loc, isZero, zero, reciprocal)
            .getResult();
      });
  return b.generic(b.empty({outRows, term.valueDim}), {num, reciprocals},
                   {b.map(2, {0, 1}), b.map(2, {0}), b.map(2, {0, 1})},
                   {kPar, kPar},
                   [&](OpBuilder &ob, Location loc, ValueRange args) {
                     return arith::MulFOp::create(ob, loc, args[0], args[1])
                         .getResult();
                   });
}

Value to_linalg::rowTile(LinalgBuilder &b, Value tensor, Value bi, Value hi,
                         Value row0, int64_t rows, Value length) {
  Value tile = consumeRowTile(
      b, tensor, bi, hi, row0, rows, length,
      [](LinalgBuilder &inner, Value tile, Value validRows) -> Value {
        if (validRows)
          return tile; // the padded tile owns its buffer
        return bufferization::AllocTensorOp::create(
            inner.b, cast<RankedTensorType>(tile.getType()), ValueRange(),
            tile);
      });
  // C19: an f16 / bf16 tile is widened here, in cache, as it is loaded.
  return widened(b, tile);
}

Value to_linalg::consumeRowTile(LinalgBuilder &b, Value tensor, Value bi,
                                Value hi, Value row0, int64_t rows,
                                Value length, RowTileConsumer consume) {
  return consumeRowTiles(b, {tensor}, bi, hi, row0, rows, length,
                         [&](LinalgBuilder &inner, ArrayRef<Value> tiles,
                             Value validRows) -> SmallVector<Value> {
                           return {consume(inner, tiles[0], validRows)};
                         })
      .front();
}

SmallVector<Value> to_linalg::consumeRowTiles(LinalgBuilder &b,
                                              ArrayRef<Value> tensors, Value bi,
                                              Value hi, Value row0,
                                              int64_t rows, Value length,
                                              RowTilesConsumer consume) {
  Value whole = arith::CmpIOp::create(b.b, arith::CmpIPredicate::ule,
                                      b.add(row0, b.index(rows)), length);
  // Past the end (a chunk of queries beyond the keys) the slice is empty.
  Value start = b.minIdx(row0, length);
  auto ifOp = scf::IfOp::create(
      b.b, whole,
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder ib(loc, ob);
        LinalgBuilder inner(ib);
        SmallVector<Value> tiles;
        for (Value tensor : tensors)
          tiles.push_back(
              inner.tile2d(tensor, bi, hi, row0, rows, inner.dim(tensor, 3)));
        scf::YieldOp::create(ib, consume(inner, tiles, Value()));
      },
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder ib(loc, ob);
        LinalgBuilder inner(ib);
        SmallVector<Value> tiles;
        for (Value tensor : tensors)
          tiles.push_back(inner.paddedTile(tensor, bi, hi, start, rows,
                                           inner.dim(tensor, 3),
                                           inner.sub(length, start)));
        scf::YieldOp::create(
            ib, consume(inner, tiles, realRows(inner, row0, rows, length)));
      });
  ifOp.getElseRegion().walk([&](linalg::LinalgOp op) {
    op->setAttr(kPartialTileAttrName, b.b.getUnitAttr());
  });
  return SmallVector<Value>(ifOp.getResults());
}

Value to_linalg::realRows(LinalgBuilder &b, Value row0, int64_t rows,
                          Value length) {
  return b.minIdx(b.index(rows), b.sub(length, b.minIdx(row0, length)));
}

Value to_linalg::queryFeatureTile(LinalgBuilder &b, const TermOperands &term,
                                  Value bi, Value hi, Value row0, int64_t rows,
                                  Value &rowEps) {
  Value rowShift;
  Value phi;
  if (isElementwiseFeature(term.features, /*keySide=*/false))
    // Padded query rows are never stored: no mask.
    phi = consumeRowTile(b, term.rawQ, bi, hi, row0, rows, term.queries,
                         [&](LinalgBuilder &inner, Value tile, Value) {
                           return featureTile(inner, term.features,
                                              widened(inner, tile), row0,
                                              Value());
                         });
  else
    phi = featureTile(b, term.features,
                      rowTile(b, term.rawQ, bi, hi, row0, rows, term.queries),
                      row0, Value(), /*keySide=*/false, &rowShift);
  rowEps = Value();
  if (rowShift) {
    // eps exp(-(c_r + c)): the weights of row r are scaled by exp(-c_r) on
    // the query side and exp(-c) on the key side. (An overflow to inf is the
    // right limit: eps then dominates and the row is 0.)
    Value keyShift = term.features.favorShift;
    double eps = term.eps;
    rowEps = b.generic(
        b.empty({b.index(rows)}), {rowShift}, {b.map(1, {0}), b.map(1, {0})},
        {kPar}, [&](OpBuilder &ob, Location loc, ValueRange args) {
          Value total = arith::AddFOp::create(ob, loc, args[0], keyShift);
          Value factor = math::ExpOp::create(
              ob, loc, arith::NegFOp::create(ob, loc, total));
          return arith::MulFOp::create(
                     ob, loc, factor,
                     arith::ConstantOp::create(ob, loc,
                                               ob.getF32FloatAttr(eps)))
              .getResult();
        });
  }
  return phi;
}

Value to_linalg::keyFeatureTile(LinalgBuilder &b, const TermOperands &term,
                                Value bi, Value hi, Value row0, int64_t rows) {
  Value phi;
  if (isElementwiseFeature(term.features, /*keySide=*/true))
    phi = consumeRowTile(
        b, term.rawK, bi, hi, row0, rows, term.keys,
        [&](LinalgBuilder &inner, Value tile, Value validRows) {
          return featureTile(inner, term.features, widened(inner, tile), row0,
                             validRows, /*keySide=*/true);
        });
  else
    phi = featureTile(b, term.features,
                      rowTile(b, term.rawK, bi, hi, row0, rows, term.keys),
                      row0, realRows(b, row0, rows, term.keys),
                      /*keySide=*/true);
  return applyKeyWeight(b, term, phi, bi, hi, row0);
}

Value to_linalg::forallRowTiles(
    LinalgBuilder &b, const TermOperands &term, int64_t rows, bool staticTiles,
    ArrayRef<Value> upperBounds,
    function_ref<RowTile(ValueRange ivs, Value validRows)> body,
    function_ref<Value(ValueRange ivs)> rowOf, Value *perRowResult) {
  ImplicitLocOpBuilder &ib = b.b;
  Value outRows = staticTiles
                      ? b.mul(b.ceilDiv(term.queries, rows), b.index(rows))
                      : term.queries;
  SmallVector<Value> outs = {
      b.empty({term.batch, term.heads, outRows, term.valueDim})};
  if (perRowResult)
    outs.push_back(b.empty({term.batch, term.heads, outRows}));
  SmallVector<OpFoldResult> ubs;
  for (Value ub : upperBounds)
    ubs.push_back(LinalgBuilder::ofr(ub));
  auto forall = scf::ForallOp::create(ib, ubs, outs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPoint(forall.getTerminator());
    SmallVector<Value> ivs(forall.getInductionVars());
    Value row0 = rowOf(ivs);
    Value validRows =
        staticTiles ? Value() : realRows(b, row0, rows, term.queries);
    RowTile result = body(ivs, validRows);
    ib.setInsertionPointToStart(forall.getTerminator().getBody());
    OpFoldResult tileRows =
        staticTiles ? ib.getIndexAttr(rows) : LinalgBuilder::ofr(validRows);
    SmallVector<OpFoldResult> offsets = {ivs[0], ivs[1], row0,
                                         ib.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {ib.getIndexAttr(1), ib.getIndexAttr(1),
                                       tileRows,
                                       LinalgBuilder::ofr(term.valueDim)};
    SmallVector<OpFoldResult> strides(4, ib.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(ib, result.rows,
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
    if (perRowResult) {
      offsets.pop_back();
      sizes.pop_back();
      strides.pop_back();
      tensor::ParallelInsertSliceOp::create(ib, result.perRow,
                                            forall.getRegionIterArgs()[1],
                                            offsets, sizes, strides);
    }
  }
  if (perRowResult) {
    Value perRow = forall.getResult(1);
    if (staticTiles) {
      SmallVector<OpFoldResult> offsets(3, ib.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = {LinalgBuilder::ofr(term.batch),
                                         LinalgBuilder::ofr(term.heads),
                                         LinalgBuilder::ofr(term.queries)};
      SmallVector<OpFoldResult> strides(3, ib.getIndexAttr(1));
      perRow =
          tensor::ExtractSliceOp::create(ib, perRow, offsets, sizes, strides);
    }
    *perRowResult = perRow;
  }
  return termResult(b, term, forall.getResult(0), staticTiles);
}

Value to_linalg::logSumExpRows(LinalgBuilder &b, Value maxes, Value sums) {
  return b.generic(
      b.empty({b.dim(maxes, 0)}), {maxes, sums},
      {b.map(1, {0}), b.map(1, {0}), b.map(1, {0})}, {kPar},
      [](OpBuilder &gb, Location gl, ValueRange args) {
        Value minusInf =
            arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(-INFINITY));
        Value none = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OEQ,
                                           args[0], minusInf);
        Value lse = arith::AddFOp::create(gb, gl, args[0],
                                          math::LogOp::create(gb, gl, args[1]));
        return arith::SelectOp::create(gb, gl, none, minusInf, lse).getResult();
      });
}

Value to_linalg::termResult(LinalgBuilder &b, const TermOperands &term,
                            Value out, bool padded) {
  ImplicitLocOpBuilder &ib = b.b;
  if (!padded) {
    if (out.getType() != term.resultType)
      out = tensor::CastOp::create(ib, term.resultType, out);
    return out;
  }
  SmallVector<OpFoldResult> offsets(4, ib.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {
      LinalgBuilder::ofr(term.batch), LinalgBuilder::ofr(term.heads),
      LinalgBuilder::ofr(term.queries), LinalgBuilder::ofr(term.valueDim)};
  SmallVector<OpFoldResult> strides(4, ib.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(ib, term.resultType, out, offsets,
                                        sizes, strides);
}

std::pair<Value, Value> to_linalg::initialStates(LinalgBuilder &b,
                                                 const TermOperands &term,
                                                 Value bi, Value hi) {
  if (!term.initialState)
    return {b.filled({term.width, term.valueDim}, 0.0),
            b.filled({term.width}, 0.0)};
  ImplicitLocOpBuilder &ib = b.b;
  auto own = [&](Value slice) -> Value {
    return bufferization::AllocTensorOp::create(
        ib, cast<RankedTensorType>(slice.getType()), ValueRange(), slice);
  };
  Value state = own(b.tile2d(term.initialState, bi, hi, b.index(0), term.width,
                             term.valueDim));
  // Without a norm state (the none normaliser) z is unused: zeros.
  Value norm = term.initialNorm
                   ? own(b.tile1d(term.initialNorm, bi, hi, term.width))
                   : b.filled({term.width}, 0.0);
  return {state, norm};
}

void to_linalg::appendStateOutputs(LinalgBuilder &b, const TermOperands &term,
                                   SmallVectorImpl<Value> &outs) {
  if (term.returnsState)
    outs.push_back(
        b.empty({term.batch, term.heads, term.width, term.valueDim}));
  if (term.returnsNorm)
    outs.push_back(b.empty({term.batch, term.heads, term.width}));
}

void to_linalg::insertFinalStates(ImplicitLocOpBuilder &ob,
                                  scf::ForallOp forall,
                                  const TermOperands &term, unsigned first,
                                  Value bi, Value hi, Value state, Value norm) {
  if (term.returnsState)
    tensor::ParallelInsertSliceOp::create(
        ob, state, forall.getRegionIterArgs()[first],
        {bi, hi, ob.getIndexAttr(0), ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(term.width),
         LinalgBuilder::ofr(term.valueDim)},
        SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
  if (term.returnsNorm)
    tensor::ParallelInsertSliceOp::create(
        ob, norm, forall.getRegionIterArgs()[first + 1],
        {bi, hi, ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1),
         LinalgBuilder::ofr(term.width)},
        SmallVector<OpFoldResult>(3, ob.getIndexAttr(1)));
}

FinalStates to_linalg::finalStatesOf(scf::ForallOp forall,
                                     const TermOperands &term, unsigned first) {
  FinalStates states;
  if (term.returnsState)
    states.state = forall.getResult(first);
  if (term.returnsNorm)
    states.norm = forall.getResult(first + 1);
  return states;
}

Value to_linalg::headRows(LinalgBuilder &b, scf::ForallOp forall, Value bi,
                          Value hi, Value outRows, Value valueDim, bool fresh) {
  if (fresh)
    return b.empty({outRows, valueDim});
  ImplicitLocOpBuilder &ob = b.b;
  auto headType = RankedTensorType::get(
      {getConstantIntValue(outRows).value_or(ShapedType::kDynamic),
       getConstantIntValue(valueDim).value_or(ShapedType::kDynamic)},
      ob.getF32Type());
  return tensor::ExtractSliceOp::create(
      ob, headType, forall.getRegionIterArgs()[0],
      ArrayRef<OpFoldResult>{bi, hi, ob.getIndexAttr(0), ob.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{ob.getIndexAttr(1), ob.getIndexAttr(1),
                             LinalgBuilder::ofr(outRows),
                             LinalgBuilder::ofr(valueDim)},
      SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
}

void to_linalg::storeHeadRows(ImplicitLocOpBuilder &ob, scf::ForallOp forall,
                              Value rows, Value bi, Value hi, Value outRows,
                              Value valueDim) {
  tensor::ParallelInsertSliceOp::create(
      ob, rows, forall.getRegionIterArgs()[0],
      {bi, hi, ob.getIndexAttr(0), ob.getIndexAttr(0)},
      {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(outRows),
       LinalgBuilder::ofr(valueDim)},
      SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
}
