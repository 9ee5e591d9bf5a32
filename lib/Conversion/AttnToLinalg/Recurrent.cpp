//===- Recurrent.cpp - Token-by-token lowering of causal kernel terms -----===//
//
// The recurrent order (DESIGN §1.2): per (batch, head) the keys are taken
// one at a time,
//
//   S_i = g_i S_{i-1} + kappa_i phi(k_i) v_i^T    (W x E)
//   z_i = g_i z_{i-1} + kappa_i phi(k_i)          (W)
//   o_i = phi(q_i)^T S_i / (phi(q_i) . z_i + eps)  (rows; none: phi(q_i)^T S_i)
//
// so the work per token is two passes over the state and nothing is
// reused across tokens: memory-bound, and the right form for decoding (one
// or a few tokens) rather than for a prefill. The state lives in the final
// state's output (or a fresh buffer) from the start, and token 0 reads S0
// (or nothing) instead of a copy of it: a one-token decode step reads S0
// once, writes S once and reads it once for the query. The feature rows are
// mapped a tile of `tile` tokens at a time (the same feature tiles as the other
// strategies), and an inner loop walks the tile's real tokens.
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

/// Row \p r of the 2-D \p tile as a [1, cols] tile.
static Value rowOf(LinalgBuilder &b, Value tile, Value r) {
  auto type = cast<RankedTensorType>(tile.getType());
  auto rowType =
      RankedTensorType::get({1, type.getDimSize(1)}, type.getElementType());
  ImplicitLocOpBuilder &ib = b.b;
  return tensor::ExtractSliceOp::create(
      ib, rowType, tile, ArrayRef<OpFoldResult>{r, ib.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1),
                             LinalgBuilder::ofr(b.dim(tile, 1))},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1), ib.getIndexAttr(1)});
}

/// The [rows, cols] block of the 2-D \p tensor at (row, col), static where
/// the sizes are constants.
static Value slice2d(ImplicitLocOpBuilder &ib, Value tensor, Value row,
                     Value col, Value rows, Value cols) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape = {
      getConstantIntValue(rows).value_or(ShapedType::kDynamic),
      getConstantIntValue(cols).value_or(ShapedType::kDynamic)};
  return tensor::ExtractSliceOp::create(
      ib, RankedTensorType::get(shape, type.getElementType()), tensor,
      ArrayRef<OpFoldResult>{row, col},
      ArrayRef<OpFoldResult>{LinalgBuilder::ofr(rows),
                             LinalgBuilder::ofr(cols)},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1), ib.getIndexAttr(1)});
}

