//===- Masks.cpp - The attn masks as predicates and visible ranges --------===//
//
// A mask is read three ways by the lowering: as the predicate `query i may
// see key j` (inside score tiles), as the number of keys query i sees (the
// `length` normaliser) and as the range of key tiles a query tile can see
// at all (the loop bounds of qk-first, so that invisible tiles cost nothing).
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

/// ceil(L) clamped to [0, limit] as an index, 0 for NaN: j < L for a whole
/// j exactly when j < the result.
static Value lengthLimit(LinalgBuilder &b, Value lengths, Value bi,
                         Value limit) {
  ImplicitLocOpBuilder &ib = b.b;
  Value length = tensor::ExtractOp::create(ib, lengths, ValueRange{bi});
  Value zero = b.f32(0.0);
  Value positive =
      arith::CmpFOp::create(ib, arith::CmpFPredicate::OGT, length, zero);
  Value atLeastZero = arith::SelectOp::create(ib, positive, length, zero);
  Value largest = LinalgBuilder::indexToF32(ib, ib.getLoc(), limit);
  Value clamped = arith::MinimumFOp::create(ib, atLeastZero, largest);
  // ceil as truncation plus one where it dropped a fraction (math.ceil would
  // need libdevice on the GPU).
  Value truncated = arith::FPToUIOp::create(ib, ib.getI64Type(), clamped);
  Value dropped = arith::CmpFOp::create(
      ib, arith::CmpFPredicate::OLT,
      arith::UIToFPOp::create(ib, ib.getF32Type(), truncated), clamped);
  Value asInt = arith::AddIOp::create(
      ib, truncated, arith::ExtUIOp::create(ib, ib.getI64Type(), dropped));
  // min again: f32 rounds a limit above 2^24 up.
  return b.minIdx(arith::IndexCastUIOp::create(ib, ib.getIndexType(), asInt),
                  limit);
}

TermOperands to_linalg::forBatch(LinalgBuilder &b, const TermOperands &term,
                                 Value bi) {
  TermOperands batch = term;
  if (term.keyLengths)
    batch.keys = lengthLimit(b, term.keyLengths, bi, term.keys);
  if (term.queryLengths)
    batch.queryLimit = lengthLimit(b, term.queryLengths, bi, term.queries);
  return batch;
}

Value to_linalg::keyHead(LinalgBuilder &b, const TermOperands &term, Value hi) {
  if (getConstantIntValue(term.groupSize) == std::optional<int64_t>(1))
    return hi;
  return arith::DivUIOp::create(b.b, hi, term.groupSize);
}

/// p = i + (M - N), the position of query row i (DESIGN §1.3).
static Value positionOf(OpBuilder &ob, Location loc, const TermOperands &term,
                        Value i) {
  if (getConstantIntValue(term.positionOffset) == std::optional<int64_t>(0))
    return i;
  return arith::AddIOp::create(ob, loc, i, term.positionOffset);
}

static Value maskOnlyAllows(OpBuilder &ob, Location loc,
                            const TermOperands &term, Value i, Value j);

Value to_linalg::maskAllows(OpBuilder &ob, Location loc,
                            const TermOperands &term, Value i, Value j) {
  Value allows = maskOnlyAllows(ob, loc, term, i, j);
  if (!term.queryLimit)
    return allows;
  // A row past its batch element's query length sees no key.
  Value kept = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult, i,
                                     term.queryLimit);
  return arith::AndIOp::create(ob, loc, kept, allows);
}

