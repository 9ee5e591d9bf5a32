//===- CheckAllocations.cpp - Heap allocations that may fail --------------===//
//
// After the lowering to the LLVM dialect, every `malloc` of the generated
// code is followed by a test of its result: on NULL the code counts the
// failure in the module's `__attn_allocation_failures` and leaves the
// piece of work it was in (the function, or the current iteration of an
// OpenMP loop or parallel region), so that nothing is written through the
// null pointer. attn-emit-c-entry compares the counter before and after the
// call and returns ATTN_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CEntry.h"
#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCHECKALLOCATIONS
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// The functions whose NULL result means that an allocation failed.
static bool isAllocation(LLVM::CallOp call) {
  std::optional<StringRef> callee = call.getCallee();
  return callee && (*callee == "malloc" || *callee == "aligned_alloc" ||
                    *callee == "calloc");
}

/// Ends \p block, in a function or an omp.loop_nest, the way its region ends
/// when the work is left early. (Not an omp.parallel body: a thread leaving
/// it early would skip the barriers the other threads wait at.)
static void leaveRegion(OpBuilder &b, Location loc, Block *block) {
  Operation *owner = block->getParentOp();
  b.setInsertionPointToEnd(block);
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(owner)) {
    Type result = fn.getFunctionType().getReturnType();
    if (isa<LLVM::LLVMVoidType>(result)) {
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    } else {
      Value zero = LLVM::ZeroOp::create(b, loc, result);
      LLVM::ReturnOp::create(b, loc, zero);
    }
    return;
  }
  omp::YieldOp::create(b, loc, ValueRange{});
}

namespace {
struct AttnCheckAllocationsPass
    : public mlir::attn::impl::AttnCheckAllocationsBase<
          AttnCheckAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      if (isAllocation(call) && call.getNumResults() == 1)
        calls.push_back(call);
    });
    if (calls.empty())
      return;

    MLIRContext *context = &getContext();
    OpBuilder b(context);
    Type i64 = b.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(context);
    auto counter = module.lookupSymbol<LLVM::GlobalOp>(kAllocationFailures);
    if (!counter) {
      b.setInsertionPointToStart(module.getBody());
      counter = LLVM::GlobalOp::create(
          b, module.getLoc(), i64, /*isConstant=*/false,
          LLVM::Linkage::Internal, kAllocationFailures, b.getI64IntegerAttr(0));
    } else if (counter.getGlobalType() != i64) {
      counter.emitOpError("must be an i64 counter of failed allocations");
      return signalPassFailure();
    }

    for (LLVM::CallOp call : calls) {
      Location loc = call.getLoc();
      Operation *owner = call->getParentOp();
      if (!isa<LLVM::LLVMFuncOp, omp::LoopNestOp>(owner)) {
        call.emitOpError("attn-check-allocations: cannot leave a '")
            << owner->getName() << "' region when the allocation fails";
        return signalPassFailure();
      }
      Block *before = call->getBlock();
      Region *region = before->getParent();
      Block *after = before->splitBlock(call->getNextNode());
      Block *failed = b.createBlock(region, Region::iterator(after));
      b.setInsertionPointToEnd(before);
      Value null = LLVM::ZeroOp::create(b, loc, ptr);
      Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                          call.getResult(), null);
      LLVM::CondBrOp::create(b, loc, isNull, failed, after);

      b.setInsertionPointToEnd(failed);
      Value address = LLVM::AddressOfOp::create(b, loc, counter);
      Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
      LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add, address, one,
                                LLVM::AtomicOrdering::monotonic);
      leaveRegion(b, loc, failed);
    }
  }
};
} // namespace
