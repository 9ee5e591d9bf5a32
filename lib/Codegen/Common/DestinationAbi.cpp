//===- DestinationAbi.cpp - Memref calling convention for attnc -----------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNDESTINATIONABI
#define GEN_PASS_DEF_ATTNCHECKLOWERED
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
MemRefType toMemRef(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

LogicalResult convert(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults()))
    if (!isa<RankedTensorType>(t))
      return func.emitError("attn-destination-abi: only ranked tensor "
                            "arguments and results are supported, got ")
             << t;
  Block &entry = func.getBody().front();
  OpBuilder builder(func.getContext());
  builder.setInsertionPointToStart(&entry);
  SmallVector<Type> inputs;
  for (BlockArgument arg : entry.getArguments()) {
    MemRefType memref = toMemRef(arg.getType());
    inputs.push_back(memref);
    arg.setType(memref);
    auto tensor = bufferization::ToTensorOp::create(
        builder, func.getLoc(),
        cast<TensorType>(RankedTensorType::get(memref.getShape(),
                                               memref.getElementType())),
        arg, /*restrict=*/true, /*writable=*/false);
    arg.replaceAllUsesExcept(tensor, tensor);
  }
  SmallVector<Value> outs;
  for (Type result : type.getResults()) {
    MemRefType memref = toMemRef(result);
    inputs.push_back(memref);
    outs.push_back(entry.addArgument(memref, func.getLoc()));
  }
  func.walk([&](func::ReturnOp ret) {
    builder.setInsertionPoint(ret);
    for (auto [value, out] : llvm::zip(ret.getOperands(), outs)) {
      auto store = bufferization::MaterializeInDestinationOp::create(
          builder, ret.getLoc(), TypeRange{}, value, out);
      store.setRestrict(true);
      store.setWritable(true);
    }
    ret->setOperands({});
  });
  func.setType(FunctionType::get(func.getContext(), inputs, {}));
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(func.getContext()));
  return success();
}

struct DestinationAbiPass
    : public mlir::attn::impl::AttnDestinationAbiBase<DestinationAbiPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() && failed(convert(func)))
        return signalPassFailure();
  }
};

struct CheckLoweredPass
    : public mlir::attn::impl::AttnCheckLoweredBase<CheckLoweredPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The first op left over names the problem, unless it is only a
    // symptom: a terminator of a leftover region op, or a cast a conversion
    // left where it met an op it could not convert.
    Operation *first = nullptr, *culprit = nullptr;
    module.walk([&](Operation *op) {
      Dialect *dialect = op->getDialect();
      // OpenMP ops, and the serialised kernels with their launches, are
      // translated to LLVM IR together with the LLVM dialect.
      if (op == module.getOperation() ||
          isa_and_nonnull<LLVM::LLVMDialect, omp::OpenMPDialect>(dialect) ||
          isa<gpu::BinaryOp, gpu::LaunchFuncOp>(op))
        return WalkResult::advance();
      if (!first)
        first = op;
      if (isa<UnrealizedConversionCastOp>(op) ||
          op->hasTrait<OpTrait::IsTerminator>())
        return WalkResult::advance();
      culprit = op;
      return WalkResult::interrupt();
    });
    if (!culprit)
      culprit = first;
    if (!culprit)
      return;
    // Ops a conversion creates may have no location (the constants the
    // canonicalizer hoists have none): the error is then at the nearest
    // enclosing op with one.
    attn::emitErrorInInput(culprit, "the lowering left a '")
        << culprit->getName()
        << "' operation: the output must be the LLVM dialect only";
    signalPassFailure();
  }
};
} // namespace