/// Element \p r of the 1-D \p vector as a [1] tensor.
static Value elementOf(LinalgBuilder &b, Value vector, Value r) {
  ImplicitLocOpBuilder &ib = b.b;
  return tensor::ExtractSliceOp::create(
      ib, vector, ArrayRef<OpFoldResult>{r},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
}

Value to_linalg::lowerRecurrent(LinalgBuilder &b, const TermOperands &term,
                                const RecurrentTiles &tiles,
                                FinalStates *finalStates) {
  const int64_t tile = tiles.tile;
  const bool staticTiles = tiles.staticTiles;
  Value batch = term.batch, heads = term.heads, width = term.width,
        valueDim = term.valueDim;
  ImplicitLocOpBuilder &ob = b.b;
  Value tileCount = b.ceilDiv(term.queries, tile);
  Value padded = b.mul(tileCount, b.index(tile));
  // static-tiles: phi(Q), phi(K) and V padded to whole tiles first.
  Value paddedQ, paddedK, paddedV, paddedRowEps;
  if (staticTiles) {
    Value rowEps;
    auto [featureQ, featureK] = buildFeatureRows(b, term, &rowEps);
    paddedQ = b.padRows(featureQ, padded);
    if (rowEps)
      paddedRowEps = b.padRows(rowEps, padded);
    paddedK = b.padRows(featureK, padded);
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
    // The state's buffers: (bi, hi)'s slices of the final state outputs, or
    // fresh ones. Token 0 writes them whole (S_0 = g_0 S0 + kappa_0 phi(k_0)
    // v_0^T, without S0 when there is none), so they start uninitialised.
    auto stateSlice = [&](unsigned result, bool returned,
                          ArrayRef<Value> sizes) -> Value {
      if (!returned)
        return b.empty(sizes);
      SmallVector<int64_t> shape;
      SmallVector<OpFoldResult> offsets = {bi, hi},
                                extents = {ob.getIndexAttr(1),
                                           ob.getIndexAttr(1)};
      for (Value size : sizes) {
        shape.push_back(
            getConstantIntValue(size).value_or(ShapedType::kDynamic));
        offsets.push_back(ob.getIndexAttr(0));
        extents.push_back(LinalgBuilder::ofr(size));
      }
      return tensor::ExtractSliceOp::create(
          ob, RankedTensorType::get(shape, ob.getF32Type()),
          forall.getRegionIterArgs()[result], offsets, extents,
          SmallVector<OpFoldResult>(offsets.size(), ob.getIndexAttr(1)));
    };
    Value state = stateSlice(1, term.returnsState, {width, valueDim});
    Value norm =
        stateSlice(term.returnsState ? 2 : 1, term.returnsNorm, {width});
    // The rows of S a token updates and queries together (W static and a
    // multiple of it), 0 for the whole state at once.
    constexpr int64_t kStateRows = 16;
    std::optional<int64_t> staticWidth = getConstantIntValue(width);
    const int64_t stateRowTile = staticWidth && *staticWidth > kStateRows &&
                                         *staticWidth % kStateRows == 0
                                     ? kStateRows
                                     : 0;
    // S0 and z0 of (bi, hi), read by token 0 only.
    Value initialState, initialNorm;
    if (term.initialState)
      initialState =
          b.tile2d(term.initialState, bi, hi, b.index(0), width, valueDim);
    if (term.initialNorm)
      initialNorm = b.tile1d(term.initialNorm, bi, hi, width);
    Value headOut = headRows(b, forall, bi, hi, outRows, valueDim, staticTiles);
    auto tiles = scf::ForOp::create(
        ob, b.index(0), tileCount, b.index(1), ValueRange{state, norm, headOut},
        [&](OpBuilder &nb, Location loc, Value ti, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nb);
          LinalgBuilder inner(ib);
          Value row0 = inner.mul(ti, inner.index(tile));
          Value qTile, kTile, vTile, rowEps;
          if (staticTiles) {
            qTile = inner.tile2d(paddedQ, bi, hi, row0, tile, width);
            if (paddedRowEps)
              rowEps = inner.tile2d(paddedRowEps, bi, hi, row0, tile,
                                    inner.index(1));
            kTile = inner.tile2d(paddedK, bi, hi, row0, tile, width);
            vTile = inner.tile2d(paddedV, bi, hi, row0, tile, valueDim);
          } else {
            qTile = queryFeatureTile(inner, term, bi, hi, row0, tile, rowEps);
            kTile = keyFeatureTile(inner, term, bi, hi, row0, tile);
            vTile = rowTile(inner, term.values, bi, hi, row0, tile, term.keys);
          }
          // g_t of the tile's tokens, exp(log g) once per token rather than
          // per state element.
          Value gTile;
          if (term.decay.hasDecay())
            gTile = inner.generic(
                inner.empty({inner.index(tile)}),
                {tokenLogDecay(inner, term, bi, hi, row0, tile)},
                {inner.map(1, {0}), inner.map(1, {0})}, {kPar},
                [](OpBuilder &gb, Location gl, ValueRange args) {
                  return math::ExpOp::create(gb, gl, args[0]).getResult();
                });
          Value real = realRows(inner, row0, tile, term.queries);
          Value tt = inner.index(tile);
          Value outTile = inner.empty({tt, valueDim});
          // Only the tile's real tokens: padding leaves S and z as they are.
          auto tokens = scf::ForOp::create(
              ib, inner.index(0), real, inner.index(1),
              ValueRange{iter[0], iter[1], outTile},
              [&](OpBuilder &tb, Location tl, Value r, ValueRange carried) {
                ImplicitLocOpBuilder tib(tl, tb);
                LinalgBuilder token(tib);
                Value kRow = rowOf(token, kTile, r);
                Value vRow = rowOf(token, vTile, r);
                Value qRow = rowOf(token, qTile, r);
                AffineMap kMap = AffineMap::get(
                    2, 0,
                    {tib.getAffineConstantExpr(0), tib.getAffineDimExpr(0)},
                    tib.getContext());
                AffineMap vMap = AffineMap::get(
                    2, 0,
                    {tib.getAffineConstantExpr(0), tib.getAffineDimExpr(1)},
                    tib.getContext());
                AffineMap first2 = AffineMap::get(
                    2, 0, {tib.getAffineConstantExpr(0)}, tib.getContext());
                AffineMap first1 = AffineMap::get(
                    1, 0, {tib.getAffineConstantExpr(0)}, tib.getContext());
                AffineMap kMap1 = AffineMap::get(
                    1, 0,
                    {tib.getAffineConstantExpr(0), tib.getAffineDimExpr(0)},
                    tib.getContext());
                Value gRow = gTile ? elementOf(token, gTile, r) : Value();
                // out = g previous + term, term the product of termInputs'
                // elements (phi(k) v^T for S, phi(k) for z); in place when
                // previous is out, term alone when there is no previous
                // (token 0 without a state in). Token 0 reads S0 / z0 as
                // previous and fills the carried buffer.
                auto decayedSum = [&](LinalgBuilder &at, Value previous,
                                      Value out, ArrayRef<Value> termInputs,
                                      ArrayRef<AffineMap> termMaps,
                                      AffineMap gMap) -> Value {
                  unsigned rank =
                      cast<RankedTensorType>(out.getType()).getRank();
                  AffineMap identity =
                      rank == 2 ? at.map(2, {0, 1}) : at.map(1, {0});
                  SmallVector<Value> inputs(termInputs);
                  SmallVector<AffineMap> maps(termMaps);
                  bool decayed = gRow && previous;
                  if (decayed) {
                    inputs.push_back(gRow);
                    maps.push_back(gMap);
                  }
                  bool separate = previous && previous != out;
                  if (separate) {
                    inputs.push_back(previous);
                    maps.push_back(identity);
                  }
                  maps.push_back(identity);
                  size_t factors = termInputs.size();
                  return at.generic(
                      out, inputs, maps, SmallVector<IteratorType>(rank, kPar),
                      [&](OpBuilder &gb, Location gl,
                          ValueRange args) -> Value {
                        Value term = args[0];
                        for (size_t f = 1; f < factors; ++f)
                          term = arith::MulFOp::create(gb, gl, term, args[f]);
                        if (!previous)
                          return term;
                        Value s =
                            separate ? args[args.size() - 2] : args.back();
                        if (decayed)
                          s = arith::MulFOp::create(gb, gl, s, args[factors]);
                        return arith::AddFOp::create(gb, gl, s, term)
                            .getResult();
                      });
                };
                // S = g S + phi(k) v^T on the rows of out, a slice of the
                // state, with kPart the matching part of phi(k).
                auto updateRows = [&](LinalgBuilder &at, Value previous,
                                      Value out, Value kPart) -> Value {
                  return decayedSum(at, previous, out, {kPart, vRow},
                                    {kMap, vMap}, first2);
                };
                // z = g z + phi(k)
                auto updateNorm = [&](LinalgBuilder &at,
                                      Value previous) -> Value {
                  return decayedSum(at, previous, carried[1], {kRow}, {kMap1},
                                    first1);
                };
                Value isFirst =
                    arith::CmpIOp::create(tib, arith::CmpIPredicate::eq,
                                          token.add(row0, r), token.index(0));
                auto firstOrNext =
                    [&](OpBuilder &ib2, Location il,
                        function_ref<Value(LinalgBuilder &, Value)> update,
                        Value initial, Value current) {
                      return scf::IfOp::create(
                                 ib2, il, isFirst,
                                 [&](OpBuilder &fb, Location fl) {
                                   ImplicitLocOpBuilder fib(fl, fb);
                                   LinalgBuilder at(fib);
                                   scf::YieldOp::create(fib,
                                                        update(at, initial));
                                 },
                                 [&](OpBuilder &fb, Location fl) {
                                   ImplicitLocOpBuilder fib(fl, fb);
                                   LinalgBuilder at(fib);
                                   scf::YieldOp::create(fib,
                                                        update(at, current));
                                 })
                          .getResult(0);
                    };
                Value newNorm =
                    firstOrNext(tib, tl, updateNorm, initialNorm, carried[1]);
                // S = g S + phi(k) v^T and num = phi(q)^T S, then
                // o = num / (phi(q) . z + eps)
                Value one = token.index(1);
                Value newState, num;
                if (stateRowTile) {
                  // A block of state rows at a time: each is updated, then
                  // multiplied into num while it is still in L1, so that S
                  // is read and written once per token.
                  auto rows = scf::ForOp::create(
                      tib, token.index(0), width, token.index(stateRowTile),
                      ValueRange{carried[0],
                                 token.filled({one, valueDim}, 0.0)},
                      [&](OpBuilder &rb, Location rl, Value f0,
                          ValueRange acc) {
                        ImplicitLocOpBuilder rib(rl, rb);
                        LinalgBuilder at(rib);
                        Value rowsHere = at.index(stateRowTile);
                        Value zero = at.index(0);
                        auto stateBlock = [&](Value tensor) -> Value {
                          return slice2d(rib, tensor, f0, zero, rowsHere,
                                         valueDim);
                        };
                        Value kPart =
                            slice2d(rib, kRow, zero, f0, one, rowsHere);
                        Value qPart =
                            slice2d(rib, qRow, zero, f0, one, rowsHere);
                        Value out = stateBlock(acc[0]);
                        Value first =
                            initialState ? stateBlock(initialState) : Value();
                        Value updated = firstOrNext(
                            rib, rl,
                            [&](LinalgBuilder &b2, Value previous) {
                              return updateRows(b2, previous, out, kPart);
                            },
                            first, out);
                        Value partial = at.matmulNN(qPart, updated, acc[1]);
                        Value stored = tensor::InsertSliceOp::create(
                            rib, updated, acc[0],
                            ArrayRef<OpFoldResult>{f0, rib.getIndexAttr(0)},
                            ArrayRef<OpFoldResult>{
                                rib.getIndexAttr(stateRowTile),
                                LinalgBuilder::ofr(valueDim)},
                            ArrayRef<OpFoldResult>{rib.getIndexAttr(1),
                                                   rib.getIndexAttr(1)});
                        scf::YieldOp::create(rib, ValueRange{stored, partial});
                      });
                  newState = rows.getResult(0);
                  num = rows.getResult(1);
                } else {
                  newState = firstOrNext(
                      tib, tl,
                      [&](LinalgBuilder &b2, Value previous) {
                        return updateRows(b2, previous, carried[0], kRow);
                      },
                      initialState, carried[0]);
                  num = token.matmulNN(qRow, newState,
                                       token.filled({one, valueDim}, 0.0));
                }
                Value den =
                    token.matvec(qRow, newNorm, token.filled({one}, 0.0));
                Value epsRow;
                if (rowEps)
                  epsRow =
                      cast<RankedTensorType>(rowEps.getType()).getRank() == 1
                          ? elementOf(token, rowEps, r)
                          : rowOf(token, rowEps, r);
                Value o = normalizeRows(token, term, num, den,
                                        token.add(row0, r), 1, Value(), epsRow);
                Value newOut = tensor::InsertSliceOp::create(
                    tib, o, carried[2],
                    ArrayRef<OpFoldResult>{r, tib.getIndexAttr(0)},
                    ArrayRef<OpFoldResult>{tib.getIndexAttr(1),
                                           LinalgBuilder::ofr(valueDim)},
                    ArrayRef<OpFoldResult>{tib.getIndexAttr(1),
                                           tib.getIndexAttr(1)});
                scf::YieldOp::create(tib,
                                     ValueRange{newState, newNorm, newOut});
              });
          // The tile's rows of the output (its real rows without
          // static-tiles; an empty tile past N stores nothing, at row N).
          Value at = staticTiles ? row0 : inner.minIdx(row0, term.queries);
          Value stored = tokens.getResult(2);
          if (!staticTiles)
            stored = inner.tile2d(stored, real, valueDim);
          SmallVector<OpFoldResult> offsets = {at, ib.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {
              staticTiles ? ib.getIndexAttr(tile) : LinalgBuilder::ofr(real),
              LinalgBuilder::ofr(valueDim)};
          SmallVector<OpFoldResult> strides(2, ib.getIndexAttr(1));
          Value newOut = tensor::InsertSliceOp::create(ib, stored, iter[2],
                                                       offsets, sizes, strides);
          scf::YieldOp::create(
              ib, ValueRange{tokens.getResult(0), tokens.getResult(1), newOut});
        });
    ob.setInsertionPointToStart(forall.getTerminator().getBody());
    storeHeadRows(ob, forall, tiles.getResult(2), bi, hi, outRows, valueDim);
    insertFinalStates(ob, forall, term, 1, bi, hi, tiles.getResult(0),
                      tiles.getResult(1));
  }
  if (finalStates)
    *finalStates = finalStatesOf(forall, term, 1);
  return termResult(b, term, forall.getResult(0), staticTiles);
}
