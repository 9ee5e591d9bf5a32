//===- SelectOrder.cpp - Choose association orders and chunks by cost -----===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/TermCost.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNSELECTORDER
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
namespace cost = ::attn::cost;

namespace {
/// N at which the chunk of a dynamic-length term is chosen: long enough for
/// the chunk to matter, short enough to be a common length.
constexpr int64_t kAssumedLength = 4096;

struct SelectOrderPass
    : public mlir::attn::impl::AttnSelectOrderBase<SelectOrderPass> {
  using AttnSelectOrderBase::AttnSelectOrderBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    cost::Target costTarget;
    if (std::string error = resolveTarget(target, costTarget); !error.empty()) {
      root->emitError() << "attn-select-order: " << error;
      return signalPassFailure();
    }
    std::optional<Order> forced;
    if (force != Order::Auto)
      forced = force;
    if (chunk < 0) {
      root->emitError() << "attn-select-order: chunk must be positive, got "
                        << static_cast<int64_t>(chunk);
      return signalPassFailure();
    }

    WalkResult result = root->walk([&](TermOp term) {
      return succeeded(selectFor(term, costTarget, forced))
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult selectFor(TermOp term, const cost::Target &costTarget,
                          std::optional<Order> forced) {
    Builder builder(term.getContext());
    llvm::SmallVector<std::string> assumptions;
    cost::TermShape shape = getTermShape(term, kAssumedLength, assumptions);
    // N is only known at run time unless it is static, or a causal mask
    // ties it to a static M (C6).
    bool dynamicLength =
        ShapedType::isDynamic(term.getQuery().getType().getDimSize(2)) &&
        !(term.getMask() && term.getMask()->isCausal() &&
          !ShapedType::isDynamic(term.getKey().getType().getDimSize(2)));

    Order order = term.getOrder();
    if (order == Order::Auto && forced) {
      if (*forced == Order::KvFirst && !term.hasProductForm())
        return term.emitOpError("force=kv_first is not legal: score '")
               << stringifyScore(term.getScore())
               << "' has no product form (only qk_first)";
      if (*forced != Order::QkFirst && term.needsQkFirst())
        return term.emitOpError("force=")
               << stringifyOrder(*forced) << " is not legal: "
               << (term.getMaskKind() == MaskKind::Window ? "a 'window' mask"
                                                          : "grouped heads")
               << " (only qk_first)";
      if (*forced == Order::Recurrent && !shape.hasRecurrentForm())
        return term.emitOpError("force=recurrent is not legal: it needs a "
                                "'kernel' term with mask 'causal' and no "
                                "projection");
      if (*forced == Order::QkFirst && term.hasState())
        return term.emitOpError("force=qk_first is not legal: the term takes "
                                "or returns a state (kv_first or recurrent)");
      order = *forced;
    } else if (order == Order::Auto && term.hasState()) {
      // A state lives in the kv-first and recurrent forms only: the faster
      // of the two, without a run-time switch.
      cost::TermCost decision = cost::analyzeTerm(shape, costTarget);
      order = Order::KvFirst;
      double best = INFINITY;
      for (const cost::Strategy &strategy : decision.strategies)
        if (strategy.order != cost::Order::QkFirst && strategy.seconds < best) {
          best = strategy.seconds;
          order = strategy.order == cost::Order::Recurrent ? Order::Recurrent
                                                           : Order::KvFirst;
        }
    } else if (order == Order::Auto &&
               (!term.hasProductForm() || term.needsQkFirst())) {
      order = Order::QkFirst;
    } else if (order == Order::Auto && dynamicLength) {
      // Both orders are emitted; record where to switch.
      std::optional<int64_t> crossover = cost::crossoverLength(
          shape, costTarget,
          ShapedType::isDynamic(term.getKey().getType().getDimSize(2)));
      if (crossover)
        term.setCrossoverAttr(builder.getI64IntegerAttr(*crossover));
      else
        order = Order::QkFirst;
    } else if (order == Order::Auto) {
      cost::TermCost decision = cost::analyzeTerm(shape, costTarget);
      switch (decision.chosen.order) {
      case cost::Order::QkFirst:
        order = Order::QkFirst;
        break;
      case cost::Order::KvFirst:
        order = Order::KvFirst;
        break;
      case cost::Order::Recurrent:
        order = Order::Recurrent;
        break;
      }
    }
    term.setOrder(order);

    if (std::optional<int64_t> given = term.getChunk();
        given && *given > kMaxChunk) {
      term.emitRemark("attn-select-order: chunk ")
          << *given << " is beyond the largest chunk, " << kMaxChunk
          << "; using " << kMaxChunk;
      term.setChunkAttr(builder.getI64IntegerAttr(kMaxChunk));
    }
    if (!term.getChunk()) {
      std::optional<int64_t> selected;
      if (chunk > kMaxChunk) {
        term.emitRemark("attn-select-order: chunk ")
            << static_cast<int64_t>(chunk) << " is beyond the largest chunk, "
            << kMaxChunk << "; using " << kMaxChunk;
        selected = kMaxChunk;
      } else if (chunk > 0) {
        selected = static_cast<int64_t>(chunk);
      }
      else if (order == Order::QkFirst)
        selected = cost::chooseChunk(shape, costTarget, cost::Order::QkFirst);
      else if (order == Order::Recurrent)
        // Token by token: no chunk (the features are mapped per pass tile).
        selected = std::nullopt;
      else
        // kv-first, or both orders behind a crossover: the kv-first chunk
        // (qk-first then uses its default key tile).
        selected = cost::chooseChunk(shape, costTarget, cost::Order::KvFirst);
      if (selected)
        term.setChunkAttr(builder.getI64IntegerAttr(*selected));
    }
    if (!assumptions.empty()) {
      InFlightDiagnostic remark = term.emitRemark("attn-select-order: ");
      for (const auto &[index, assumption] : llvm::enumerate(assumptions))
        remark << (index ? "; " : "") << assumption;
    }
    return success();
  }
};
} // namespace
