//===- CacheWorkspaces.cpp - Workspaces kept from one call to the next ----===//
//
// A heap block allocated in the body of a generated function and freed at
// its end (the packed K and V of the qk-first form) goes back to a slot of
// the module instead of to the C library, and the next call takes it from
// there: fresh pages cost a page fault each, a large share of a short call.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CEntry.h"
#include "attn/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNCACHEWORKSPACES
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

static constexpr const char *kAcquireName = "__attn_workspace_acquire";
static constexpr const char *kReleaseName = "__attn_workspace_release";
static constexpr const char *kSlotPrefix = "__attn_workspace_slot_";
/// The block's header: its capacity in bytes (an i64), padded so that the
/// pointer after it is as aligned as malloc's.
static constexpr int64_t kHeaderBytes = 64;
/// Blocks larger than this are freed, not kept.
static constexpr int64_t kMaxKeptBytes = int64_t(1) << 28;

static bool isCallTo(Operation *op, StringRef name) {
  auto call = dyn_cast<LLVM::CallOp>(op);
  std::optional<StringRef> callee = call ? call.getCallee() : std::nullopt;
  return callee && *callee == name;
}

namespace {
/// Where the pointer one malloc returned goes: the `free` calls of it, or
/// the knowledge that it escapes where they cannot all be found.
class AllocationTrace {
public:
  explicit AllocationTrace(LLVM::CallOp malloc) {
    pointers.push_back(malloc.getResult());
    while (!escapes && (!pointers.empty() || !descriptors.empty())) {
      if (!pointers.empty())
        visitPointer(pointers.pop_back_val());
      else
        visitDescriptor(descriptors.pop_back_val());
    }
  }

  /// The frees, or nothing when the pointer escapes or is never freed.
  ArrayRef<LLVM::CallOp> getFrees() const {
    if (escapes)
      return {};
    return frees;
  }

private:
  /// A value equal to the allocated pointer.
  void visitPointer(Value pointer) {
    for (OpOperand &use : pointer.getUses()) {
      Operation *user = use.getOwner();
      if (isCallTo(user, "free")) {
        frees.push_back(cast<LLVM::CallOp>(user));
        continue;
      }
      if (isa<LLVM::ICmpOp, LLVM::PtrToIntOp, LLVM::LoadOp, LLVM::MemsetOp,
              LLVM::MemcpyOp, LLVM::MemmoveOp, LLVM::Prefetch>(user))
        continue;
      if (auto gep = dyn_cast<LLVM::GEPOp>(user);
          gep && use.getOperandNumber() == 0)
        continue;
      if (auto store = dyn_cast<LLVM::StoreOp>(user);
          store && use.get() == store.getAddr() && store.getValue() != pointer)
        continue;
      if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
          insert && insert.getValue() == pointer &&
          insert.getContainer() != pointer &&
          insert.getPosition() == ArrayRef<int64_t>{0}) {
        descriptors.push_back(insert.getResult());
        continue;
      }
      escapes = true;
      return;
    }
  }

  /// A struct whose field 0 is the allocated pointer (a memref descriptor).
  void visitDescriptor(Value descriptor) {
    for (OpOperand &use : descriptor.getUses()) {
      Operation *user = use.getOwner();
      if (auto insert = dyn_cast<LLVM::InsertValueOp>(user);
          insert && insert.getContainer() == descriptor &&
          insert.getValue() != descriptor) {
        if (insert.getPosition() != ArrayRef<int64_t>{0})
          descriptors.push_back(insert.getResult());
        continue;
      }
      if (auto extract = dyn_cast<LLVM::ExtractValueOp>(user)) {
        if (extract.getPosition() == ArrayRef<int64_t>{0})
          pointers.push_back(extract.getResult());
        continue;
      }
      escapes = true;
      return;
    }
  }

  SmallVector<Value> pointers;
  SmallVector<Value> descriptors;
  SmallVector<LLVM::CallOp> frees;
  bool escapes = false;
};

/// Builds the slots' functions into one module.
class WorkspaceRuntime {
public:
  explicit WorkspaceRuntime(ModuleOp module)
      : module(module), b(module.getContext()) {
    MLIRContext *context = module.getContext();
    ptrType = LLVM::LLVMPointerType::get(context);
    i64Type = IntegerType::get(context, 64);
    voidType = LLVM::LLVMVoidType::get(context);
  }

  LLVM::GlobalOp addSlot() {
    std::string name;
    do {
      name = kSlotPrefix + std::to_string(nextSlot++);
    } while (module.lookupSymbol(name));
    // In order, at the top of the module.
    if (slots.empty())
      b.setInsertionPointToStart(module.getBody());
    else
      b.setInsertionPointAfter(slots.back());
    auto slot = LLVM::GlobalOp::create(b, module.getLoc(), ptrType,
                                       /*isConstant=*/false,
                                       LLVM::Linkage::Internal, name,
                                       /*value=*/Attribute());
    // A NULL pointer to start with.
    Block *init = b.createBlock(&slot.getInitializerRegion());
    b.setInsertionPointToStart(init);
    LLVM::ReturnOp::create(
        b, module.getLoc(),
        ValueRange{LLVM::ZeroOp::create(b, module.getLoc(), ptrType)});
    slots.push_back(slot);
    return slot;
  }

