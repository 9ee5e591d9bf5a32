//===- PrefetchNextTiles.cpp - Prefetch the next iteration's input tile ---===//
//
// Linear attention streams K and V (and Q) from the caller's arrays once:
// each loop iteration reads a tile out of DRAM (a copy, or a feature map that
// reads it in place), then computes on it, so memory and cores take turns.
// Prefetching the next iteration's tile during this one's tile product lets
// the memory work while the cores compute. The output's tiles likewise: each
// line's first store waits for the line unless it was prefetched.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPREFETCHNEXTTILES
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
/// Bytes of a cache line: one prefetch each.
constexpr int64_t kCacheLineBytes = 64;

/// The most prefetches one iteration of the compute nest issues.
constexpr int64_t kMaxLinesPerIteration = 8;

/// The loop whose next iteration \p op's tile belongs to: the nearest
/// scf.for or scf.parallel around it, with the induction variable that
/// advances (a parallel loop's innermost one) and its step.
struct EnclosingLoop {
  Operation *loop = nullptr;
  Value inductionVar;
  Value step;
  /// A parallel loop's other induction variables: the same in the next
  /// iteration.
  SmallVector<Value> fixed;
};

EnclosingLoop enclosingLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent))
      return {loop, loop.getInductionVar(), loop.getStep(), {}};
    if (auto loop = dyn_cast<scf::ParallelOp>(parent)) {
      // A copy: a ValueRange of the returned vector would dangle.
      SmallVector<Value> ivs = loop.getInductionVars();
      return {loop, ivs.back(), loop.getStep().back(),
              SmallVector<Value>(ArrayRef<Value>(ivs).drop_back())};
    }
    if (isa<FunctionOpInterface>(parent))
      break;
  }
  return {};
}

/// How the uses of a view access its memory, as bits.
enum Access : unsigned { kRead = 1, kWrite = 2, kOther = 4 };

/// The accesses of \p view and of the subviews cut from it. Reads: a copy's
/// source, vector transfer reads and loads, linalg inputs. Writes: a copy's
/// target, transfer writes and stores, linalg inits. A tile only read is
/// prefetched for reading (one the loop also writes is not worth it); a
/// tile only written (an output tile) is prefetched for writing, since the
/// first store to each line waits for the line otherwise. With \p within,
/// only the uses inside that op count.
unsigned accessesOf(Value view, Operation *within = nullptr) {
  unsigned accesses = 0;
  for (OpOperand &use : view.getUses()) {
    Operation *user = use.getOwner();
    // A subview cut outside \p within may still be accessed inside it.
    if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
      accesses |= accessesOf(subview.getResult(), within);
      continue;
    }
    // A branch that picks the tile (the whole tile in place, or the padded
    // last one): what the scf.if's result is used for.
    if (isa<scf::YieldOp>(user)) {
      if (auto branch = dyn_cast<scf::IfOp>(user->getParentOp())) {
        accesses |=
            accessesOf(branch.getResult(use.getOperandNumber()), within);
        continue;
      }
    }
    if (within && !within->isAncestor(user))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(user))
      accesses |= copy.getSource() == view ? kRead : kWrite;
    else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      accesses |= linalgOp.isDpsInput(&use) ? kRead : kWrite;
    else if (isa<vector::TransferReadOp, vector::LoadOp, memref::LoadOp>(user))
      accesses |= kRead;
    // The view can only be these ops' destination: what they store is a
    // vector or an element.
    else if (isa<vector::TransferWriteOp, vector::StoreOp, memref::StoreOp>(
                 user))
      accesses |= kWrite;
    else
      accesses |= kOther;
  }
  return accesses;
}

/// The largest value \p size takes: a constant, or the constant bound of a
/// `min` (a tile that the end of the sequence cuts: min(N - row0, tile)).
std::optional<int64_t> constantUpperBound(OpFoldResult size) {
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return constant;
  Operation *def = cast<Value>(size).getDefiningOp();
  if (!isa_and_nonnull<arith::MinUIOp, arith::MinSIOp>(def))
    return std::nullopt;
  std::optional<int64_t> bound;
  for (Value operand : def->getOperands())
    if (std::optional<int64_t> operandBound = constantUpperBound(operand))
      bound = bound ? std::min(*bound, *operandBound) : *operandBound;
  return bound;
}

