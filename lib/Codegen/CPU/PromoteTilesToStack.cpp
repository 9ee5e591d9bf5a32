//===- PromoteTilesToStack.cpp - Per-iteration tiles on the stack ---------===//
//
// A tile allocated in a loop body and freed at its end costs a malloc and a
// free per iteration; on the stack, inside a memref.alloca_scope around the
// body, it costs nothing and is released with the iteration.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPROMOTETILESTOSTACK
#define GEN_PASS_DEF_ATTNLOWERALLOCASCOPES
#define GEN_PASS_DEF_ATTNHOISTALLOCASFROMLOOPS
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
/// The innermost scf.for or scf.forall around \p op.
Operation *enclosingLoop(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<scf::ForOp, scf::ForallOp>(parent))
      return parent;
    if (isa<FunctionOpInterface>(parent))
      return nullptr;
  }
  return nullptr;
}

/// Whether \p alloc's buffer stays inside one iteration of \p loop: every
/// use, through views, casts and the results of scf.if ops inside the
/// iteration, reads or writes it in place.
bool staysInIteration(memref::AllocOp alloc, Operation *loop) {
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    for (OpOperand &use : buffer.getUses()) {
      Operation *user = use.getOwner();
      if (!loop->isProperAncestor(user))
        return false;
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        auto branch = dyn_cast<scf::IfOp>(yield->getParentOp());
        if (!branch || !loop->isProperAncestor(branch))
          return false;
        worklist.push_back(branch.getResult(use.getOperandNumber()));
        continue;
      }
      if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
        if (user->getNumResults() != 1)
          return false;
        worklist.push_back(user->getResult(0));
        continue;
      }
      // A store of the buffer itself, a call or a return lets it out;
      // a dealloc frees a heap buffer.
      if (isa<memref::StoreOp, memref::DeallocOp, CallOpInterface,
              RegionBranchTerminatorOpInterface>(user))
        return false;
      // Anything else must take the buffer as memory it reads or writes,
      // not as a value it keeps: a result of memref type could alias it.
      if (llvm::any_of(user->getResultTypes(),
                       [](Type type) { return isa<BaseMemRefType>(type); }))
        return false;
    }
  }
  return true;
}

struct PromoteTilesToStackPass
    : public mlir::attn::impl::AttnPromoteTilesToStackBase<
          PromoteTilesToStackPass> {
  using AttnPromoteTilesToStackBase::AttnPromoteTilesToStackBase;

  void runOnOperation() override {
    llvm::MapVector<Operation *, SmallVector<memref::AllocOp>> perLoop;
    getOperation().walk([&](memref::AllocOp alloc) {
      MemRefType type = alloc.getType();
      // (index has no bit width here; vectors and complex stay on the
      // heap.)
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat())
        return;
      if (Operation *loop = enclosingLoop(alloc))
        perLoop[loop].push_back(alloc);
    });

    OpBuilder builder(&getContext());
    for (auto &[loop, allocs] : perLoop) {
      int64_t budget = maxBytes;
      for (memref::AllocOp alloc : allocs) {
        MemRefType type = alloc.getType();
        // Saturated: a static shape may hold more bytes than int64 does.
        int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        for (int64_t size : type.getShape())
          if (llvm::MulOverflow(bytes, size, bytes))
            bytes = std::numeric_limits<int64_t>::max();
        if (bytes > budget || !staysInIteration(alloc, loop))
          continue;
        budget -= bytes;
        builder.setInsertionPoint(alloc);
        auto alloca = memref::AllocaOp::create(builder, alloc.getLoc(), type,
                                               alloc.getAlignmentAttr());
        alloc.replaceAllUsesWith(alloca.getResult());
        alloc.erase();
      }
    }
  }
};

struct HoistAllocasFromLoopsPass
    : public mlir::attn::impl::AttnHoistAllocasFromLoopsBase<
          HoistAllocasFromLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaOp> allocas;
    getOperation().walk([&](memref::AllocaOp alloca) {
      if (alloca.getType().hasStaticShape() && alloca->getNumOperands() == 0)
        allocas.push_back(alloca);
    });
    for (memref::AllocaOp alloca : allocas) {
      Operation *outermost = nullptr;
      for (Operation *parent = alloca->getParentOp(); parent;
           parent = parent->getParentOp()) {
        if (isa<scf::ForOp>(parent))
          outermost = parent;
        else if (!isa<scf::IfOp>(parent))
          break; // A parallel loop, an alloca scope or the function.
      }
      if (outermost)
        alloca->moveBefore(outermost);
    }
  }
};

struct LowerAllocaScopesPass
    : public mlir::attn::impl::AttnLowerAllocaScopesBase<
          LowerAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk<WalkOrder::PostOrder>(
        [&](memref::AllocaScopeOp scope) { scopes.push_back(scope); });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Location loc = scope.getLoc();
      rewriter.setInsertionPoint(scope);
      Value saved = LLVM::StackSaveOp::create(
          rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext()));
      Block &body = scope.getBodyRegion().front();
      auto terminator = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
      SmallVector<Value> results(terminator.getResults());
      rewriter.eraseOp(terminator);
      rewriter.inlineBlockBefore(&body, scope);
      LLVM::StackRestoreOp::create(rewriter, loc, saved);
      rewriter.replaceOp(scope, results);
    }
  }
};
} // namespace
