//===- EmitCEntry.cpp - The C entry point in the LLVM dialect -------------===//
//
//   i32 @attn_<name>(ptr in..., ptr out, i64 size...)
//
// checks the sizes (positive, equal where the ops tie them, no byte size
// beyond 2^62) and the pointers, builds a dense row-major memref descriptor
// per array and calls the C interface of the spec's function, whose
// arguments are pointers to descriptors (attn-destination-abi's convention).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CEntry.h"
#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEMITCENTRY
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using ::attn::EntryAbi;
using ::attn::Extent;

namespace {
/// Builds the body of the entry point of one EntryAbi.
class EntryBuilder {
public:
  EntryBuilder(OpBuilder &b, Location loc, const EntryAbi &abi)
      : b(b), loc(loc), abi(abi), i1(b.getI1Type()), i32(b.getI32Type()),
        i64(b.getI64Type()), ptr(LLVM::LLVMPointerType::get(b.getContext())) {}

  /// Defines the entry point, calling \p callee.
  LLVM::LLVMFuncOp build(ModuleOp module, LLVM::LLVMFuncOp callee);
  /// Defines `i32 NAME(ptr arrays, ptr sizes)` calling \p entry.
  void buildPacked(ModuleOp module, LLVM::LLVMFuncOp entry);

private:
  Value constant(Type type, int64_t value) {
    return LLVM::ConstantOp::create(b, loc, type,
                                    b.getIntegerAttr(type, value));
  }
  Value extent(const Extent &extent) {
    return extent.isDynamic() ? sizes[extent.dynamic]
                              : constant(i64, extent.value);
  }
  Value orInto(Value acc, Value bit) {
    return LLVM::OrOp::create(b, loc, acc, bit);
  }
  void returnStatus(Block *block, int status) {
    b.setInsertionPointToEnd(block);
    LLVM::ReturnOp::create(b, loc, constant(i32, status));
  }

  OpBuilder &b;
  Location loc;
  const EntryAbi &abi;
  Type i1, i32, i64, ptr;
  SmallVector<Value> arrays, sizes;
};
} // namespace