/// The loops of a tile product (the scf.for nest around a vector.contract)
/// inside one iteration of the tile loop: the prefetches are spread over
/// its iterations, one or a few lines each, because a burst of hundreds of
/// prefetches waits for memory as the copy would.
struct ComputeNest {
  /// Outermost first; constant bounds and steps.
  SmallVector<scf::ForOp> loops;
  scf::ForOp innermost;
  int64_t iterations = 0;

  /// The iteration's number in [0, iterations), row-major over the loops.
  Value linearIndex(OpBuilder &builder, Location loc) const {
    Value index = arith::ConstantIndexOp::create(builder, loc, 0);
    for (scf::ForOp loop : loops) {
      Value trips =
          arith::ConstantIndexOp::create(builder, loc, tripCount(loop));
      Value position = arith::DivUIOp::create(
          builder, loc,
          arith::SubIOp::create(builder, loc, loop.getInductionVar(),
                                loop.getLowerBound()),
          loop.getStep());
      index = arith::AddIOp::create(
          builder, loc, arith::MulIOp::create(builder, loc, index, trips),
          position);
    }
    return index;
  }

  /// Drops the inner loops that \p lines do not need: the prefetches go
  /// into the outermost loop whose iterations give each at most
  /// kMaxLinesPerIteration lines. (In a register tile's reduction loop the
  /// index arithmetic of one prefetch per step was 14% more instructions
  /// there, and most of the steps re-prefetched the last line.)
  void keepOuterLoopsFor(int64_t lines) {
    int64_t kept = 1;
    for (size_t level = 0; level < loops.size(); ++level) {
      kept *= tripCount(loops[level]);
      if (kept * kMaxLinesPerIteration >= lines || level + 1 == loops.size()) {
        loops.resize(level + 1);
        innermost = loops.back();
        iterations = kept;
        return;
      }
    }
  }

  /// The iterations of \p loop, whose bounds and step are constants.
  static int64_t tripCount(scf::ForOp loop) {
    int64_t lower = *getConstantIntValue(loop.getLowerBound());
    int64_t upper = *getConstantIntValue(loop.getUpperBound());
    int64_t step = *getConstantIntValue(loop.getStep());
    return llvm::divideCeil(upper - lower, step);
  }
};

/// The tile product with the most iterations in one iteration of
/// \p tileLoop that runs whenever \p tile is read, or none. (A product in
/// the branch of an scf.if that also reads the tile qualifies: the whole
/// tiles' branch of a loop whose last tile is padded.)
ComputeNest computeNest(Operation *tileLoop, Operation *tile) {
  ComputeNest best;
  tileLoop->walk([&](vector::ContractionOp contract) {
    ComputeNest nest;
    nest.iterations = 1;
    Operation *parent = contract->getParentOp();
    Region *region = contract->getParentRegion();
    for (; parent && parent != tileLoop;
         region = parent->getParentRegion(), parent = parent->getParentOp()) {
      if (isa<scf::IfOp>(parent) &&
          region->isAncestor(tile->getParentRegion()))
        continue;
      auto loop = dyn_cast<scf::ForOp>(parent);
      if (!loop)
        return; // Another branch or another kind of loop: not every time.
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
      std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (!lower || !upper || !step || *step <= 0 || *upper <= *lower)
        return;
      nest.iterations *= ComputeNest::tripCount(loop);
      nest.loops.insert(nest.loops.begin(), loop);
    }
    if (parent != tileLoop || nest.loops.empty())
      return;
    nest.innermost = nest.loops.back();
    if (nest.iterations > best.iterations)
      best = nest;
  });
  return best;
}