static Value maskOnlyAllows(OpBuilder &ob, Location loc,
                            const TermOperands &term, Value i, Value j) {
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(ob, loc, p, x, y).getResult();
  };
  auto blockOf = [&](Value x) {
    Value c = arith::ConstantIndexOp::create(ob, loc, term.block);
    return arith::DivUIOp::create(ob, loc, x, c).getResult();
  };
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v).getResult();
  };
  switch (term.mask) {
  case MaskKind::None:
    return arith::ConstantIntOp::create(ob, loc, 1, 1);
  case MaskKind::Causal:
    // j <= p (signed: p < 0 for rows above a shorter key sequence)
    return cmp(arith::CmpIPredicate::sle, j, positionOf(ob, loc, term, i));
  case MaskKind::Window: {
    // p - left <= j <= p + right
    Value p = positionOf(ob, loc, term, i);
    Value first = arith::SubIOp::create(ob, loc, p, constant(term.windowLeft));
    Value last = arith::AddIOp::create(ob, loc, p, constant(term.windowRight));
    return arith::AndIOp::create(ob, loc,
                                 cmp(arith::CmpIPredicate::sge, j, first),
                                 cmp(arith::CmpIPredicate::sle, j, last));
  }
  case MaskKind::Block:
    // i / c == j / c
    return cmp(arith::CmpIPredicate::eq, blockOf(i), blockOf(j));
  case MaskKind::BlockCausal:
    // i / c == j / c and j <= i
    return arith::AndIOp::create(
        ob, loc, cmp(arith::CmpIPredicate::eq, blockOf(i), blockOf(j)),
        cmp(arith::CmpIPredicate::ule, j, i));
  case MaskKind::PriorBlocks:
    // j / c < i / c
    return cmp(arith::CmpIPredicate::ult, blockOf(j), blockOf(i));
  }
  return {};
}

Value to_linalg::keyVisible(OpBuilder &ob, Location loc,
                            const TermOperands &term, Value i, Value j) {
  Value real =
      arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult, j, term.keys);
  return arith::AndIOp::create(ob, loc, real, maskAllows(ob, loc, term, i, j));
}

Value to_linalg::visibleKeys(OpBuilder &ob, Location loc,
                             const TermOperands &term, Value i, Value keys) {
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v).getResult();
  };
  const MaskKind kind = term.mask;
  const int64_t block = term.block;
  Value count;
  Value one = c(1);
  // max(0, min(end, keys) - max(start, 0)) for the keys [start, end) of a
  // row at position p, in signed arithmetic.
  auto between = [&](Value start, Value end) {
    Value first = arith::MaxSIOp::create(ob, loc, start, c(0));
    Value last = arith::MinSIOp::create(ob, loc, end, keys);
    return arith::MaxSIOp::create(
               ob, loc, arith::SubIOp::create(ob, loc, last, first), c(0))
        .getResult();
  };
  switch (kind) {
  case MaskKind::None:
    count = keys;
    break;
  case MaskKind::Causal:
    count = between(c(0), arith::AddIOp::create(
                              ob, loc, positionOf(ob, loc, term, i), one));
    break;
  case MaskKind::Window: {
    Value p = positionOf(ob, loc, term, i);
    count = between(arith::SubIOp::create(ob, loc, p, c(term.windowLeft)),
                    arith::AddIOp::create(ob, loc, p, c(term.windowRight + 1)));
    break;
  }
  default: {
    // The block masks see keys in [start, end) with start = (i / c) c.
    Value blk = c(block);
    Value start = arith::MulIOp::create(
        ob, loc, arith::DivUIOp::create(ob, loc, i, blk), blk);
    Value end;
    if (kind == MaskKind::Block)
      end = arith::MinUIOp::create(
          ob, loc, arith::AddIOp::create(ob, loc, start, blk), keys);
    else if (kind == MaskKind::BlockCausal)
      end = arith::MinUIOp::create(
          ob, loc, arith::AddIOp::create(ob, loc, i, one), keys);
    if (kind == MaskKind::PriorBlocks) {
      count = arith::MinUIOp::create(ob, loc, start, keys);
    } else {
      // max(0, end - start) without going below zero in unsigned index.
      Value clampedStart = arith::MinUIOp::create(ob, loc, start, end);
      count = arith::SubIOp::create(ob, loc, end, clampedStart);
    }
  }
  }
  Value i64 = arith::IndexCastOp::create(ob, loc, ob.getI64Type(), count);
  return arith::SIToFPOp::create(ob, loc, ob.getF32Type(), i64);
}

