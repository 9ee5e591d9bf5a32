//===- MapToGPU.cpp - bufferized attn loops onto gpu.launch ---------------===//
//
// convert-attn-to-linalg already has the shape a GPU wants: an scf.forall
// with one iteration per (batch, head, query tile) whose body works on small
// static tiles, and a few whole-tensor linalg ops around it (feature maps,
// padding, transposes). This pass keeps that split: a forall iteration is a
// thread block, its tiles live in shared memory and its linalg ops are
// spread over the block's threads; every other linalg op is a kernel of its
// own. Upstream's convert-parallel-loops-to-gpu cannot do this: it accepts
// one perfectly nested parallel loop per launch, with no side effects and no
// barriers between the nested loops.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"
#include "attn/Codegen/GPU/MmaProducts.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNMAPTOGPU
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

Value constantIndex(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(builder, loc, value);
}

/// The trip counts of a loop nest given as bounds and steps, and their
/// product; empty ranges count 0.
Value tripCounts(OpBuilder &builder, Location loc, ValueRange lowerBounds,
                 ValueRange upperBounds, ValueRange steps,
                 SmallVectorImpl<Value> &counts) {
  Value zero = constantIndex(builder, loc, 0);
  Value total = constantIndex(builder, loc, 1);
  for (auto [lower, upper, step] :
       llvm::zip_equal(lowerBounds, upperBounds, steps)) {
    Value span = arith::SubIOp::create(builder, loc, upper, lower);
    span = arith::MaxSIOp::create(builder, loc, span, zero);
    Value count = arith::CeilDivUIOp::create(builder, loc, span, step);
    counts.push_back(count);
    total = arith::MulIOp::create(builder, loc, total, count);
  }
  return total;
}

/// The induction variables of iteration \p linear of a loop nest, the last
/// dimension varying fastest (so that neighbouring threads touch
/// neighbouring elements of a row-major buffer).
SmallVector<Value> delinearize(OpBuilder &builder, Location loc, Value linear,
                               ValueRange lowerBounds, ValueRange steps,
                               ArrayRef<Value> counts) {
  SmallVector<Value> ivs(counts.size());
  Value rest = linear;
  for (int64_t dim = int64_t(counts.size()) - 1; dim >= 0; --dim) {
    Value index = rest;
    if (dim > 0) {
      index = arith::RemUIOp::create(builder, loc, rest, counts[dim]);
      rest = arith::DivUIOp::create(builder, loc, rest, counts[dim]);
    }
    Value offset = arith::MulIOp::create(builder, loc, index, steps[dim]);
    ivs[dim] = arith::AddIOp::create(builder, loc, lowerBounds[dim], offset);
  }
  return ivs;
}

/// Replaces the scf.parallel \p loop by `scf.for %i = first to total step
/// stride` over its linearised iterations.
void distributeParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                            Value first, Value stride) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> counts;
  Value total = tripCounts(rewriter, loc, loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), counts);
  auto forOp = scf::ForOp::create(rewriter, loc, first, total, stride);
  rewriter.setInsertionPointToStart(forOp.getBody());
  SmallVector<Value> ivs =
      delinearize(rewriter, loc, forOp.getInductionVar(), loop.getLowerBound(),
                  loop.getStep(), counts);
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, forOp.getBody()->getTerminator(), ivs);
  rewriter.eraseOp(loop);
}

/// Lowers \p op to loops: an scf.parallel over its parallel dimensions with
/// the reductions as scf.for inside. Returns the outermost loop.
FailureOr<Operation *> lowerToLoops(RewriterBase &rewriter,
                                    linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, op);
  if (failed(loops) || loops->empty())
    return attn::emitOpErrorInInput(op,
                                    "cannot be lowered to loops for the GPU");
  Operation *outer = loops->front();
  rewriter.eraseOp(op);
  return outer;
}

bool writesMemory(Operation *op) {
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op))
    return effects.hasEffect<MemoryEffects::Write>() ||
           effects.hasEffect<MemoryEffects::Free>();
  // Ops with regions and no interface (scf.for, scf.if) are judged by
  // their contents by the caller.
  return op->getNumRegions() == 0 && !isMemoryEffectFree(op);
}

