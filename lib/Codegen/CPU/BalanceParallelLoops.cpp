//===- BalanceParallelLoops.cpp - schedule(dynamic, 1) on attn's loops ----===//

#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNBALANCEPARALLELLOOPS
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
struct BalanceParallelLoopsPass
    : public mlir::attn::impl::AttnBalanceParallelLoopsBase<
          BalanceParallelLoopsPass> {
  void runOnOperation() override {
    getOperation().walk([](omp::WsloopOp loop) {
      if (loop.getScheduleKind())
        return;
      OpBuilder builder(loop);
      // The chunk's type is the loop's induction variable's.
      auto nest = cast<omp::LoopNestOp>(loop.getWrappedLoop());
      Type type = nest.getIVs().front().getType();
      Value one = arith::ConstantOp::create(builder, loop.getLoc(),
                                            builder.getIntegerAttr(type, 1));
      loop.setScheduleKindAttr(omp::ClauseScheduleKindAttr::get(
          loop.getContext(), omp::ClauseScheduleKind::Dynamic));
      loop.getScheduleChunkMutable().assign(one);
    });
  }
};
} // namespace
