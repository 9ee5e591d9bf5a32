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
  PaddedOperands padded = padToTiles(b, term, queryTile, keyTile);
  Value queryTiles = padded.queryTiles, keyTiles = padded.keyTiles;
  Value paddedQ = padded.queries, paddedKT = padded.keysT,
        paddedV = padded.values;
  Value batch = term.batch, heads = term.heads, width = term.width,
        valueDim = term.valueDim;
  ImplicitLocOpBuilder &ob = b.b;

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
          Value kTile =
              inner.panel(paddedKT, bi, hi, kt, width, keyTile);
          Value vTile = inner.tile2d(paddedV, bi, hi, row0, keyTile, valueDim);
          // S_t = S_{t-1} + phi(K_t)^T V_t
          Value newState = inner.matmulNN(kTile, vTile, iter[0]);
          // z_t = z_{t-1} + rowSum(phi(K_t)^T)
          Value newNorm = inner.rowReduce(kTile, iter[1], false);
          scf::YieldOp::create(ib, ValueRange{newState, newNorm});
        });
    ob.setInsertionPointToStart(statePass.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        ob, loop.getResult(0), statePass.getRegionIterArgs()[0],
        {bi, hi, ob.getIndexAttr(0), ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(width),
         LinalgBuilder::ofr(valueDim)},
        SmallVector<OpFoldResult>(4, ob.getIndexAttr(1)));
    tensor::ParallelInsertSliceOp::create(
        ob, loop.getResult(1), statePass.getRegionIterArgs()[1],
        {bi, hi, ob.getIndexAttr(0)},
        {ob.getIndexAttr(1), ob.getIndexAttr(1), LinalgBuilder::ofr(width)},
        SmallVector<OpFoldResult>(3, ob.getIndexAttr(1)));
  }
  Value allStates = statePass.getResult(0);
  Value allNorms = statePass.getResult(1);

  // Query pass: one query tile per iteration, against its head's S and z.
  auto rowOf = [&](ValueRange ivs) {
    return b.mul(ivs[2], b.index(queryTile));
  };
  auto body = [&](ValueRange ivs) -> Value {
    Value bi = ivs[0], hi = ivs[1], row0 = rowOf(ivs);
    Value qTile = b.tile2d(paddedQ, bi, hi, row0, queryTile, width);
    Value state = b.tile2d(allStates, bi, hi, b.index(0), width, valueDim);
    Value norm = b.tile1d(allNorms, bi, hi, width);
    // num = phi(Q_t) S, den = phi(Q_t) z
    Value num =
        b.matmulNN(qTile, state, b.filled({b.index(queryTile), valueDim}, 0.0));
    Value den = b.matvec(qTile, norm, b.filled({b.index(queryTile)}, 0.0));
    return normalizeRows(b, term, num, den, row0, queryTile);
  };
  return forallRowTiles(b, term, b.mul(queryTiles, b.index(queryTile)),
                        queryTile, {batch, heads, queryTiles}, body, rowOf);
}
