//===- MmaProducts.cpp - tile products of thread blocks on tensor cores ---===//
//
// C(m, n) += Σ_k A(m, k) B(k, n) inside a thread block, as warps of
// mma.sync.m16n8k8 on tf32 operands (PTX ISA fragment layout, g = lane / 4,
// t = lane % 4): A registers (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4);
// B registers (k, n) = (t, g), (t + 4, g); C/D (g, 2t), (g, 2t + 1),
// (g + 8, 2t), (g + 8, 2t + 1). Elements are read with memref.load through
// the op's own indexing maps, so any layout of the operands (a transposed
// B, shared or global memory) works; the tile products of attn's kernel
// terms are small (tens of rows), so the loads are not staged further.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GPU/MmaProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

/// The position of the only reduction loop of \p op.
std::optional<unsigned> reductionLoop(linalg::LinalgOp op) {
  std::optional<unsigned> found;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    if (found)
      return std::nullopt;
    found = i;
  }
  return found;
}

/// Whether \p value is block argument \p index of \p block.
bool isArgument(Value value, Block &block, unsigned index) {
  auto argument = dyn_cast<BlockArgument>(value);
  return argument && argument.getOwner() == &block &&
         argument.getArgNumber() == index;
}

/// The parts of a contraction's body: `out + x * y`, or `select(mask,
/// out + x * y, out)` where the mask depends only on the loop indices (and
/// values from above).
struct ContractionBody {
  /// The i1 mask, or null.
  Value mask;
  /// The ops computing the mask, in order.
  SmallVector<Operation *> maskOps;
  /// The loops the mask reads (linalg.index).
  SmallVector<unsigned> maskLoops;
};

std::optional<ContractionBody> matchBody(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value result = yield.getValues().front();
  ContractionBody parts;
  auto select = result.getDefiningOp<arith::SelectOp>();
  if (select) {
    if (!isArgument(select.getFalseValue(), body, 2))
      return std::nullopt;
    parts.mask = select.getCondition();
    result = select.getTrueValue();
  }
  auto sum = result.getDefiningOp<arith::AddFOp>();
  if (!sum)
    return std::nullopt;
  Value product = sum.getRhs();
  if (!isArgument(sum.getLhs(), body, 2)) {
    if (!isArgument(sum.getRhs(), body, 2))
      return std::nullopt;
    product = sum.getLhs();
  }
  auto multiply = product.getDefiningOp<arith::MulFOp>();
  if (!multiply || !((isArgument(multiply.getLhs(), body, 0) &&
                      isArgument(multiply.getRhs(), body, 1)) ||
                     (isArgument(multiply.getLhs(), body, 1) &&
                      isArgument(multiply.getRhs(), body, 0))))
    return std::nullopt;

  // Every other op of the body computes the mask from loop indices: no
  // block argument, no memory, no region.
  llvm::SmallPtrSet<Operation *, 4> products = {multiply, sum,
                                                yield.getOperation()};
  if (select)
    products.insert(select);
  for (Operation &nested : body) {
    if (products.contains(&nested))
      continue;
    if (!parts.mask || nested.getNumRegions() != 0 || !isPure(&nested) ||
        llvm::any_of(nested.getOperands(), [&](Value operand) {
          return isa<BlockArgument>(operand) &&
                 cast<BlockArgument>(operand).getOwner() == &body;
        }))
      return std::nullopt;
    if (auto index = dyn_cast<linalg::IndexOp>(nested))
      parts.maskLoops.push_back(index.getDim());
    parts.maskOps.push_back(&nested);
  }
  return parts;
}

} // namespace

bool mlir::attn::isMmaContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 3)
    return false;
  std::optional<unsigned> k = reductionLoop(op);
  if (!k)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.getElementType().isF32() || type.getRank() != 2)
      return false;
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation() || map.getNumResults() != 2)
      return false;
  // C is (m, n); each input reads k and one of m, n, and not the same one.
  AffineMap out = maps[2];
  if (out.isFunctionOfDim(*k))
    return false;
  unsigned m = out.getDimPosition(0), n = out.getDimPosition(1);
  if (!maps[0].isFunctionOfDim(*k) || !maps[1].isFunctionOfDim(*k))
    return false;
  bool aFirst = maps[0].isFunctionOfDim(m) && maps[1].isFunctionOfDim(n);
  bool bFirst = maps[0].isFunctionOfDim(n) && maps[1].isFunctionOfDim(m);
  if (!aFirst && !bFirst)
    return false;

  // The mask may read m or n, and k, but not both m and n: it is applied to
  // the input that reads the same loops.
  std::optional<ContractionBody> body = matchBody(op);
  if (!body)
    return false;
  return !(llvm::is_contained(body->maskLoops, m) &&
           llvm::is_contained(body->maskLoops, n));
}

