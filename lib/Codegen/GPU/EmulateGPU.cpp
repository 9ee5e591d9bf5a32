//===- EmulateGPU.cpp - run attn-map-to-gpu's launches on the host --------===//
//
// A test device for the GPU mapping: the kernels attn-map-to-gpu builds
// synchronise only at barriers between loops strided by the thread id, so
// running, for each such loop, every thread's share one after the other
// computes exactly what the GPU does. The lowering is then checked against
// the reference evaluator on any machine.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEMULATEGPU
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

bool isConstantOne(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantIndexOp>();
  return constant && constant.value() == 1;
}

/// Moves \p op into a new loop over the threads `0 .. threads` and returns
/// the loop's induction variable.
Value wrapInThreadLoop(RewriterBase &rewriter, Operation *op, Value threads) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ForOp::create(rewriter, loc, zero, threads, one);
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
  return loop.getInductionVar();
}

struct AttnEmulateGPU : public attn::impl::AttnEmulateGPUBase<AttnEmulateGPU> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(rewriter, launch)))
        return signalPassFailure();

    SmallVector<Operation *> memoryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp>(op))
        memoryOps.push_back(op);
    });
    for (Operation *op : memoryOps) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        if (alloc.getAsyncToken())
          return (void)attn::emitOpErrorInInput(alloc,
                                                "async allocations are not "
                                                "emulated"),
                 signalPassFailure();
        rewriter.replaceOpWithNewOp<memref::AllocOp>(
            alloc, alloc.getMemref().getType(), alloc.getDynamicSizes());
      } else {
        auto dealloc = cast<gpu::DeallocOp>(op);
        rewriter.replaceOpWithNewOp<memref::DeallocOp>(dealloc,
                                                       dealloc.getMemref());
      }
    }
  }

  LogicalResult emulate(RewriterBase &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    if (launch.getAsyncToken() || !launch.getBody().hasOneBlock() ||
        launch.getNumPrivateAttributions() != 0)
      return attn::emitOpErrorInInput(
          launch, "is not a launch made by attn-map-to-gpu");
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    if (!isConstantOne(block.y) || !isConstantOne(block.z))
      return attn::emitOpErrorInInput(launch,
                                      "uses more than one thread dimension");
    Block &body = launch.getBody().front();

    rewriter.setInsertionPoint(launch);
    SmallVector<Value> buffers;
    for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(attribution.getType());
      auto hostType = MemRefType::get(type.getShape(), type.getElementType(),
                                      type.getLayout());
      Value buffer = memref::AllocOp::create(rewriter, loc, hostType);
      for (Operation *user : llvm::make_early_inc_range(attribution.getUsers())) {
        auto cast = dyn_cast<memref::MemorySpaceCastOp>(user);
        if (!cast || cast.getType() != hostType)
          return attn::emitOpErrorInInput(
              user, "uses workgroup memory other than "
                    "through a cast to the generic space");
        rewriter.replaceOp(cast, buffer);
      }
      buffers.push_back(buffer);
    }

    // Dynamic shared memory: a host buffer of the launch's size, viewed as
    // the kernel views it.
    SmallVector<gpu::DynamicSharedMemoryOp> dynamicMemories;
    body.walk([&](gpu::DynamicSharedMemoryOp op) {
      dynamicMemories.push_back(op);
    });
    for (gpu::DynamicSharedMemoryOp memory : dynamicMemories) {
      if (!launch.getDynamicSharedMemorySize())
        return attn::emitOpErrorInInput(memory,
                                        "in a launch without a dynamic shared "
                                        "memory size");
      rewriter.setInsertionPoint(launch);
      Value bytes = arith::IndexCastUIOp::create(
          rewriter, loc, rewriter.getIndexType(),
          launch.getDynamicSharedMemorySize());
      Value buffer = memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getIntegerType(8)),
          ValueRange{bytes});
      buffers.push_back(buffer);
      for (Operation *user :
           llvm::make_early_inc_range(memory.getResult().getUsers())) {
        auto view = dyn_cast<memref::ViewOp>(user);
        if (!view)
          return attn::emitOpErrorInInput(
              user, "uses dynamic shared memory other than "
                    "through memref.view");
        MemRefType type = view.getType();
        auto hostType = MemRefType::get(type.getShape(), type.getElementType(),
                                        type.getLayout());
        rewriter.setInsertionPoint(view);
        Value hostView = memref::ViewOp::create(
            rewriter, view.getLoc(), hostType, buffer, view.getByteShift(),
            view.getSizes());
        for (Operation *viewUser :
             llvm::make_early_inc_range(view.getResult().getUsers())) {
          auto cast = dyn_cast<memref::MemorySpaceCastOp>(viewUser);
          if (!cast || cast.getType() != hostType)
            return attn::emitOpErrorInInput(
                viewUser,
                "uses dynamic shared memory other than through a cast to "
                "the generic space");
          rewriter.replaceOp(cast, hostView);
        }
        rewriter.eraseOp(view);
      }
      rewriter.eraseOp(memory);
    }

    // Each thread's share of the work: the loops strided by the thread id
    // where there are barriers, else the whole body.
    Value thread = launch.getThreadIds().x;
    bool barriers = false;
    body.walk([&](gpu::BarrierOp) { barriers = true; });
    rewriter.setInsertionPoint(launch);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value wholeBodyThread;
    if (barriers) {
      for (OpOperand &use : llvm::make_early_inc_range(thread.getUses())) {
        Operation *user = use.getOwner();
        auto loop = dyn_cast<scf::ForOp>(user);
        if (loop && use.getOperandNumber() == 0) {
          Value iv = wrapInThreadLoop(rewriter, loop, block.x);
          loop.getLowerBoundMutable().assign(iv);
          continue;
        }
        auto compare = dyn_cast<arith::CmpIOp>(user);
        auto other = compare ? compare->getOperand(1 - use.getOperandNumber())
                                   .getDefiningOp<arith::ConstantIndexOp>()
                             : arith::ConstantIndexOp();
        if (compare && compare.getPredicate() == arith::CmpIPredicate::eq &&
            other && other.value() == 0) {
          // `thread == 0`: the work of thread 0, done once.
          use.set(zero);
          continue;
        }
        return attn::emitOpErrorInInput(user,
                                        "uses the thread id in a way "
                                        "attn-emulate-gpu cannot emulate");
      }
      SmallVector<Operation *> syncs;
      body.walk([&](gpu::BarrierOp barrier) { syncs.push_back(barrier); });
      for (Operation *barrier : syncs)
        rewriter.eraseOp(barrier);
    }

    rewriter.setInsertionPoint(launch);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<Value> blockIds;
    for (Value size : {grid.z, grid.y, grid.x}) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, size, one);
      blockIds.push_back(loop.getInductionVar());
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    if (!barriers) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, block.x, one);
      wholeBodyThread = loop.getInductionVar();
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    Operation *insertionPoint = &*rewriter.getInsertionPoint();

    SmallVector<Value> replacements = {
        blockIds[2], blockIds[1], blockIds[0],
        barriers ? zero : wholeBodyThread, zero, zero,
        grid.x, grid.y, grid.z, block.x, block.y, block.z};
    for (Value buffer : buffers)
      replacements.push_back(buffer);
    rewriter.eraseOp(body.getTerminator());
    rewriter.inlineBlockBefore(&body, insertionPoint, replacements);
    rewriter.setInsertionPointAfter(launch);
    for (Value buffer : buffers)
      memref::DeallocOp::create(rewriter, loc, buffer);
    rewriter.eraseOp(launch);
    return success();
  }
};

} // namespace
