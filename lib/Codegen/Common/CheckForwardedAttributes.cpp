//===- CheckForwardedAttributes.cpp - Attributes the LLVM lowering reads --===//
//
// FuncToLLVM and GPUToNVVM build llvm.func and llvm.call with the
// discardable attributes of the op they lower; the builders read the ones
// named like a property as that property, with no way to report one of
// another kind (the process crashes). Reading them here with the same
// generated conversion, but with an error to report, turns that into a
// diagnostic at the op.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCHECKFORWARDEDATTRIBUTES
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

/// Whether the discardable attributes of \p op set the properties of
/// \p LLVMOpTy (those that name one) without error.
template <typename LLVMOpTy>
static LogicalResult checkAsPropertiesOf(Operation *op) {
  SmallVector<NamedAttribute> attrs(op->getDiscardableAttrs());
  if (attrs.empty())
    return success();
  typename LLVMOpTy::Properties properties;
  return LLVMOpTy::setPropertiesFromAttr(
      properties, DictionaryAttr::get(op->getContext(), attrs), [&] {
        return attn::emitOpErrorInInput(op)
               << "has an attribute that its lowering to '"
               << LLVMOpTy::getOperationName()
               << "' would read as a property of another kind: ";
      });
}

namespace {
struct CheckForwardedAttributesPass
    : public mlir::attn::impl::AttnCheckForwardedAttributesBase<
          CheckForwardedAttributesPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](Operation *op) {
      LogicalResult checked = success();
      if (isa<func::FuncOp, gpu::GPUFuncOp>(op))
        checked = checkAsPropertiesOf<LLVM::LLVMFuncOp>(op);
      else if (isa<func::CallOp, func::CallIndirectOp>(op))
        checked = checkAsPropertiesOf<LLVM::CallOp>(op);
      return failed(checked) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