Value to_linalg::visibleProduct(LinalgBuilder &b, Value weights,
                                Value values, Value acc, Value fullyVisible,
                                TileVisibility visible, bool testFinite) {
  ImplicitLocOpBuilder &ib = b.b;
  // Whether the plain product is exact: the tile is wholly visible, or
  // every V is finite: sum(V * 0) is 0 then, NaN otherwise (inf * 0 and NaN
  // * 0 are NaN), one FMA per element where a NaN-propagating maximum of
  // |V| costs several instructions per vector on x86.
  Value exact = fullyVisible;
  if (testFinite)
    exact = scf::IfOp::create(
      ib, fullyVisible,
      [&](OpBuilder &ob, Location loc) {
        scf::YieldOp::create(ob, loc, fullyVisible);
      },
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder nb(loc, ob);
        LinalgBuilder inner(nb);
        // Into a 1-element tensor rather than a 0-d one: the GPU mapping
        // lowers every op to loops.
        Value zero = inner.index(0);
        Value poisoned = inner.generic(
            inner.filled({inner.index(1)}, 0.0), {values},
            {inner.map(3, {1, 2}), inner.map(3, {0})}, {kPar, kRed, kRed},
            [](OpBuilder &gb, Location gl, ValueRange args) {
              Value zeroF =
                  arith::ConstantOp::create(gb, gl, gb.getF32FloatAttr(0.0));
              Value nanIfNotFinite =
                  arith::MulFOp::create(gb, gl, args[0], zeroF);
              // reassoc lets the sum vectorize; the product keeps no
              // fast-math flag, so that V * 0 is not folded to 0.
              return arith::AddFOp::create(gb, gl, args[1], nanIfNotFinite,
                                           arith::FastMathFlags::reassoc)
                  .getResult();
            });
        Value value = tensor::ExtractOp::create(nb, poisoned, ValueRange{zero});
        Value finite = arith::CmpFOp::create(nb, arith::CmpFPredicate::OEQ,
                                             value, inner.f32(0.0));
        scf::YieldOp::create(nb, finite);
      }).getResult(0);
  auto product = scf::IfOp::create(
      ib, exact,
      [&](OpBuilder &ob, Location loc) {
        ImplicitLocOpBuilder nb(loc, ob);
        LinalgBuilder inner(nb);
        scf::YieldOp::create(nb, inner.matmulNN(weights, values, acc));
      },
      [&](OpBuilder &ob, Location loc) {
        // Rare (non-finite values): a plain loop nest, one select per term.
        ImplicitLocOpBuilder nb(loc, ob);
        LinalgBuilder inner(nb);
        Value masked = inner.generic(
            acc, {weights, values},
            {inner.map(3, {0, 2}), inner.map(3, {2, 1}), inner.map(3, {0, 1})},
            {kPar, kPar, kRed},
            [&](OpBuilder &gb, Location gl, ValueRange args) -> Value {
              Value r = linalg::IndexOp::create(gb, gl, 0);
              Value c = linalg::IndexOp::create(gb, gl, 2);
              Value term = arith::MulFOp::create(gb, gl, args[0], args[1]);
              Value sum = arith::AddFOp::create(gb, gl, args[2], term);
              return arith::SelectOp::create(gb, gl, visible(gb, gl, r, c),
                                             sum, args[2]);
            });
        scf::YieldOp::create(nb, masked);
      });
  return product.getResult(0);
}

Value to_linalg::tileFullyVisible(LinalgBuilder &b, const TermOperands &term,
                                  Value row0, int64_t rows, Value col0,
                                  int64_t cols) {
  return tileFullyVisible(b, term, row0, b.add(row0, b.index(rows - 1)), col0,
                          cols);
}

Value to_linalg::tileFullyVisible(LinalgBuilder &b, const TermOperands &term,
                                  Value row0, Value lastRow, Value col0,
                                  int64_t cols) {
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b.b, p, x, y).getResult();
  };
  auto both = [&](Value x, Value y) {
    return arith::AndIOp::create(b.b, x, y).getResult();
  };
  Value lastCol = b.add(col0, b.index(cols - 1));
  // The positions of the first and last rows (causal, window).
  Value firstPos = positionOf(b.b, b.b.getLoc(), term, row0);
  Value lastPos = positionOf(b.b, b.b.getLoc(), term, lastRow);
  // j <= lastCol < keys, and every row kept
  Value real = cmp(arith::CmpIPredicate::ult, lastCol, term.keys);
  if (term.queryLimit)
    real = both(real, cmp(arith::CmpIPredicate::ult, lastRow, term.queryLimit));
  Value blk = b.index(std::max<int64_t>(term.block, 1));
  auto blockOf = [&](Value x) {
    return arith::DivUIOp::create(b.b, x, blk).getResult();
  };
  // Every j <= every p: the last key is at most the first row's position.
  auto causal = [&] {
    return cmp(arith::CmpIPredicate::sle, lastCol, firstPos);
  };
  // All rows and keys in one block.
  auto oneBlock = [&] {
    Value block = blockOf(row0);
    return both(both(cmp(arith::CmpIPredicate::eq, blockOf(lastRow), block),
                     cmp(arith::CmpIPredicate::eq, blockOf(col0), block)),
                cmp(arith::CmpIPredicate::eq, blockOf(lastCol), block));
  };
  switch (term.mask) {
  case MaskKind::None:
    return real;
  case MaskKind::Causal:
    return both(real, causal());
  case MaskKind::Window:
    // lastPos - left <= col0 and lastCol <= firstPos + right
    return both(real, both(cmp(arith::CmpIPredicate::sle,
                               b.sub(lastPos, b.index(term.windowLeft)), col0),
                           cmp(arith::CmpIPredicate::sle, lastCol,
                               b.add(firstPos, b.index(term.windowRight)))));
  case MaskKind::Block:
    return both(real, oneBlock());
  case MaskKind::BlockCausal:
    return both(real, both(oneBlock(), causal()));
  case MaskKind::PriorBlocks:
    // The last key's block is before the first row's.
    return both(
        real, cmp(arith::CmpIPredicate::ult, blockOf(lastCol), blockOf(row0)));
  }
  return {};
}

