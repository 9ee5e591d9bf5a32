//===- KvFirst.cpp - kv-first lowering of unmasked kernel terms -----------===//
//
// Without a mask every query sees every key, so the keys fold into one
// state per (batch, head) before any query is read:
//
//   S = sum_j phi(k_j) v_j^T   (W x E),   z = sum_j phi(k_j)   (W)
//   O_i = phi(q_i) S / phi(q_i) . z
//
// a state pass over key tiles (scf.forall over (batch, head), scf.for over
// the tiles), then a query pass (scf.forall over (batch, head, query tile)).
// Nothing is quadratic in N.
//
// The CPU form maps each tile itself: phi(K_t) from a [T, D] tile of K (a
// copy, or the last rows zero-padded, with phi = 0 on the padding) feeds
// S += phi(K_t)^T V_t as A^T B, with no transposed copy of K; phi(Q_t) is
// mapped from Q's tile; the last query tile stores only its real rows. So
// the whole sequence is read once per pass and no buffer of its size is
// made. With `static-tiles` (GPU), phi(Q), phi(K)^T (in tile panels) and V
// are padded whole sequences first, as in the other strategies.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

Value to_linalg::lowerKvFirst(LinalgBuilder &b, const TermOperands &term,
                              const KvFirstTiles &tiles) {
  const int64_t queryTile = tiles.queryTile, keyTile = tiles.keyTile;
  Value batch = term.batch, heads = term.heads, width = term.width,
        valueDim = term.valueDim;
  ImplicitLocOpBuilder &ob = b.b;
  const bool staticTiles = tiles.staticTiles;
  // static-tiles: phi(Q), phi(K)^T (in panels) and V padded to whole tiles.
  PaddedOperands padded;
  if (staticTiles)
    padded = padToTiles(b, term, queryTile, keyTile);
  Value keyTiles = b.ceilDiv(term.keys, keyTile);

  // State pass: S and z per (batch, head), into [B, H, W, E] and [B, H, W].
  Value states = b.empty({batch, heads, width, valueDim});
  Value norms = b.empty({batch, heads, width});
  auto statePass =
      scf::ForallOp::create(ob,
                            ArrayRef<OpFoldResult>{LinalgBuilder::ofr(batch),
                                                   LinalgBuilder::ofr(heads)},
                            ValueRange{states, norms}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(ob);
    ob.setInsertionPoint(statePass.getTerminator());
    Value bi = statePass.getInductionVars()[0];
    Value hi = statePass.getInductionVars()[1];
    // S = 0, z = 0
    Value state = b.filled({width, valueDim}, 0.0);
    Value norm = b.filled({width}, 0.0);
    auto loop = scf::ForOp::create(
        ob, b.index(0), keyTiles, b.index(1), ValueRange{state, norm},
        [&](OpBuilder &nb, Location loc, Value kt, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nb);
          LinalgBuilder inner(ib);
          Value row0 = inner.mul(kt, inner.index(keyTile));
          if (staticTiles) {
            // S += phi(K_t)^T V_t, z += rowSum(phi(K_t)^T)
            Value kT = inner.panel(padded.keysT, bi, hi, kt, width, keyTile);
            Value vTile =
                inner.tile2d(padded.values, bi, hi, row0, keyTile, valueDim);
            scf::YieldOp::create(
                ib, ValueRange{inner.matmulNN(kT, vTile, iter[0]),
                               inner.rowReduce(kT, iter[1], false)});
            return;
          }
          // phi(K_t) from K's tile, 0 on the rows past M; then
          // S_t = S_{t-1} + phi(K_t)^T V_t, z_t = z_{t-1} + colSum(phi(K_t))
          if (isElementwiseFeature(term.features, /*keySide=*/true)) {
            // Whole tiles read K and V in place (no copies, no padding
            // mask); the last, partial one builds its own step.
            scf::YieldOp::create(
                ib,
                consumeRowTiles(
                    inner, {term.rawK, term.values}, bi, hi, row0, keyTile,
                    term.keys,
                    [&](LinalgBuilder &tb, ArrayRef<Value> tiles,
                        Value validRows) -> SmallVector<Value> {
                      Value phiK = applyKeyWeight(
                          tb, term,
                          featureTile(tb, term.features, widened(tb, tiles[0]),
                                      row0, validRows, /*keySide=*/true),
                          bi, hi, row0);
                      return {tb.matmulTN(phiK, widened(tb, tiles[1]), iter[0]),
                              tb.columnSum(phiK, iter[1])};
                    }));
            return;
          }
          Value phiK = keyFeatureTile(inner, term, bi, hi, row0, keyTile);
          Value vTile =
              rowTile(inner, term.values, bi, hi, row0, keyTile, term.keys);
          scf::YieldOp::create(ib,
                               ValueRange{inner.matmulTN(phiK, vTile, iter[0]),
                                          inner.columnSum(phiK, iter[1])});
        });
    ob.setInsertionPointToStart(statePass.getTerminator().getBody());
    storeHeadRows(ob, statePass, loop.getResult(0), bi, hi, width, valueDim);
    tensor::ParallelInsertSliceOp::create(
        ob, loop.getResult(1), statePass.getRegionIterArgs()[1],
        {bi, hi, ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(width)},
        SmallVector<OpFoldResult>(3, ob.getIndexAttr(1)));
  }
  Value allStates = statePass.getResult(0);
  Value allNorms = statePass.getResult(1);

  // Query pass: one query tile per iteration, against its head's S and z.
  Value queryTiles = b.ceilDiv(term.queries, queryTile);
  auto rowOf = [&](ValueRange ivs) {
    return b.mul(ivs[2], b.index(queryTile));
  };
  auto body = [&](ValueRange ivs, Value validRows) -> RowTile {
    Value bi = ivs[0], hi = ivs[1], row0 = rowOf(ivs);
    Value rowEps;
    Value phiQ =
        staticTiles
            ? b.tile2d(padded.queries, bi, hi, row0, queryTile, width)
            : queryFeatureTile(b, term, bi, hi, row0, queryTile, rowEps);
    if (staticTiles && padded.rowEps)
      rowEps = b.tile2d(padded.rowEps, bi, hi, row0, queryTile, b.index(1));
    Value state = b.tile2d(allStates, bi, hi, b.index(0), width, valueDim);
    Value norm = b.tile1d(allNorms, bi, hi, width);
    // num = phi(Q_t) S, den = phi(Q_t) z
    Value num =
        b.matmulNN(phiQ, state, b.filled({b.index(queryTile), valueDim}, 0.0));
    Value den = b.matvec(phiQ, norm, b.filled({b.index(queryTile)}, 0.0));
    return {
        normalizeRows(b, term, num, den, row0, queryTile, validRows, rowEps)};
  };
  return forallRowTiles(b, term, queryTile, staticTiles,
                        {batch, heads, queryTiles}, body, rowOf);
}