  LLVM::LLVMFuncOp getAcquire() {
    if (!acquire)
      acquire = buildAcquire();
    return acquire;
  }
  LLVM::LLVMFuncOp getRelease() {
    if (!release)
      release = buildRelease();
    return release;
  }

  /// The destructor that empties every slot.
  void addFreeAll() {
    if (slots.empty())
      return;
    Location loc = module.getLoc();
    LLVM::LLVMFuncOp fn =
        declare(kWorkspaceFreeAll, LLVM::LLVMFunctionType::get(voidType, {}),
                /*define=*/true);
    b.setInsertionPointToStart(fn.addEntryBlock(b));
    for (LLVM::GlobalOp slot : slots) {
      Value address = LLVM::AddressOfOp::create(b, loc, slot);
      Value block = takeBlock(address, loc);
      freeUnlessNull(block, loc);
    }
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    // Appended to the module's destructors.
    MLIRContext *context = module.getContext();
    SmallVector<Attribute> dtors, priorities, data;
    auto dtorOps = module.getOps<LLVM::GlobalDtorsOp>();
    if (!dtorOps.empty()) {
      LLVM::GlobalDtorsOp existing = *dtorOps.begin();
      llvm::append_range(dtors, existing.getDtors());
      llvm::append_range(priorities, existing.getPriorities());
      llvm::append_range(data, existing.getData());
      existing.erase();
    }
    dtors.push_back(FlatSymbolRefAttr::get(context, kWorkspaceFreeAll));
    priorities.push_back(b.getI32IntegerAttr(65535));
    data.push_back(LLVM::ZeroAttr::get(context));
    b.setInsertionPointToEnd(module.getBody());
    LLVM::GlobalDtorsOp::create(b, loc, b.getArrayAttr(dtors),
                                b.getArrayAttr(priorities),
                                b.getArrayAttr(data));
  }

private:
  LLVM::LLVMFuncOp declare(StringRef name, LLVM::LLVMFunctionType type,
                           bool define) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    b.setInsertionPointToEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
    if (define)
      fn.setLinkage(LLVM::Linkage::Internal);
    return fn;
  }

  LLVM::LLVMFuncOp getMalloc() {
    return declare("malloc", LLVM::LLVMFunctionType::get(ptrType, {i64Type}),
                   /*define=*/false);
  }
  LLVM::LLVMFuncOp getFree() {
    return declare("free", LLVM::LLVMFunctionType::get(voidType, {ptrType}),
                   /*define=*/false);
  }

  /// The slot's block, the slot left NULL.
  Value takeBlock(Value slot, Location loc) {
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    return LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::xchg, slot,
                                     null, LLVM::AtomicOrdering::acq_rel);
  }

  /// free(block) unless block is NULL; continues in a new block.
  void freeUnlessNull(Value block, Location loc) {
    Block *current = b.getInsertionBlock();
    Block *done = current->splitBlock(b.getInsertionPoint());
    Block *freeIt = b.createBlock(done);
    b.setInsertionPointToEnd(current);
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    Value held =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, block, null);
    LLVM::CondBrOp::create(b, loc, held, freeIt, done);
    b.setInsertionPointToEnd(freeIt);
    LLVM::CallOp::create(b, loc, getFree(), ValueRange{block});
    LLVM::BrOp::create(b, loc, ValueRange{}, done);
    b.setInsertionPointToStart(done);
  }

  Value offset(Value pointer, int64_t bytes, Location loc) {
    return LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), pointer,
                               ArrayRef<LLVM::GEPArg>{bytes});
  }

  Value constant(int64_t value, Location loc) {
    return LLVM::ConstantOp::create(b, loc, i64Type,
                                    b.getI64IntegerAttr(value));
  }

  // ptr acquire(ptr slot, i64 bytes):
  //   block = xchg(slot, NULL)
  //   if block != NULL:
  //     if *(i64 *)block >= bytes: return block + header
  //     free(block)
  //   block = malloc(bytes + header)
  //   if block == NULL: return NULL
  //   *(i64 *)block = bytes; return block + header
  LLVM::LLVMFuncOp buildAcquire() {
    Location loc = module.getLoc();
    LLVM::LLVMFuncOp fn = declare(
        kAcquireName, LLVM::LLVMFunctionType::get(ptrType, {ptrType, i64Type}),
        /*define=*/true);
    Block *entry = fn.addEntryBlock(b);
    Value slot = entry->getArgument(0), bytes = entry->getArgument(1);
    Region &body = fn.getBody();
    Block *held = b.createBlock(&body);
    Block *reuse = b.createBlock(&body);
    Block *drop = b.createBlock(&body);
    Block *fresh = b.createBlock(&body);
    Block *record = b.createBlock(&body);
    Block *failed = b.createBlock(&body);

    b.setInsertionPointToStart(entry);
    Value block = takeBlock(slot, loc);
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    Value isHeld =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, block, null);
    LLVM::CondBrOp::create(b, loc, isHeld, held, fresh);

    b.setInsertionPointToStart(held);
    Value capacity = LLVM::LoadOp::create(b, loc, i64Type, block);
    Value fits =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::uge, capacity, bytes);
    LLVM::CondBrOp::create(b, loc, fits, reuse, drop);

    b.setInsertionPointToStart(reuse);
    LLVM::ReturnOp::create(b, loc,
                           ValueRange{offset(block, kHeaderBytes, loc)});

    b.setInsertionPointToStart(drop);
    LLVM::CallOp::create(b, loc, getFree(), ValueRange{block});
    LLVM::BrOp::create(b, loc, ValueRange{}, fresh);

    b.setInsertionPointToStart(fresh);
    Value total =
        LLVM::AddOp::create(b, loc, bytes, constant(kHeaderBytes, loc));
    Value allocated =
        LLVM::CallOp::create(b, loc, getMalloc(), ValueRange{total})
            .getResult();
    Value isNull =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, allocated, null);
    LLVM::CondBrOp::create(b, loc, isNull, failed, record);

    b.setInsertionPointToStart(record);
    LLVM::StoreOp::create(b, loc, bytes, allocated);
    LLVM::ReturnOp::create(b, loc,
                           ValueRange{offset(allocated, kHeaderBytes, loc)});

    b.setInsertionPointToStart(failed);
    LLVM::ReturnOp::create(b, loc, ValueRange{null});
    return fn;
  }

  // void release(ptr slot, ptr pointer):
  //   block = pointer - header
  //   if *(i64 *)block > max: free(block); return
  //   old = xchg(slot, block)
  //   if old != NULL: free(old)
  LLVM::LLVMFuncOp buildRelease() {
    Location loc = module.getLoc();
    LLVM::LLVMFuncOp fn = declare(
        kReleaseName, LLVM::LLVMFunctionType::get(voidType, {ptrType, ptrType}),
        /*define=*/true);
    Block *entry = fn.addEntryBlock(b);
    Value slot = entry->getArgument(0), pointer = entry->getArgument(1);
    Region &body = fn.getBody();
    Block *keep = b.createBlock(&body);
    Block *tooLarge = b.createBlock(&body);

    b.setInsertionPointToStart(entry);
    Value block = offset(pointer, -kHeaderBytes, loc);
    Value capacity = LLVM::LoadOp::create(b, loc, i64Type, block);
    Value isLarge =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ugt, capacity,
                             constant(kMaxKeptBytes, loc));
    LLVM::CondBrOp::create(b, loc, isLarge, tooLarge, keep);

    b.setInsertionPointToStart(tooLarge);
    LLVM::CallOp::create(b, loc, getFree(), ValueRange{block});
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    b.setInsertionPointToStart(keep);
    Value old = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::xchg, slot,
                                          block, LLVM::AtomicOrdering::acq_rel);
    freeUnlessNull(old, loc);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return fn;
  }

  ModuleOp module;
  OpBuilder b;
  Type ptrType, i64Type, voidType;
  LLVM::LLVMFuncOp acquire, release;
  SmallVector<LLVM::GlobalOp> slots;
  int nextSlot = 0;
};