std::pair<Value, Value> to_linalg::visibleKeyTiles(LinalgBuilder &b,
                                                   const TermOperands &term,
                                                   int64_t queryTile,
                                                   int64_t keyTile, Value row0,
                                                   Value keyTiles) {
  // The tile's last real query row bounds what causal masks can see; block
  // masks see whole blocks, from the first row's block to the last row's.
  Value lastRow = b.sub(b.minIdx(b.add(row0, b.index(queryTile)), term.queries),
                        b.index(1));
  Value blk = b.index(std::max<int64_t>(term.block, 1));
  Value firstBlockStart = b.mul(arith::DivUIOp::create(b.b, row0, blk), blk);
  Value lastBlockStart = b.mul(arith::DivUIOp::create(b.b, lastRow, blk), blk);
  auto tileOf = [&](Value key) {
    return arith::DivUIOp::create(b.b, key, b.index(keyTile)).getResult();
  };
  Value lo = b.index(0), hi = keyTiles;
  // The key tiles that hold keys in [first, end), first >= 0 (signed ends
  // clamped at 0: rows whose window lies before key 0 see none).
  auto tilesUpTo = [&](Value end) {
    Value clamped = arith::MaxSIOp::create(b.b, end, b.index(0));
    return b.minIdx(keyTiles, b.ceilDiv(clamped, keyTile));
  };
  Value firstPos = positionOf(b.b, b.b.getLoc(), term, row0);
  Value lastPos = positionOf(b.b, b.b.getLoc(), term, lastRow);
  switch (term.mask) {
  case MaskKind::None:
    break;
  case MaskKind::Causal:
    hi = tilesUpTo(b.add(lastPos, b.index(1)));
    break;
  case MaskKind::Window: {
    Value first = arith::MaxSIOp::create(
        b.b, b.sub(firstPos, b.index(term.windowLeft)), b.index(0));
    lo = tileOf(first);
    hi = tilesUpTo(b.add(lastPos, b.index(term.windowRight + 1)));
    break;
  }
  case MaskKind::Block:
    lo = tileOf(firstBlockStart);
    hi = b.minIdx(keyTiles, b.ceilDiv(b.add(lastBlockStart, blk), keyTile));
    break;
  case MaskKind::BlockCausal:
    lo = tileOf(firstBlockStart);
    hi = b.minIdx(keyTiles, b.add(tileOf(lastRow), b.index(1)));
    break;
  case MaskKind::PriorBlocks:
    hi = b.minIdx(keyTiles, b.ceilDiv(lastBlockStart, keyTile));
    break;
  }
  // No tile past the batch element's keys, none for rows past its query
  // length.
  if (term.keyLengths)
    hi = b.minIdx(hi, b.ceilDiv(term.keys, keyTile));
  if (term.queryLimit)
    hi = arith::SelectOp::create(
        b.b,
        arith::CmpIOp::create(b.b, arith::CmpIPredicate::ult, row0,
                              term.queryLimit),
        hi, b.index(0));
  // An empty range (prior_blocks' first block) must not run backwards.
  return {b.minIdx(lo, hi), hi};
}
