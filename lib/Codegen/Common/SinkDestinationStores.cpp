//===- SinkDestinationStores.cpp - Stores into the branches of an scf.if --===//

#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSINKDESTINATIONSTORES
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
/// materialize_in_destination (scf.if ...) in %dest, as one store per branch.
struct SinkStoreIntoIf
    : public OpRewritePattern<bufferization::MaterializeInDestinationOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(bufferization::MaterializeInDestinationOp store,
                                PatternRewriter &rewriter) const override {
    // Only the buffer form (no result): a tensor destination would have to
    // be yielded out of the branches again.
    if (store->getNumResults() != 0)
      return failure();
    auto ifOp = store.getSource().getDefiningOp<scf::IfOp>();
    if (!ifOp || ifOp->getNumResults() != 1 || !ifOp->hasOneUse() ||
        ifOp.getElseRegion().empty())
      return failure();
    // The destination must be usable inside both branches.
    Value dest = store.getDest();
    if (!dest.getParentRegion()->isAncestor(ifOp->getParentRegion()))
      return failure();

    rewriter.setInsertionPoint(ifOp);
    auto sunk = scf::IfOp::create(rewriter, ifOp.getLoc(), TypeRange{},
                                  ifOp.getCondition(), /*withElse=*/true);
    for (auto [from, to] :
         {std::pair(&ifOp.getThenRegion(), &sunk.getThenRegion()),
          std::pair(&ifOp.getElseRegion(), &sunk.getElseRegion())}) {
      Block *target = &to->front();
      Block *source = &from->front();
      auto yield = cast<scf::YieldOp>(source->getTerminator());
      Value branchValue = yield.getOperand(0);
      rewriter.eraseOp(target->getTerminator());
      rewriter.inlineBlockBefore(source, target, target->end());
      rewriter.setInsertionPoint(yield);
      auto branchStore = bufferization::MaterializeInDestinationOp::create(
          rewriter, store.getLoc(), TypeRange{}, branchValue, dest);
      branchStore.setRestrict(store.getRestrict());
      branchStore.setWritable(store.getWritable());
      rewriter.replaceOpWithNewOp<scf::YieldOp>(yield);
    }
    rewriter.eraseOp(store);
    rewriter.eraseOp(ifOp);
    return success();
  }
};

struct SinkDestinationStoresPass
    : public mlir::attn::impl::AttnSinkDestinationStoresBase<
          SinkDestinationStoresPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkStoreIntoIf>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