LLVM::LLVMFuncOp EntryBuilder::build(ModuleOp module, LLVM::LLVMFuncOp callee) {
  SmallVector<Type> params(abi.arrays.size(), ptr);
  params.append(abi.dynamicSizes.size(), i64);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, abi.entryName,
                                     LLVM::LLVMFunctionType::get(i32, params));
  fn.setDsoLocal(true);
  Block *entry = fn.addEntryBlock(b);
  Block *checkPointers = b.createBlock(&fn.getBody(), fn.getBody().end());
  Block *call = b.createBlock(&fn.getBody(), fn.getBody().end());
  Block *badSize = b.createBlock(&fn.getBody(), fn.getBody().end());
  Block *nullPointer = b.createBlock(&fn.getBody(), fn.getBody().end());
  for (unsigned i = 0; i < abi.arrays.size(); ++i)
    arrays.push_back(entry->getArgument(i));
  for (unsigned i = 0; i < abi.dynamicSizes.size(); ++i)
    sizes.push_back(entry->getArgument(abi.arrays.size() + i));

  // Sizes: positive, equal where the ops tie them, every byte size
  // <= 2^62 (a multiplication that overflows 64 bits is too large too).
  b.setInsertionPointToStart(entry);
  Value one = constant(i64, 1);
  Value bad = constant(i1, 0);
  for (Value size : sizes)
    bad = orInto(bad, LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt,
                                           size, one));
  for (const auto &[lhs, rhs] : abi.equalities)
    bad = orInto(bad, LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                                           extent(lhs), extent(rhs)));
  auto withOverflow = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                       {i64, i1});
  Value maxBytes = constant(i64, ::attn::kMaxBytes);
  for (const std::vector<Extent> &product : abi.products) {
    Value bytes = constant(i64, sizeof(float));
    for (const Extent &factor : product) {
      Value result = LLVM::UMulWithOverflowOp::create(b, loc, withOverflow,
                                                      bytes, extent(factor));
      bytes = LLVM::ExtractValueOp::create(b, loc, result, 0);
      bad = orInto(bad, LLVM::ExtractValueOp::create(b, loc, result, 1));
    }
    bad = orInto(bad, LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt,
                                           bytes, maxBytes));
  }
  // The descriptors live in the entry block, as static allocas.
  SmallVector<Value> descriptors;
  SmallVector<LLVM::LLVMStructType> descriptorTypes;
  for (const ::attn::AbiArray &array : abi.arrays) {
    auto dims = LLVM::LLVMArrayType::get(i64, array.shape.size());
    auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                 {ptr, ptr, i64, dims, dims});
    descriptorTypes.push_back(type);
    descriptors.push_back(LLVM::AllocaOp::create(b, loc, ptr, type, one));
  }
  LLVM::CondBrOp::create(b, loc, bad, badSize, checkPointers);

  b.setInsertionPointToEnd(checkPointers);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  Value isNull = constant(i1, 0);
  for (Value array : arrays)
    isNull = orInto(isNull, LLVM::ICmpOp::create(
                                b, loc, LLVM::ICmpPredicate::eq, array, null));
  LLVM::CondBrOp::create(b, loc, isNull, nullPointer, call);

  // {allocated, aligned, offset 0, sizes, strides (suffix products)}.
  b.setInsertionPointToEnd(call);
  for (auto [a, array] : llvm::enumerate(abi.arrays)) {
    Value desc = LLVM::UndefOp::create(b, loc, descriptorTypes[a]);
    desc = LLVM::InsertValueOp::create(b, loc, desc, arrays[a],
                                       ArrayRef<int64_t>{0});
    desc = LLVM::InsertValueOp::create(b, loc, desc, arrays[a],
                                       ArrayRef<int64_t>{1});
    desc = LLVM::InsertValueOp::create(b, loc, desc, constant(i64, 0),
                                       ArrayRef<int64_t>{2});
    Value stride = one;
    for (int64_t d = array.shape.size() - 1; d >= 0; --d) {
      Value size = extent(array.shape[d]);
      desc = LLVM::InsertValueOp::create(b, loc, desc, size,
                                         ArrayRef<int64_t>{3, d});
      desc = LLVM::InsertValueOp::create(b, loc, desc, stride,
                                         ArrayRef<int64_t>{4, d});
      stride = LLVM::MulOp::create(b, loc, stride, size,
                                   LLVM::IntegerOverflowFlags::nuw |
                                       LLVM::IntegerOverflowFlags::nsw);
    }
    LLVM::StoreOp::create(b, loc, desc, descriptors[a]);
  }
  // attn-check-allocations' counter: a failed allocation during this call
  // made it grow (a concurrent failing call of the same object may too,
  // which then fails both: never a silent wrong output).
  auto failures = module.lookupSymbol<LLVM::GlobalOp>(kAllocationFailures);
  Value failuresAddress, failuresBefore;
  if (failures) {
    failuresAddress = LLVM::AddressOfOp::create(b, loc, failures);
    failuresBefore = LLVM::LoadOp::create(b, loc, i64, failuresAddress,
                                          /*alignment=*/8, /*isVolatile=*/false,
                                          /*isNonTemporal=*/false,
                                          /*isInvariant=*/false,
                                          /*isInvariantGroup=*/false,
                                          LLVM::AtomicOrdering::acquire);
  }
  LLVM::CallOp::create(b, loc, callee, descriptors);
  if (failures) {
    Value after = LLVM::LoadOp::create(b, loc, i64, failuresAddress,
                                       /*alignment=*/8, /*isVolatile=*/false,
                                       /*isNonTemporal=*/false,
                                       /*isInvariant=*/false,
                                       /*isInvariantGroup=*/false,
                                       LLVM::AtomicOrdering::acquire);
    Value grew = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, after,
                                      failuresBefore);
    Value status = LLVM::SelectOp::create(
        b, loc, grew, constant(i32, ::attn::kStatusOutOfMemory),
        constant(i32, ::attn::kStatusOk));
    LLVM::ReturnOp::create(b, loc, status);
  } else {
    LLVM::ReturnOp::create(b, loc, constant(i32, ::attn::kStatusOk));
  }
  returnStatus(badSize, ::attn::kStatusBadSize);
  returnStatus(nullPointer, ::attn::kStatusNullPointer);
  return fn;
}

