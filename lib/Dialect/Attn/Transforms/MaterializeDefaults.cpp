//===- MaterializeDefaults.cpp - Make attn.term defaults explicit ---------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNMATERIALIZEDEFAULTS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
struct MaterializeDefaultsPass
    : public mlir::attn::impl::AttnMaterializeDefaultsBase<
          MaterializeDefaultsPass> {
  void runOnOperation() override {
    getOperation()->walk([](TermOp term) {
      MLIRContext *context = term.getContext();
      Builder builder(context);
      if (!term.getMask())
        term.setMaskAttr(MaskAttr::get(context, MaskKind::None, 0));
      Normalizer normalizer = term.getEffectiveNormalizer();
      term.setNormalizer(normalizer);
      if (normalizer == Normalizer::Rows && !term.getEps())
        term.setEpsAttr(builder.getF64FloatAttr(term.getEffectiveEps()));
      // With a dynamic D the default scale is only known at run time, so it
      // stays implicit and the lowering computes 1/sqrt(D).
      if (term.usesScale() && !term.getScale())
        if (std::optional<double> scale = term.getEffectiveScale())
          term.setScaleAttr(builder.getF64FloatAttr(*scale));
    });
  }
};
} // namespace