bool containsParallelLoop(Operation *op) {
  bool found = false;
  op->walk([&](scf::ParallelOp) {
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

bool containsWrite(Operation *op) {
  bool found = false;
  op->walk([&](Operation *nested) {
    if (nested->getNumRegions() == 0 && writesMemory(nested)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

bool readsMemory(Operation *op) {
  bool found = false;
  op->walk([&](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (effects && effects.hasEffect<MemoryEffects::Read>()) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// True if the last of \p block's ops that touch memory only reads it.
bool endsWithReads(Block &block) {
  for (Operation &op : llvm::reverse(block.without_terminator())) {
    if (isa<scf::ParallelOp>(op) || containsWrite(&op))
      return false;
    if (readsMemory(&op))
      return true;
  }
  return false;
}

/// Spreads the work of \p block, which every thread of a thread block runs
/// alike, over the threads: each scf.parallel becomes a loop strided by the
/// block size and is followed by a barrier; control flow holding parallel
/// loops is entered (its conditions and bounds are uniform over the block);
/// any other writing op runs on thread 0 only, then a barrier. Ops that only
/// compute or read run redundantly on every thread; a barrier separates
/// such reads from a following write (\p pendingReads: reads since the last
/// barrier). Returns whether reads are pending at the end of the block, or
/// fails on a writing op whose results every thread would need.
FailureOr<bool> distributeOverThreads(RewriterBase &rewriter, Block &block,
                                      Value thread, Value blockSize,
                                      bool pendingReads) {
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  auto barrierBefore = [&](Operation *op) {
    if (!pendingReads)
      return;
    rewriter.setInsertionPoint(op);
    gpu::BarrierOp::create(rewriter, op->getLoc());
  };
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      // Each thread would reduce only its share (and the loop's results
      // would be used after it is erased).
      if (loop.getNumResults() != 0)
        return attn::emitOpErrorInInput(
            loop, "with reductions cannot be spread over the threads of a "
                  "block; attn-map-to-gpu distributes only scf.parallel "
                  "loops without results");
      barrierBefore(loop);
      rewriter.setInsertionPointAfter(loop);
      gpu::BarrierOp::create(rewriter, loc);
      distributeParallelLoop(rewriter, loop, thread, blockSize);
      pendingReads = false;
      continue;
    }
    if (op->getNumRegions() != 0 && containsParallelLoop(op)) {
      // The body of a loop also follows its own previous iteration's
      // trailing reads.
      bool loop = isa<LoopLikeOpInterface>(op);
      bool after = pendingReads;
      for (Region &region : op->getRegions())
        for (Block &nested : region) {
          FailureOr<bool> pending = distributeOverThreads(
              rewriter, nested, thread, blockSize,
              pendingReads || (loop && endsWithReads(nested)));
          if (failed(pending))
            return failure();
          after |= *pending;
        }
      pendingReads = after;
      continue;
    }
    if (!(op->getNumRegions() != 0 ? containsWrite(op) : writesMemory(op))) {
      pendingReads |= readsMemory(op);
      continue;
    }
    if (op->getNumResults() != 0)
      return attn::emitOpErrorInInput(
          op, "writes memory and yields values every thread "
              "would need; attn-map-to-gpu can only run it on "
              "one thread");
    barrierBefore(op);
    rewriter.setInsertionPoint(op);
    Value zero = constantIndex(rewriter, loc, 0);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        thread, zero);
    auto guard = scf::IfOp::create(rewriter, loc, first,
                                   /*withElseRegion=*/false);
    rewriter.moveOpBefore(op, guard.thenBlock()->getTerminator());
    rewriter.setInsertionPointAfter(guard);
    gpu::BarrierOp::create(rewriter, loc);
    pendingReads = false;
  }
  return pendingReads;
}

/// Creates `scf.if (total > 0) { gpu.launch ... }` before the current
/// insertion point and leaves the insertion point inside the launch.
gpu::LaunchOp createLaunch(RewriterBase &rewriter, Location loc, Value total,
                           Value gridSize, int64_t threads,
                           TypeRange workgroupTypes,
                           Value dynamicSharedMemory = nullptr) {
  Value zero = constantIndex(rewriter, loc, 0);
  Value nonEmpty = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ugt, total, zero);
  auto guard =
      scf::IfOp::create(rewriter, loc, nonEmpty, /*withElseRegion=*/false);
  rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  Value one = constantIndex(rewriter, loc, 1);
  Value blockSize = constantIndex(rewriter, loc, threads);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, gridSize, one, one, blockSize, one, one,
      dynamicSharedMemory, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), workgroupTypes);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPoint(terminator);
  return launch;
}

/// The value whose end of block a buffer lives to: the buffer itself, or,
/// where a view of it is yielded by an scf.if (the two orders behind a
/// run-time crossover), the scf.if's result. Freeing a view frees the
/// buffer it views. Fails where the buffer leaves by another terminator.
FailureOr<Value> bufferOwner(Value buffer) {
  SmallVector<Value> views{buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user)) {
        if (viewLike.getViewSource() == view)
          views.push_back(user->getResult(0));
        continue;
      }
      if (!user->hasTrait<OpTrait::IsTerminator>())
        continue;
      auto ifOp = dyn_cast<scf::IfOp>(user->getParentOp());
      if (!ifOp || !isa<scf::YieldOp>(user))
        return failure();
      // Freeing the scf.if's result is right only if every branch yields a
      // buffer allocated in it (not, say, a function argument).
      unsigned index = use.getOperandNumber();
      for (Region &branch : ifOp->getRegions()) {
        if (branch.empty())
          return failure();
        Value yielded = branch.front().getTerminator()->getOperand(index);
        while (auto viewLike = yielded.getDefiningOp<ViewLikeOpInterface>())
          yielded = viewLike.getViewSource();
        Operation *def = yielded.getDefiningOp();
        if (!def || !isa<memref::AllocOp, memref::AllocaOp, gpu::AllocOp>(def) ||
            !branch.isAncestor(def->getParentRegion()))
          return failure();
      }
      return bufferOwner(ifOp.getResult(index));
    }
  }
  return buffer;
}

/// The buffer \p value views.
Value viewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Bytes per element of a tile: integers and floats only (an index or
/// vector element has no size here, and getElementTypeBitWidth() of one
/// is undefined).
std::optional<int64_t> elementBytes(MemRefType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return std::nullopt;
  return llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
}

/// The bytes of a static \p type, or std::nullopt where the element has no
/// size or the product overflows int64.
std::optional<int64_t> staticBytes(MemRefType type) {
  std::optional<int64_t> bytes = elementBytes(type);
  if (!bytes || !type.hasStaticShape())
    return std::nullopt;
  int64_t total = *bytes;
  for (int64_t size : type.getShape())
    if (llvm::MulOverflow(total, size, total))
      return std::nullopt;
  return total;
}

/// Stages the tiles of device buffers that the body of \p forall only reads
/// (the query tile, and in the key loop the key and value tiles) in tiles
/// of their own, copied in by the block, so that their many reads hit
/// shared memory: `memref.subview` of a buffer from outside the forall,
/// static, used only as linalg inputs, of a buffer nothing in the body
/// writes. Tiles outside loops (read in every iteration) come first; the
/// staged bytes stay within \p budget.
void stageReadOnlyTiles(RewriterBase &rewriter, scf::ForallOp forall,
                        int64_t budget) {
  llvm::SmallDenseSet<Value> written;
  forall.getBody()->walk([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      for (Value init : linalgOp.getDpsInits())
        written.insert(viewRoot(init));
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      written.insert(viewRoot(store.getMemref()));
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      written.insert(viewRoot(copy.getTarget()));
    }
  });
  SmallVector<memref::SubViewOp> invariant, inLoops;
  forall.getBody()->walk([&](memref::SubViewOp subview) {
    MemRefType type = subview.getType();
    Value root = viewRoot(subview.getSource());
    if (!type.hasStaticShape() || type.getRank() == 0 ||
        subview.getResult().use_empty() ||
        forall.getRegion().isAncestor(root.getParentRegion()) ||
        written.contains(root))
      return;
    for (OpOperand &use : subview.getResult().getUses()) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!linalgOp || !linalgOp.isDpsInput(&use))
        return;
    }
    bool inLoop = subview->getParentOfType<LoopLikeOpInterface>() !=
                  forall.getOperation();
    (inLoop ? inLoops : invariant).push_back(subview);
  });
  for (memref::SubViewOp subview : llvm::concat<memref::SubViewOp>(
           invariant, inLoops)) {
    std::optional<int64_t> bytes = staticBytes(subview.getType());
    if (!bytes || *bytes > budget)
      continue;
    budget -= *bytes;
    MemRefType type = subview.getType();
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : subview.getResult().getUses())
      uses.push_back(&use);
    Location loc = subview.getLoc();
    rewriter.setInsertionPointAfter(subview);
    Value tile = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
    linalg::CopyOp::create(rewriter, loc, subview.getResult(), tile);
    for (OpOperand *use : uses)
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(tile); });
  }
}