struct AttnCacheWorkspacesPass
    : public mlir::attn::impl::AttnCacheWorkspacesBase<
          AttnCacheWorkspacesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The mallocs directly in a function's body, with their frees.
    llvm::MapVector<LLVM::CallOp, SmallVector<LLVM::CallOp>> cached;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || fn.getName().starts_with("__attn_workspace_"))
        continue;
      fn.walk([&](LLVM::CallOp call) {
        if (!isCallTo(call, "malloc") || call->getParentOp() != fn)
          return;
        AllocationTrace trace(call);
        ArrayRef<LLVM::CallOp> frees = trace.getFrees();
        if (!frees.empty())
          cached[call] = SmallVector<LLVM::CallOp>(frees);
      });
    }
    if (cached.empty())
      return;

    WorkspaceRuntime runtime(module);
    OpBuilder b(&getContext());
    for (auto &[malloc, frees] : cached) {
      LLVM::GlobalOp slot = runtime.addSlot();
      b.setInsertionPoint(malloc);
      Value address = LLVM::AddressOfOp::create(b, malloc.getLoc(), slot);
      auto acquire =
          LLVM::CallOp::create(b, malloc.getLoc(), runtime.getAcquire(),
                               ValueRange{address, malloc.getArgOperands()[0]});
      malloc.getResult().replaceAllUsesWith(acquire.getResult());
      malloc.erase();
      for (LLVM::CallOp free : frees) {
        b.setInsertionPoint(free);
        Value slotAddress = LLVM::AddressOfOp::create(b, free.getLoc(), slot);
        LLVM::CallOp::create(b, free.getLoc(), runtime.getRelease(),
                             ValueRange{slotAddress, free.getArgOperands()[0]});
        free.erase();
      }
    }
    runtime.addFreeAll();
  }
};
} // namespace