void EntryBuilder::buildPacked(ModuleOp module, LLVM::LLVMFuncOp entry) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, abi.entryName + "_packed",
      LLVM::LLVMFunctionType::get(i32, {ptr, ptr}));
  fn.setDsoLocal(true);
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args;
  for (unsigned i = 0; i < abi.arrays.size(); ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  for (unsigned i = 0; i < abi.dynamicSizes.size(); ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, i64, body->getArgument(1),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, i64, slot));
  }
  Value status = LLVM::CallOp::create(b, loc, entry, args).getResult();
  LLVM::ReturnOp::create(b, loc, status);
}

/// `void NAME(void)`: frees the workspaces attn-cache-workspaces keeps (a
/// function that returns when the code keeps none).
static void buildFreeWorkspaces(OpBuilder &b, ModuleOp module, Location loc,
                                StringRef name) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {}));
  fn.setDsoLocal(true);
  b.setInsertionPointToStart(fn.addEntryBlock(b));
  if (auto freeAll = module.lookupSymbol<LLVM::LLVMFuncOp>(kWorkspaceFreeAll))
    LLVM::CallOp::create(b, loc, freeAll, ValueRange{});
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

namespace {
struct AttnEmitCEntryPass
    : public mlir::attn::impl::AttnEmitCEntryBase<AttnEmitCEntryPass> {
  using AttnEmitCEntryBase::AttnEmitCEntryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto attr = module->getAttrOfType<DictionaryAttr>(kCEntryAttrName);
    if (!attr) {
      module.emitError("attn-emit-c-entry: the module has no '")
          << kCEntryAttrName << "' (attn-describe-c-entry makes it)";
      return signalPassFailure();
    }
    FailureOr<EntryAbi> abi = entryAbiFromAttr(attr, module.getLoc());
    if (failed(abi))
      return signalPassFailure();
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(abi->callee);
    if (!callee || callee.isExternal() ||
        callee.getNumArguments() != abi->arrays.size() ||
        !isa<LLVM::LLVMVoidType>(callee.getFunctionType().getReturnType())) {
      module.emitError("attn-emit-c-entry: the module has no function '")
          << abi->callee << "' taking " << abi->arrays.size()
          << " memref descriptors (attn-destination-abi's convention)";
      return signalPassFailure();
    }
    std::string packedName = abi->entryName + "_packed";
    std::string freeName = abi->entryName + ::attn::kFreeWorkspacesSuffix;
    for (const std::string &name : {abi->entryName, packedName, freeName})
      if (packed || name != packedName)
        if (module.lookupSymbol(name)) {
          module.emitError("attn-emit-c-entry: the module already has a "
                           "symbol named '")
              << name << "'";
          return signalPassFailure();
        }

    // The object must run without MLIR's runtime libraries:
    // attn-strided-copies-to-linalg leaves no memref.copy for the lowering
    // to turn into a call of libmlir_c_runner_utils's memrefCopy.
    if (auto copy = module.lookupSymbol<LLVM::LLVMFuncOp>("memrefCopy");
        copy && copy.isExternal()) {
      copy.emitError("attn-emit-c-entry: the lowered code calls memrefCopy "
                     "of MLIR's runtime library, which the object cannot "
                     "link");
      return signalPassFailure();
    }

    OpBuilder b(&getContext());
    EntryBuilder builder(b, callee.getLoc(), *abi);
    LLVM::LLVMFuncOp entry = builder.build(module, callee);
    if (packed)
      builder.buildPacked(module, entry);
    buildFreeWorkspaces(b, module, callee.getLoc(), freeName);

    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      // The spec's argument names mean nothing to LLVM.
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        fn.removeArgAttr(i, "attn.input");
      if (internalize && !fn.isExternal() &&
          fn.getSymName() != abi->entryName &&
          fn.getSymName() != packedName && fn.getSymName() != freeName)
        fn.setLinkage(LLVM::Linkage::Internal);
    }
    if (internalize)
      for (auto global : module.getOps<LLVM::GlobalOp>())
        if (!global.isDeclaration())
          global.setLinkage(LLVM::Linkage::Internal);
    module->removeAttr(kCEntryAttrName);
  }
};
} // namespace