/// Static shared memory a block may always use; more must be dynamic.
constexpr int64_t kStaticSharedMemory = 48 * 1024;

struct AttnMapToGPU : public attn::impl::AttnMapToGPUBase<AttnMapToGPU> {
  using AttnMapToGPUBase::AttnMapToGPUBase;

  /// Whether the blocks' contractions go to the tensor cores.
  bool tensorCoreProducts = false;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    if (threads <= 0 || threads > 1024) {
      func.emitError("attn-map-to-gpu: threads must be in [1, 1024], got ")
          << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    if (sharedMemoryLimit < 0) {
      func.emitError("attn-map-to-gpu: shared-memory-limit must not be "
                     "negative, got ")
          << static_cast<int64_t>(sharedMemoryLimit);
      return signalPassFailure();
    }

    if (failed(checkStructure(func)))
      return signalPassFailure();

    // bf16 / f16 inputs are held to their types' tolerance: the products
    // may round their f32 operands to tf32.
    bool narrowInputs = llvm::any_of(func.getArgumentTypes(), [](Type type) {
      auto memref = dyn_cast<MemRefType>(type);
      return memref && (memref.getElementType().isBF16() ||
                        memref.getElementType().isF16());
    });
    tensorCoreProducts =
        threads % 32 == 0 &&
        (precision == attn::GpuPrecision::TF32 || narrowInputs);

    // Copies become linalg so that they are distributed like the rest.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }

    sinkHostScalarReads(rewriter, func);
    wrapSequentialLoopsInBlocks(rewriter, func);

    SmallVector<scf::ForallOp> foralls;
    func.walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      foralls.push_back(forall);
      return WalkResult::skip();
    });
    for (scf::ForallOp forall : foralls)
      if (failed(mapForallToBlocks(rewriter, forall)))
        return signalPassFailure();

    SmallVector<linalg::LinalgOp> hostOps;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        hostOps.push_back(linalgOp);
      return WalkResult::advance();
    });
    for (linalg::LinalgOp op : hostOps)
      if (failed(mapToGrid(rewriter, op)))
        return signalPassFailure();

    if (failed(moveAllocationsToDevice(rewriter, func)))
      return signalPassFailure();
  }

  /// Scalars read from memory at the function's top level, and the pure
  /// arithmetic on them (a per-head decay's log when B * H = 1 and N fits
  /// one chunk, so that no loop is left around them), are computed where
  /// they are used instead: each use inside a loop or linalg body gets its
  /// own copy, which runs on the device with that body. Left alone when a
  /// top-level op other than that arithmetic uses them.
  void sinkHostScalarReads(RewriterBase &rewriter, func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return;
    llvm::SetVector<Operation *> slice;
    for (Operation &op : func.getBody().front()) {
      bool derived = isPure(&op) && op.getNumRegions() == 0 &&
                     !op.hasTrait<OpTrait::IsTerminator>() &&
                     llvm::any_of(op.getOperands(), [&](Value operand) {
                       return slice.contains(operand.getDefiningOp());
                     });
      if (isa<memref::LoadOp>(op) || derived)
        slice.insert(&op);
    }
    if (slice.empty())
      return;
    SmallVector<OpOperand *> nestedUses;
    for (Operation *op : slice)
      for (OpOperand &use : op->getUses()) {
        Operation *user = use.getOwner();
        if (slice.contains(user))
          continue;
        if (user->getParentOp() == func)
          return;
        nestedUses.push_back(&use);
      }
    for (OpOperand *use : nestedUses) {
      // The part of the slice this use needs, in program order.
      SetVector<Operation *> needed;
      SmallVector<Operation *> stack = {use->get().getDefiningOp()};
      while (!stack.empty()) {
        Operation *op = stack.pop_back_val();
        if (!needed.insert(op))
          continue;
        for (Value operand : op->getOperands())
          if (slice.contains(operand.getDefiningOp()))
            stack.push_back(operand.getDefiningOp());
      }
      rewriter.setInsertionPoint(use->getOwner());
      IRMapping copies;
      for (Operation *op : slice)
        if (needed.contains(op))
          rewriter.clone(*op, copies);
      Value copy = copies.lookup(use->get());
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy); });
    }
    for (Operation *op : llvm::reverse(slice))
      rewriter.eraseOp(op);
  }

  /// A loop (or branch) of the function's top level with scalar loads or
  /// stores is host code around the kernels the rest of this pass makes,
  /// and would read device memory from the host. It is the body of the
  /// (batch, head) forall that the canonicalizer removed because it had one
  /// iteration (B * H = 1), so it becomes one again: a block of its own.
  /// Loops of linalg ops only keep a kernel per op; ops with results, and
  /// ones that hold foralls or kernels, stay as they are.
  void wrapSequentialLoopsInBlocks(RewriterBase &rewriter, func::FuncOp func) {
    SmallVector<Operation *> sequential;
    for (Block &block : func.getBody())
      for (Operation &op : block) {
        if (op.getNumRegions() == 0 || op.getNumResults() != 0 ||
            isa<linalg::LinalgOp, scf::ForallOp, gpu::LaunchOp>(op))
          continue;
        bool readsOnHost = false, holdsParallelism = false;
        op.walk<WalkOrder::PreOrder>([&](Operation *nested) {
          if (isa<scf::ForallOp, gpu::LaunchOp>(nested))
            holdsParallelism = true;
          if (isa<memref::LoadOp, memref::StoreOp>(nested))
            readsOnHost = true;
          // (Each linalg op becomes a kernel of its own.)
          return isa<linalg::LinalgOp>(nested) ? WalkResult::skip()
                                               : WalkResult::advance();
        });
        if (readsOnHost && !holdsParallelism)
          sequential.push_back(&op);
      }
    for (Operation *op : sequential) {
      rewriter.setInsertionPoint(op);
      auto block = scf::ForallOp::create(
          rewriter, op->getLoc(),
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)}, ValueRange(),
          std::nullopt);
      rewriter.moveOpBefore(op, block.getBody()->getTerminator());
    }
  }

  /// Fails on the linalg ops, copies and foralls this pass cannot place:
  /// one in the body of a linalg op (an attn.term written inside a
  /// linalg.generic is lowered there; a call there bufferizes to copies)
  /// would be lowered to loops, and freed, with its parent's body, and one
  /// inside a gpu.launch of the input would become a launch nested in a
  /// kernel.
  LogicalResult checkStructure(func::FuncOp func) {
    WalkResult result = func.walk([&](Operation *op) {
      // (memref.copy becomes a linalg.copy below.)
      if (!isa<linalg::LinalgOp, scf::ForallOp, memref::CopyOp>(op))
        return WalkResult::advance();
      for (Operation *parent = op->getParentOp(); parent != func;
           parent = parent->getParentOp()) {
        if (!isa<linalg::LinalgOp, gpu::LaunchOp>(parent))
          continue;
        attn::emitOpErrorInInput(op, "is inside the ")
            << (isa<gpu::LaunchOp>(parent) ? "" : "body of the ") << "'"
            << parent->getName()
            << "' op; attn-map-to-gpu maps linalg ops and scf.forall loops "
               "only outside linalg bodies and kernels";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// One block per iteration of \p forall, its tiles in shared memory.
  LogicalResult mapForallToBlocks(RewriterBase &rewriter,
                                  scf::ForallOp forall) {
    Location loc = forall.getLoc();
    if (forall.getNumResults() != 0)
      return attn::emitOpErrorInInput(
          forall, "with results cannot be mapped to the GPU (bufferize first)");

    if (stageInputs) {
      int64_t allocatedBytes = 0;
      forall.getBody()->walk([&](Operation *op) {
        if (!isa<memref::AllocOp, memref::AllocaOp>(op))
          return;
        auto type = cast<MemRefType>(op->getResult(0).getType());
        if (std::optional<int64_t> bytes = staticBytes(type))
          if (llvm::AddOverflow(allocatedBytes, *bytes, allocatedBytes))
            allocatedBytes = std::numeric_limits<int64_t>::max();
      });
      stageReadOnlyTiles(rewriter, forall, sharedMemoryLimit - allocatedBytes);
    }

    // Tiles go to shared memory, smallest first, while they fit; the rest
    // (and tiles whose size is only known at run time) to a scratch buffer
    // in device memory with one slice per block.
    SmallVector<Operation *> tiles;
    WalkResult walk = forall.getBody()->walk([&](Operation *op) {
      if (!isa<memref::AllocOp, memref::AllocaOp>(op))
        return WalkResult::advance();
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!elementBytes(type)) {
        attn::emitOpErrorInInput(op, "allocates a tile of ")
            << type.getElementType()
            << " elements; attn-map-to-gpu needs tiles of integers or "
               "floats";
        return WalkResult::interrupt();
      }
      if (type.hasStaticShape() && !staticBytes(type)) {
        attn::emitOpErrorInInput(op, "allocates a tile of more bytes than "
                                     "fit in a 64-bit size");
        return WalkResult::interrupt();
      }
      if (!type.getLayout().isIdentity()) {
        attn::emitOpErrorInInput(
            op, "allocates a tile with a layout; attn-map-to-gpu "
                "needs identity-layout tiles");
        return WalkResult::interrupt();
      }
      for (Value size : op->getOperands())
        if (forall.getRegion().isAncestor(size.getParentRegion())) {
          attn::emitOpErrorInInput(
              op, "allocates a tile whose size is computed inside "
                  "the thread block; it cannot be reserved before "
                  "the launch");
          return WalkResult::interrupt();
        }
      tiles.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // Every static tile has a size now.
    auto tileBytes = [](Operation *tile) {
      return *staticBytes(cast<MemRefType>(tile->getResult(0).getType()));
    };
    SmallVector<Operation *> sharedTiles, scratchTiles;
    SmallVector<Operation *> bySize;
    for (Operation *tile : tiles) {
      if (cast<MemRefType>(tile->getResult(0).getType()).hasStaticShape())
        bySize.push_back(tile);
      else
        scratchTiles.push_back(tile);
    }
    llvm::stable_sort(bySize, [&](Operation *a, Operation *b) {
      return tileBytes(a) < tileBytes(b);
    });
    int64_t sharedBytes = 0;
    for (Operation *tile : bySize) {
      if (tileBytes(tile) <= sharedMemoryLimit - sharedBytes) {
        sharedBytes += tileBytes(tile);
        sharedTiles.push_back(tile);
      } else {
        scratchTiles.push_back(tile);
      }
    }

    rewriter.setInsertionPoint(forall);
    SmallVector<Value> lowerBounds = getValueOrCreateConstantIndexOp(
        rewriter, loc, forall.getMixedLowerBound());
    SmallVector<Value> upperBounds = getValueOrCreateConstantIndexOp(
        rewriter, loc, forall.getMixedUpperBound());
    SmallVector<Value> steps =
        getValueOrCreateConstantIndexOp(rewriter, loc, forall.getMixedStep());
    SmallVector<Value> counts;
    Value total =
        tripCounts(rewriter, loc, lowerBounds, upperBounds, steps, counts);

    // Each scratch tile's byte offset in a block's slice, 256-aligned.
    SmallVector<Value> scratchOffsets;
    Value sliceBytes = constantIndex(rewriter, loc, 0);
    for (Operation *tile : scratchTiles) {
      auto type = cast<MemRefType>(tile->getResult(0).getType());
      scratchOffsets.push_back(sliceBytes);
      Value bytes = constantIndex(rewriter, loc, *elementBytes(type));
      unsigned dynamicIndex = 0;
      for (int64_t size : type.getShape()) {
        Value extent = ShapedType::isDynamic(size)
                           ? tile->getOperand(dynamicIndex++)
                           : constantIndex(rewriter, loc, size);
        bytes = arith::MulIOp::create(rewriter, loc, bytes, extent);
      }
      Value align = constantIndex(rewriter, loc, 256);
      bytes = arith::CeilDivUIOp::create(rewriter, loc, bytes, align);
      bytes = arith::MulIOp::create(rewriter, loc, bytes, align);
      sliceBytes = arith::AddIOp::create(rewriter, loc, sliceBytes, bytes);
    }

    // Up to the 48 KiB every block may have, shared tiles are workgroup
    // attributions (static shared memory); beyond it, views of the block's
    // dynamic shared memory, which the runtime opts in to at launch.
    auto workgroup = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                                gpu::AddressSpace::Workgroup);
    auto workgroupType = [&](Operation *tile) {
      auto type = cast<MemRefType>(tile->getResult(0).getType());
      return MemRefType::get(type.getShape(), type.getElementType(),
                             type.getLayout(), workgroup);
    };
    bool dynamicShared = sharedBytes > kStaticSharedMemory;
    SmallVector<Type> workgroupTypes;
    SmallVector<int64_t> sharedOffsets;
    int64_t dynamicBytes = 0;
    for (Operation *tile : sharedTiles) {
      if (!dynamicShared) {
        workgroupTypes.push_back(workgroupType(tile));
        continue;
      }
      sharedOffsets.push_back(dynamicBytes);
      dynamicBytes += llvm::alignTo(tileBytes(tile), 128);
    }
    Value dynamicSize;
    if (dynamicShared)
      dynamicSize = arith::ConstantIntOp::create(rewriter, loc, dynamicBytes,
                                                 /*width=*/32);
    gpu::LaunchOp launch = createLaunch(rewriter, loc, total, total, threads,
                                        workgroupTypes, dynamicSize);
    SmallVector<Value> sharedViews;
    if (dynamicShared) {
      auto bytesType =
          MemRefType::get({ShapedType::kDynamic}, rewriter.getIntegerType(8),
                          MemRefLayoutAttrInterface(), workgroup);
      Value memory = gpu::DynamicSharedMemoryOp::create(rewriter, loc, bytesType);
      for (auto [tile, offset] : llvm::zip_equal(sharedTiles, sharedOffsets))
        sharedViews.push_back(memref::ViewOp::create(
            rewriter, loc, workgroupType(tile), memory,
            constantIndex(rewriter, loc, offset), ValueRange()));
    } else {
      llvm::append_range(sharedViews, launch.getWorkgroupAttributions());
    }
    Value scratch;
    if (!scratchTiles.empty()) {
      rewriter.setInsertionPoint(launch);
      Value scratchBytes =
          arith::MulIOp::create(rewriter, loc, total, sliceBytes);
      auto bytesType = MemRefType::get({ShapedType::kDynamic},
                                       rewriter.getIntegerType(8));
      auto alloc = gpu::AllocOp::create(
          rewriter, loc, bytesType, /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), ValueRange{scratchBytes},
          /*symbolOperands=*/ValueRange(), /*hostShared=*/false);
      scratch = alloc.getMemref();
      rewriter.setInsertionPointAfter(launch);
      gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange(), scratch);
      rewriter.setInsertionPoint(launch.getBody().front().getTerminator());
    }
    SmallVector<Value> ivs =
        delinearize(rewriter, loc, launch.getBlockIds().x, lowerBounds, steps,
                    counts);
    Value slice;
    if (scratch)
      slice = arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                                    sliceBytes);
    Block *body = forall.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, launch.getBody().front().getTerminator(),
                               ivs);
    rewriter.eraseOp(forall);

    // Shared tiles keep their type through a cast to the generic address
    // space, so that their users need no change; scratch tiles are views.
    for (auto [tile, attribution] : llvm::zip_equal(sharedTiles, sharedViews)) {
      rewriter.setInsertionPoint(tile);
      Value generic = memref::MemorySpaceCastOp::create(
          rewriter, tile->getLoc(), tile->getResult(0).getType(), attribution);
      rewriter.replaceOp(tile, generic);
    }
    for (auto [tile, offset] : llvm::zip_equal(scratchTiles, scratchOffsets)) {
      rewriter.setInsertionPoint(tile);
      Value shift =
          arith::AddIOp::create(rewriter, tile->getLoc(), slice, offset);
      Value view = memref::ViewOp::create(
          rewriter, tile->getLoc(), tile->getResult(0).getType(), scratch,
          shift, tile->getOperands());
      rewriter.replaceOp(tile, view);
    }
    SmallVector<memref::DeallocOp> deallocs;
    launch.walk([&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs)
      rewriter.eraseOp(dealloc);

    Value blockSize = launch.getBlockSize().x;
    SmallVector<linalg::LinalgOp> ops;
    launch.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (tensorCoreProducts && attn::isMmaContraction(op)) {
        attn::lowerContractionToMma(rewriter, op, blockSize);
        continue;
      }
      if (failed(lowerToLoops(rewriter, op)))
        return failure();
    }
    return success(succeeded(distributeOverThreads(
        rewriter, launch.getBody().front(), launch.getThreadIds().x, blockSize,
        /*pendingReads=*/false)));
  }

  /// A kernel of its own for a linalg op outside any forall: a grid-strided
  /// loop over its parallel iterations.
  LogicalResult mapToGrid(RewriterBase &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    FailureOr<Operation *> outer = lowerToLoops(rewriter, op);
    if (failed(outer))
      return failure();
    rewriter.setInsertionPoint(*outer);
    auto loop = dyn_cast<scf::ParallelOp>(*outer);
    if (!loop) {
      // Reductions only: one thread does it all.
      Value one = constantIndex(rewriter, loc, 1);
      gpu::LaunchOp launch = createLaunch(rewriter, loc, one, one, 1, {});
      rewriter.moveOpBefore(*outer, launch.getBody().front().getTerminator());
      return success();
    }
    SmallVector<Value> counts;
    Value total = tripCounts(rewriter, loc, loop.getLowerBound(),
                             loop.getUpperBound(), loop.getStep(), counts);
    Value blockSize = constantIndex(rewriter, loc, threads);
    Value blocks = arith::CeilDivUIOp::create(rewriter, loc, total, blockSize);
    // A grid-strided loop covers any remainder; 2^20 blocks fill any GPU.
    Value maxBlocks = constantIndex(rewriter, loc, int64_t(1) << 20);
    blocks = arith::MinUIOp::create(rewriter, loc, blocks, maxBlocks);
    gpu::LaunchOp launch =
        createLaunch(rewriter, loc, total, blocks, threads, {});
    rewriter.moveOpBefore(loop, launch.getBody().front().getTerminator());
    rewriter.setInsertionPoint(loop);
    Value base = arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                                       launch.getBlockSize().x);
    Value first =
        arith::AddIOp::create(rewriter, loc, base, launch.getThreadIds().x);
    Value stride = arith::MulIOp::create(rewriter, loc, launch.getGridSize().x,
                                         launch.getBlockSize().x);
    distributeParallelLoop(rewriter, loop, first, stride);
    return success();
  }

  /// Host allocations become device allocations, freed at the end of their
  /// block; any other host access to memory is an error.
  LogicalResult moveAllocationsToDevice(RewriterBase &rewriter,
                                        func::FuncOp func) {
    SmallVector<Operation *> allocs;
    SmallVector<Operation *> frees;
    Operation *hostAccess = nullptr;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::AllocaOp>(op))
        allocs.push_back(op);
      else if (isa<memref::DeallocOp>(op))
        frees.push_back(op);
      else if (isa<memref::LoadOp, memref::StoreOp, memref::GetGlobalOp>(op) &&
               !hostAccess)
        hostAccess = op;
      return WalkResult::advance();
    });
    if (hostAccess)
      return attn::emitOpErrorInInput(
          hostAccess,
          "would access device memory from the host; attn-map-to-gpu maps "
          "only linalg ops and scf.forall loops onto the GPU");
    for (Operation *free : frees)
      rewriter.eraseOp(free);
    llvm::SmallDenseSet<Value> freed;
    for (Operation *alloc : allocs) {
      rewriter.setInsertionPoint(alloc);
      auto type = cast<MemRefType>(alloc->getResult(0).getType());
      ValueRange sizes = isa<memref::AllocOp>(alloc)
                             ? cast<memref::AllocOp>(alloc).getDynamicSizes()
                             : cast<memref::AllocaOp>(alloc).getDynamicSizes();
      auto deviceAlloc = gpu::AllocOp::create(
          rewriter, alloc->getLoc(), type, /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), sizes,
          /*symbolOperands=*/ValueRange(), /*hostShared=*/false);
      rewriter.replaceOp(alloc, deviceAlloc.getMemref());
      FailureOr<Value> owner = bufferOwner(deviceAlloc.getMemref());
      if (failed(owner))
        return attn::emitOpErrorInInput(
            deviceAlloc,
            "escapes the function, a loop, or an scf.if whose other branch "
            "yields a buffer it does not own; attn-map-to-gpu frees device "
            "buffers at the end of the block that owns them");
      if (!freed.insert(*owner).second)
        continue;
      rewriter.setInsertionPoint(owner->getParentBlock()->getTerminator());
      gpu::DeallocOp::create(rewriter, deviceAlloc.getLoc(), Type(),
                             ValueRange(), *owner);
    }
    return success();
  }
};

} // namespace