Operation *mlir::attn::lowerContractionToMma(RewriterBase &rewriter,
                                             linalg::LinalgOp op,
                                             Value blockSize) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const unsigned kLoop = *reductionLoop(op);
  const unsigned mLoop = maps[2].getDimPosition(0);
  const unsigned nLoop = maps[2].getDimPosition(1);
  const unsigned aOperand = maps[0].isFunctionOfDim(mLoop) ? 0 : 1;
  Value a = op.getDpsInputOperand(aOperand)->get();
  Value b = op.getDpsInputOperand(1 - aOperand)->get();
  Value c = op.getDpsInitOperand(0)->get();
  AffineMap aMap = maps[aOperand], bMap = maps[1 - aOperand], cMap = maps[2];

  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(rewriter, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulIOp::create(rewriter, loc, x, y);
  };
  auto lessThan = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, x,
                                 y);
  };
  auto both = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(rewriter, loc, x, y);
  };
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  Value sizes[3];
  for (unsigned loop = 0; loop < 3; ++loop)
    sizes[loop] =
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[loop].size);
  Value zeroIndex = index(0), oneIndex = index(1);
  Value zero = arith::ConstantFloatOp::create(
      rewriter, loc, rewriter.getF32Type(), APFloat(0.0f));

  auto parallel =
      scf::ParallelOp::create(rewriter, loc, ValueRange{zeroIndex},
                              ValueRange{blockSize}, ValueRange{oneIndex});
  rewriter.setInsertionPointToStart(parallel.getBody());
  Value thread = parallel.getInductionVars().front();
  Value warp = arith::DivUIOp::create(rewriter, loc, thread, index(32));
  Value lane = arith::RemUIOp::create(rewriter, loc, thread, index(32));
  Value g = arith::DivUIOp::create(rewriter, loc, lane, index(4));
  Value t = arith::RemUIOp::create(rewriter, loc, lane, index(4));
  Value warps = arith::DivUIOp::create(rewriter, loc, blockSize, index(32));
  Value rowTiles =
      arith::CeilDivUIOp::create(rewriter, loc, sizes[mLoop], index(16));
  Value columnTiles =
      arith::CeilDivUIOp::create(rewriter, loc, sizes[nLoop], index(8));
  Value kSteps =
      arith::CeilDivUIOp::create(rewriter, loc, sizes[kLoop], index(8));

  // The element of \p buffer (read through \p map) at loop indices \p at,
  // or 0 where \p inside is false.
  auto load = [&](Value buffer, AffineMap map, ArrayRef<Value> at,
                  Value inside) -> Value {
    SmallVector<Value> indices;
    for (unsigned result = 0; result < map.getNumResults(); ++result)
      indices.push_back(arith::SelectOp::create(
          rewriter, loc, inside, at[map.getDimPosition(result)], zeroIndex));
    Value value = memref::LoadOp::create(rewriter, loc, buffer, indices);
    return arith::SelectOp::create(rewriter, loc, inside, value, zero);
  };
  auto tf32 = [&](Value value) -> Value {
    return NVVM::ConvertFloatToTF32Op::create(
        rewriter, loc, rewriter.getI32Type(), value, NVVM::FPRoundingMode::RNA);
  };
  auto loopIndices = [&](Value m, Value n, Value k) {
    SmallVector<Value, 3> at(3);
    at[mLoop] = m;
    at[nLoop] = n;
    at[kLoop] = k;
    return at;
  };
  // A mask on the product applies to the input that reads its loops:
  // select(mask, out + a b, out) = out + (mask ? a : 0) b.
  ContractionBody body = *matchBody(op);
  const bool maskOnA = !llvm::is_contained(body.maskLoops, nLoop);
  auto maskAt = [&](ArrayRef<Value> at) -> Value {
    IRMapping mapping;
    for (Operation *maskOp : body.maskOps) {
      if (auto loopIndex = dyn_cast<linalg::IndexOp>(maskOp)) {
        mapping.map(loopIndex.getResult(), at[loopIndex.getDim()]);
        continue;
      }
      rewriter.clone(*maskOp, mapping);
    }
    // (A mask from above the op is its own value.)
    return mapping.lookupOrDefault(body.mask);
  };

  // Fragment f of C: rows 16 (f / columnTiles) .., columns 8 (f %
  // columnTiles) ..; the warps take them in turn (uniform per warp: every
  // lane reaches every mma.sync).
  Value fragments = mul(rowTiles, columnTiles);
  auto fragmentLoop = scf::ForOp::create(rewriter, loc, warp, fragments, warps);
  rewriter.setInsertionPointToStart(fragmentLoop.getBody());
  Value fragment = fragmentLoop.getInductionVar();
  Value firstRow = mul(
      arith::DivUIOp::create(rewriter, loc, fragment, columnTiles), index(16));
  Value firstColumn = mul(
      arith::RemUIOp::create(rewriter, loc, fragment, columnTiles), index(8));
  Value rows[2] = {add(firstRow, g), add(add(firstRow, g), index(8))};
  Value t2 = mul(t, index(2));
  Value columns[2] = {add(firstColumn, t2),
                      add(add(firstColumn, t2), oneIndex)};
  Value rowInside[2] = {lessThan(rows[0], sizes[mLoop]),
                        lessThan(rows[1], sizes[mLoop])};
  Value columnInside[2] = {lessThan(columns[0], sizes[nLoop]),
                           lessThan(columns[1], sizes[nLoop])};
  // C's registers: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1).
  SmallVector<Value> accumulators;
  SmallVector<Value> accumulatorInside;
  for (int i = 0; i < 4; ++i) {
    Value inside = both(rowInside[i / 2], columnInside[i % 2]);
    accumulatorInside.push_back(inside);
    accumulators.push_back(load(
        c, cMap, loopIndices(rows[i / 2], columns[i % 2], zeroIndex), inside));
  }

  auto steps = scf::ForOp::create(rewriter, loc, zeroIndex, kSteps, oneIndex,
                                  accumulators);
  {
    OpBuilder::InsertionGuard stepGuard(rewriter);
    rewriter.setInsertionPointToStart(steps.getBody());
    Value k0 = add(mul(steps.getInductionVar(), index(8)), t);
    Value ks[2] = {k0, add(k0, index(4))};
    Value kInside[2] = {lessThan(ks[0], sizes[kLoop]),
                        lessThan(ks[1], sizes[kLoop])};
    // A: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
    SmallVector<Value> aRegisters;
    for (int i = 0; i < 4; ++i) {
      Value row = rows[i % 2], k = ks[i / 2];
      SmallVector<Value, 3> at = loopIndices(row, zeroIndex, k);
      Value inside = both(rowInside[i % 2], kInside[i / 2]);
      if (body.mask && maskOnA)
        inside = both(inside, maskAt(at));
      aRegisters.push_back(tf32(load(a, aMap, at, inside)));
    }
    // B: (t, g), (t + 4, g) of this fragment's 8 columns.
    Value column = add(firstColumn, g);
    Value inside = lessThan(column, sizes[nLoop]);
    SmallVector<Value> bRegisters;
    for (int i = 0; i < 2; ++i) {
      SmallVector<Value, 3> at = loopIndices(zeroIndex, column, ks[i]);
      Value visible = both(inside, kInside[i]);
      if (body.mask && !maskOnA)
        visible = both(visible, maskAt(at));
      bRegisters.push_back(tf32(load(b, bMap, at, visible)));
    }
    Type f32Type = rewriter.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        rewriter.getContext(), {f32Type, f32Type, f32Type, f32Type});
    auto mma = NVVM::MmaOp::create(
        rewriter, loc, resultType, aRegisters, bRegisters,
        steps.getRegionIterArgs(), ArrayRef<int64_t>{16, 8, 8}, std::nullopt,
        std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::tf32,
                                      NVVM::MMATypes::tf32},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> updated;
    for (int64_t i = 0; i < 4; ++i)
      updated.push_back(LLVM::ExtractValueOp::create(rewriter, loc, mma,
                                                     ArrayRef<int64_t>{i}));
    scf::YieldOp::create(rewriter, loc, updated);
  }
  for (int i = 0; i < 4; ++i) {
    auto store = scf::IfOp::create(rewriter, loc, accumulatorInside[i]);
    OpBuilder::InsertionGuard storeGuard(rewriter);
    rewriter.setInsertionPointToStart(&store.getThenRegion().front());
    SmallVector<Value> at = loopIndices(rows[i / 2], columns[i % 2], zeroIndex);
    SmallVector<Value> indices;
    for (unsigned result = 0; result < cMap.getNumResults(); ++result)
      indices.push_back(at[cMap.getDimPosition(result)]);
    memref::StoreOp::create(rewriter, loc, steps.getResult(i), c, indices);
  }
  rewriter.eraseOp(op);
  return parallel;
}