struct PrefetchNextTilesPass
    : public mlir::attn::impl::AttnPrefetchNextTilesBase<
          PrefetchNextTilesPass> {
  void runOnOperation() override {
    auto func = cast<FunctionOpInterface>(getOperation().getOperation());
    if (func.getFunctionBody().empty())
      return;
    Block &entry = func.getFunctionBody().front();
    // The tiles read from the caller's arrays: copied into a buffer, or
    // read in place by the op that consumes them (a feature map).
    // And the output tiles, written in place: prefetched for writing.
    // And the tiles of a workspace the function allocated (qk-first's K^T
    // panels, beyond L2 for a long sequence) that the loop only reads.
    SmallVector<std::pair<memref::SubViewOp, bool>> tiles;
    func->walk([&](memref::SubViewOp subview) {
      Value source = subview.getSource();
      auto argument = dyn_cast<BlockArgument>(source);
      if (argument && argument.getOwner() == &entry) {
        unsigned accesses = accessesOf(subview.getResult());
        if (accesses == kRead || accesses == kWrite)
          tiles.push_back({subview, /*forWrite=*/accesses == kWrite});
        return;
      }
      // A workspace of the sequence's length: a fixed-size one is a tile
      // that stays in cache.
      if (!source.getDefiningOp<memref::AllocOp>() ||
          cast<MemRefType>(source.getType()).hasStaticShape())
        return;
      EnclosingLoop loop = enclosingLoop(subview);
      if (loop.loop && !loop.loop->isAncestor(source.getDefiningOp()) &&
          accessesOf(source, loop.loop) == kRead)
        tiles.push_back({subview, /*forWrite=*/false});
    });
    for (auto [subview, forWrite] : tiles)
      prefetchNextTile(subview, forWrite);
  }

  void prefetchNextTile(memref::SubViewOp subview, bool forWrite) {
    auto sourceType = cast<MemRefType>(subview.getSource().getType());
    int64_t elementBytes = sourceType.getElementTypeBitWidth() / 8;
    if (elementBytes == 0 || !sourceType.getLayout().isIdentity() ||
        !llvm::all_of(subview.getStaticStrides(),
                      [](int64_t stride) { return stride == 1; }))
      return;
    // A size the end of the array cuts counts as its bound: the next tile is
    // prefetched only where it lies inside the array whole.
    SmallVector<int64_t> sizes;
    for (OpFoldResult size : subview.getMixedSizes()) {
      std::optional<int64_t> bound = constantUpperBound(size);
      if (!bound || *bound <= 0)
        return;
      sizes.push_back(*bound);
    }
    // The rows: the one outer dimension longer than 1, if any.
    int64_t rowDim = -1;
    for (int64_t dim = 0; dim + 1 < static_cast<int64_t>(sizes.size()); ++dim) {
      if (sizes[dim] == 1)
        continue;
      if (rowDim >= 0)
        return; // More than one: not a tile of rows.
      rowDim = dim;
    }
    EnclosingLoop loop = enclosingLoop(subview);
    if (!loop.loop)
      return;

    // The ops inside the loop that compute the offsets from the induction
    // variable: pure arithmetic only, from values of outside the loop.
    Region &body = loop.loop->getRegion(0);
    BackwardSliceOptions options;
    options.filter = [&](Operation *op) {
      return body.isAncestor(op->getParentRegion());
    };
    options.inclusive = true;
    SetVector<Operation *> slice;
    SmallVector<bool> advances;
    for (OpFoldResult offset : subview.getMixedOffsets()) {
      auto value = dyn_cast<Value>(offset);
      bool dependsOnLoop = false;
      if (value && body.isAncestor(value.getParentRegion()) &&
          !llvm::is_contained(loop.fixed, value)) {
        if (value == loop.inductionVar) {
          dependsOnLoop = true;
        } else {
          Operation *def = value.getDefiningOp();
          if (!def)
            return; // Another loop's induction variable or iter_arg.
          SetVector<Operation *> offsetSlice;
          if (failed(getBackwardSlice(def, &offsetSlice, options)))
            return;
          for (Operation *op : offsetSlice) {
            if (!isPure(op) || op->getNumRegions() != 0)
              return;
            for (Value operand : op->getOperands()) {
              if (operand == loop.inductionVar) {
                dependsOnLoop = true;
                continue;
              }
              // Any other value of the loop's body must come from the
              // slice itself.
              if (body.isAncestor(operand.getParentRegion()) &&
                  !llvm::is_contained(loop.fixed, operand) &&
                  !offsetSlice.contains(operand.getDefiningOp()))
                return;
            }
          }
          slice.insert(offsetSlice.begin(), offsetSlice.end());
        }
      }
      advances.push_back(dependsOnLoop);
    }
    if (!llvm::is_contained(advances, true))
      return;

    ComputeNest nest = computeNest(loop.loop, subview);
    if (!nest.innermost)
      return;
    // The tile's lines: rows of `lineElements`-element lines.
    int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
    int64_t linesPerRow = llvm::divideCeil(sizes.back(), lineElements);
    int64_t lines = linesPerRow * (rowDim >= 0 ? sizes[rowDim] : 1);
    nest.keepOuterLoopsFor(lines);

    // Everything below is computed inside the compute nest's innermost
    // loop, from its induction variables (LLVM hoists what does not
    // change there).
    OpBuilder builder = OpBuilder::atBlockBegin(nest.innermost.getBody());
    Location loc = subview.getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, value);
    };
    IRMapping next;
    next.map(loop.inductionVar,
             arith::AddIOp::create(builder, loc, loop.inductionVar, loop.step));
    for (Operation *op : topologicalSort(slice))
      builder.clone(*op, next);

    // The next tile lies inside the array along every dimension it moves.
    SmallVector<Value> nextOffsets;
    Value inside;
    for (auto [dim, offset] : llvm::enumerate(subview.getMixedOffsets())) {
      Value value = getValueOrCreateConstantIndexOp(builder, loc, offset);
      Value moved = next.lookupOrDefault(value);
      nextOffsets.push_back(moved);
      if (!advances[dim])
        continue;
      Value end =
          arith::AddIOp::create(builder, loc, moved, constant(sizes[dim]));
      Value extent = memref::DimOp::create(builder, loc, subview.getSource(),
                                           static_cast<int64_t>(dim));
      Value fits = arith::CmpIOp::create(
          builder, loc, arith::CmpIPredicate::ule, end, extent);
      inside =
          inside ? arith::AndIOp::create(builder, loc, inside, fits) : fits;
    }

    // The nest's iteration i prefetches lines [i * perIteration,
    // (i + 1) * perIteration), in order.
    int64_t perIteration = llvm::divideCeil(lines, nest.iterations);

    auto guard = scf::IfOp::create(builder, loc, inside, /*withElse=*/false);
    builder.setInsertionPointToStart(&guard.getThenRegion().front());
    Value first = arith::MulIOp::create(
        builder, loc, nest.linearIndex(builder, loc), constant(perIteration));
    for (int64_t j = 0; j < perIteration; ++j) {
      // Past the tile's last line, the last line again (cheaper than a
      // branch; it is in cache by then).
      Value line = arith::MinUIOp::create(
          builder, loc, arith::AddIOp::create(builder, loc, first, constant(j)),
          constant(lines - 1));
      SmallVector<Value> indices(nextOffsets);
      Value column = arith::MulIOp::create(
          builder, loc,
          arith::RemUIOp::create(builder, loc, line, constant(linesPerRow)),
          constant(lineElements));
      indices.back() =
          arith::AddIOp::create(builder, loc, nextOffsets.back(), column);
      if (rowDim >= 0)
        indices[rowDim] = arith::AddIOp::create(
            builder, loc, nextOffsets[rowDim],
            arith::DivUIOp::create(builder, loc, line, constant(linesPerRow)));
      // Into L2 (locality 2): the tiles in use keep L1.
      memref::PrefetchOp::create(builder, loc, subview.getSource(), indices,
                                 forWrite, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
  }
};
} // namespace
