//===- EmulateGPU.cpp - run attn-map-to-gpu's launches on the host --------===//
//
// A test device for the GPU mapping: the kernels attn-map-to-gpu builds
// synchronise only at barriers between loops strided by the thread id, so
// running, for each such loop, every thread's share one after the other
// computes exactly what the GPU does. The lowering is then checked against
// the reference evaluator on any machine.
//
// Kernels with warp instructions (tensor cores) cannot be split that way: a
// lane's registers live across each mma.sync, ldmatrix and shuffle. Their
// blocks run as OpenMP parallel regions with one host thread per GPU thread,
// and each warp instruction is a call into the warp runtime, which executes
// it by its PTX definition once all 32 lanes have reached it.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNEMULATEGPU
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {

bool isConstantOne(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantIndexOp>();
  return constant && constant.value() == 1;
}

/// Moves \p op into a new loop over the threads `0 .. threads` and returns
/// the loop's induction variable.
Value wrapInThreadLoop(RewriterBase &rewriter, Operation *op, Value threads) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ForOp::create(rewriter, loc, zero, threads, one);
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
  return loop.getInductionVar();
}

/// Loops over the blocks of \p grid (z outermost, from \p zero in steps of
/// \p one) at the insertion point, which it leaves inside the innermost
/// loop; returns the block ids x, y, z.
std::array<Value, 3> createBlockLoops(RewriterBase &rewriter, Location loc,
                                      gpu::KernelDim3 grid, Value zero,
                                      Value one) {
  std::array<Value, 3> blockIds;
  int dim = 2;
  for (Value size : {grid.z, grid.y, grid.x}) {
    auto loop = scf::ForOp::create(rewriter, loc, zero, size, one);
    blockIds[dim--] = loop.getInductionVar();
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  return blockIds;
}

/// Moves the body of \p launch before \p before, with \p blockIds and the
/// thread id \p thread (y and z: 0) for its ids and its workgroup
/// attributions replaced by the first \p buffers; then frees \p buffers
/// after the launch and erases it.
void inlineLaunch(RewriterBase &rewriter, gpu::LaunchOp launch,
                  Operation *before, std::array<Value, 3> blockIds,
                  Value thread, Value zero, ArrayRef<Value> buffers) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Block &body = launch.getBody().front();
  SmallVector<Value> replacements = {
      blockIds[0], blockIds[1], blockIds[2], thread,  zero,    zero,
      grid.x,      grid.y,      grid.z,      block.x, block.y, block.z};
  llvm::append_range(replacements,
                     buffers.take_front(launch.getNumWorkgroupAttributions()));
  rewriter.eraseOp(body.getTerminator());
  rewriter.inlineBlockBefore(&body, before, replacements);
  rewriter.setInsertionPointAfter(launch);
  for (Value buffer : buffers)
    memref::DeallocOp::create(rewriter, launch.getLoc(), buffer);
  rewriter.eraseOp(launch);
}

bool isWarpInstruction(Operation *op) {
  return isa<NVVM::NVVMDialect>(op->getDialect());
}

/// Declares `func.func private @name(inputs) -> results` in \p module once.
func::FuncOp declareFunction(ModuleOp module, StringRef name, TypeRange inputs,
                             TypeRange results) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name, builder.getFunctionType(inputs, results));
  function.setPrivate();
  return function;
}

/// Replaces the warp instructions of one emulated block (run by the thread
/// \p thread, an i32) by calls into the warp runtime; \p scratch is an
/// i32 x 4 stack slot of the thread for the results.
class WarpInstructionLowering {
public:
  WarpInstructionLowering(RewriterBase &rewriter, ModuleOp module, Value thread,
                          Value scratch)
      : rewriter(rewriter), module(module), thread(thread), scratch(scratch) {}

  LogicalResult lower(Operation *op) {
    rewriter.setInsertionPoint(op);
    if (auto mma = dyn_cast<NVVM::MmaOp>(op))
      return lowerMma(mma);
    if (auto load = dyn_cast<NVVM::LdMatrixOp>(op))
      return lowerLdmatrix(load);
    if (auto shuffle = dyn_cast<NVVM::ShflOp>(op))
      return lowerShuffle(shuffle);
    if (auto copy = dyn_cast<NVVM::CpAsyncOp>(op))
      return lowerCopy(copy);
    if (auto convert = dyn_cast<NVVM::ConvertFloatToTF32Op>(op))
      return lowerTf32Conversion(convert);
    if (isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp>(op)) {
      // The copies are complete when made.
      rewriter.eraseOp(op);
      return success();
    }
    return attn::emitOpErrorInInput(op, "is not a warp instruction that "
                                        "attn-emulate-gpu can emulate");
  }

private:
  Type i32() { return rewriter.getI32Type(); }
  Type f32() { return rewriter.getF32Type(); }
  Type pointer() { return LLVM::LLVMPointerType::get(rewriter.getContext()); }

  Value constantI32(Location loc, int64_t value) {
    return arith::ConstantIntOp::create(rewriter, loc, value, 32);
  }

  /// \p value (i32, f32 or a 2-element 16-bit vector) as the i32 register
  /// that holds it.
  Value asRegister(Location loc, Value value) {
    if (value.getType() == i32())
      return value;
    return LLVM::BitcastOp::create(rewriter, loc, i32(), value);
  }

  /// The generic host pointer of a shared or global one.
  Value generic(Location loc, Value value) {
    if (value.getType() == pointer())
      return value;
    return LLVM::AddrSpaceCastOp::create(rewriter, loc, pointer(), value);
  }

  func::CallOp call(Location loc, StringRef name, ValueRange operands,
                    TypeRange results = {}) {
    func::FuncOp callee =
        declareFunction(module, name, operands.getTypes(), results);
    return func::CallOp::create(rewriter, loc, callee, operands);
  }

  /// Element \p index of the scratch slot, as \p type.
  Value loadScratch(Location loc, Type type, int64_t index) {
    Value address = LLVM::GEPOp::create(
        rewriter, loc, pointer(), i32(), scratch,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
    return LLVM::LoadOp::create(rewriter, loc, type, address);
  }

  /// The result of \p op from the scratch slot: one register, or a struct
  /// of them.
  void replaceFromScratch(Operation *op, Type elementType, int64_t count) {
    Location loc = op->getLoc();
    Type type = op->getResult(0).getType();
    if (!isa<LLVM::LLVMStructType>(type)) {
      rewriter.replaceOp(op, loadScratch(loc, type, 0));
      return;
    }
    Value result = LLVM::PoisonOp::create(rewriter, loc, type);
    for (int64_t i = 0; i < count; ++i)
      result = LLVM::InsertValueOp::create(rewriter, loc, result,
                                           loadScratch(loc, elementType, i),
                                           ArrayRef<int64_t>{i});
    rewriter.replaceOp(op, result);
  }

  LogicalResult lowerMma(NVVM::MmaOp mma) {
    Location loc = mma.getLoc();
    NVVM::MMAShapeAttr shape = mma.getShapeAttr();
    auto structType = dyn_cast<LLVM::LLVMStructType>(mma.getType());
    bool f32Accumulator =
        mma.getOperandC().size() == 4 &&
        llvm::all_of(mma.getOperandC().getTypes(),
                     [&](Type type) { return type == f32(); }) &&
        structType && structType.getBody().size() == 4 &&
        llvm::all_of(structType.getBody(),
                     [&](Type type) { return type == f32(); });
    if (mma.getLayoutA() != NVVM::MMALayout::row ||
        mma.getLayoutB() != NVVM::MMALayout::col || !f32Accumulator ||
        mma.getOperandA().size() != 4 || mma.getOperandB().size() != 2)
      return attn::emitOpErrorInInput(
          mma, "is not an mma.sync attn-emulate-gpu can emulate (row.col, "
               "4 A and 2 B registers, f32 accumulators)");
    std::optional<NVVM::MMATypes> type = mma.getMultiplicandAPtxType();
    Type aType = mma.getOperandA().front().getType();
    bool f16 = isa<VectorType>(aType) &&
               cast<VectorType>(aType).getElementType().isF16();
    SmallVector<Value> operands = {thread};
    StringRef name;
    if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 &&
        (f16 || (aType == i32() && (!type || *type == NVVM::MMATypes::bf16)))) {
      name = "attn_emu_mma_m16n8k16";
      operands.push_back(constantI32(loc, f16 ? 0 : 1));
    } else if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 8 &&
               aType == i32() && type && *type == NVVM::MMATypes::tf32) {
      name = "attn_emu_mma_m16n8k8_tf32";
    } else {
      return attn::emitOpErrorInInput(
          mma, "is not an mma.sync attn-emulate-gpu can emulate "
               "(m16n8k16 f16 / bf16 or m16n8k8 tf32)");
    }
    for (Value a : mma.getOperandA())
      operands.push_back(asRegister(loc, a));
    for (Value b : mma.getOperandB())
      operands.push_back(asRegister(loc, b));
    llvm::append_range(operands, mma.getOperandC());
    operands.push_back(scratch);
    call(loc, name, operands);
    replaceFromScratch(mma, f32(), 4);
    return success();
  }

  LogicalResult lowerLdmatrix(NVVM::LdMatrixOp load) {
    Location loc = load.getLoc();
    int64_t count = load.getNum();
    if (load.getShape().getM() != 8 || load.getShape().getN() != 8 ||
        load.getEltType() != NVVM::LdStMatrixEltType::B16)
      return attn::emitOpErrorInInput(
          load, "is not an ldmatrix attn-emulate-gpu can emulate (m8n8 b16)");
    bool transpose = load.getLayout() == NVVM::MMALayout::col;
    call(loc, "attn_emu_ldmatrix",
         {thread, constantI32(loc, count), constantI32(loc, transpose),
          generic(loc, load.getPtr()), scratch});
    replaceFromScratch(load, i32(), count);
    return success();
  }

  LogicalResult lowerShuffle(NVVM::ShflOp shuffle) {
    Location loc = shuffle.getLoc();
    int64_t mode = 0;
    switch (shuffle.getKind()) {
    case NVVM::ShflKind::up:
      mode = 0;
      break;
    case NVVM::ShflKind::down:
      mode = 1;
      break;
    case NVVM::ShflKind::bfly:
      mode = 2;
      break;
    case NVVM::ShflKind::idx:
      mode = 3;
      break;
    }
    Value value = shuffle.getVal();
    Value result =
        call(loc, "attn_emu_shfl",
             {thread, constantI32(loc, mode), shuffle.getThreadMask(),
              asRegister(loc, value), shuffle.getOffset(),
              shuffle.getMaskAndClamp(), scratch},
             {i32()})
            .getResult(0);
    if (value.getType() != i32())
      result = LLVM::BitcastOp::create(rewriter, loc, value.getType(), result);
    if (!shuffle.getReturnValueAndIsValid()) {
      rewriter.replaceOp(shuffle, result);
      return success();
    }
    Value valid =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                              loadScratch(loc, i32(), 0), constantI32(loc, 0));
    Type type = shuffle.getType();
    Value pair = LLVM::PoisonOp::create(rewriter, loc, type);
    pair = LLVM::InsertValueOp::create(rewriter, loc, pair, result,
                                       ArrayRef<int64_t>{0});
    pair = LLVM::InsertValueOp::create(rewriter, loc, pair, valid,
                                       ArrayRef<int64_t>{1});
    rewriter.replaceOp(shuffle, pair);
    return success();
  }

  LogicalResult lowerTf32Conversion(NVVM::ConvertFloatToTF32Op convert) {
    if (convert.getRnd() != NVVM::FPRoundingMode::RNA ||
        convert.getSat() != NVVM::SaturationMode::NONE || convert.getRelu())
      return attn::emitOpErrorInInput(
          convert, "is not a conversion attn-emulate-gpu can emulate "
                   "(cvt.rna.tf32.f32 without saturation or relu)");
    rewriter.replaceOp(convert, call(convert.getLoc(), "attn_emu_cvt_rna_tf32",
                                     {convert.getSrc()}, {i32()})
                                    .getResults());
    return success();
  }

  LogicalResult lowerCopy(NVVM::CpAsyncOp copy) {
    Location loc = copy.getLoc();
    Value bytes = constantI32(loc, copy.getSize());
    Value source = copy.getCpSize() ? copy.getCpSize() : bytes;
    call(loc, "attn_emu_cp_async",
         {generic(loc, copy.getDst()), generic(loc, copy.getSrc()), bytes,
          source});
    rewriter.eraseOp(copy);
    return success();
  }

  RewriterBase &rewriter;
  ModuleOp module;
  Value thread;
  Value scratch;
};

struct AttnEmulateGPU : public attn::impl::AttnEmulateGPUBase<AttnEmulateGPU> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(rewriter, launch)))
        return signalPassFailure();

    SmallVector<Operation *> memoryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp>(op))
        memoryOps.push_back(op);
    });
    for (Operation *op : memoryOps) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        if (alloc.getAsyncToken())
          return (void)attn::emitOpErrorInInput(alloc,
                                                "async allocations are not "
                                                "emulated"),
                 signalPassFailure();
        rewriter.replaceOpWithNewOp<memref::AllocOp>(
            alloc, alloc.getMemref().getType(), alloc.getDynamicSizes());
      } else {
        auto dealloc = cast<gpu::DeallocOp>(op);
        rewriter.replaceOpWithNewOp<memref::DeallocOp>(dealloc,
                                                       dealloc.getMemref());
      }
    }
  }

  LogicalResult emulate(RewriterBase &rewriter, gpu::LaunchOp launch) {
    Location loc = launch.getLoc();
    if (launch.getAsyncToken() || !launch.getBody().hasOneBlock() ||
        launch.getNumPrivateAttributions() != 0)
      return attn::emitOpErrorInInput(
          launch, "is not a launch made by attn-map-to-gpu");
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    if (!isConstantOne(block.y) || !isConstantOne(block.z))
      return attn::emitOpErrorInInput(launch,
                                      "uses more than one thread dimension");
    Block &body = launch.getBody().front();

    rewriter.setInsertionPoint(launch);
    SmallVector<Value> buffers;
    for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(attribution.getType());
      auto hostType = MemRefType::get(type.getShape(), type.getElementType(),
                                      type.getLayout());
      Value buffer = memref::AllocOp::create(rewriter, loc, hostType);
      for (Operation *user : llvm::make_early_inc_range(attribution.getUsers())) {
        auto cast = dyn_cast<memref::MemorySpaceCastOp>(user);
        if (!cast || cast.getType() != hostType)
          return attn::emitOpErrorInInput(
              user, "uses workgroup memory other than "
                    "through a cast to the generic space");
        rewriter.replaceOp(cast, buffer);
      }
      buffers.push_back(buffer);
    }

    // Dynamic shared memory: a host buffer of the launch's size, viewed as
    // the kernel views it.
    SmallVector<gpu::DynamicSharedMemoryOp> dynamicMemories;
    body.walk([&](gpu::DynamicSharedMemoryOp op) {
      dynamicMemories.push_back(op);
    });
    for (gpu::DynamicSharedMemoryOp memory : dynamicMemories) {
      if (!launch.getDynamicSharedMemorySize())
        return attn::emitOpErrorInInput(memory,
                                        "in a launch without a dynamic shared "
                                        "memory size");
      rewriter.setInsertionPoint(launch);
      Value bytes = arith::IndexCastUIOp::create(
          rewriter, loc, rewriter.getIndexType(),
          launch.getDynamicSharedMemorySize());
      Value buffer = memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getIntegerType(8)),
          ValueRange{bytes});
      buffers.push_back(buffer);
      for (Operation *user :
           llvm::make_early_inc_range(memory.getResult().getUsers())) {
        auto view = dyn_cast<memref::ViewOp>(user);
        if (!view)
          return attn::emitOpErrorInInput(
              user, "uses dynamic shared memory other than "
                    "through memref.view");
        MemRefType type = view.getType();
        auto hostType = MemRefType::get(type.getShape(), type.getElementType(),
                                        type.getLayout());
        rewriter.setInsertionPoint(view);
        Value hostView = memref::ViewOp::create(
            rewriter, view.getLoc(), hostType, buffer, view.getByteShift(),
            view.getSizes());
        for (Operation *viewUser :
             llvm::make_early_inc_range(view.getResult().getUsers())) {
          auto cast = dyn_cast<memref::MemorySpaceCastOp>(viewUser);
          if (!cast || cast.getType() != hostType)
            return attn::emitOpErrorInInput(
                viewUser,
                "uses dynamic shared memory other than through a cast to "
                "the generic space");
          rewriter.replaceOp(cast, hostView);
        }
        rewriter.eraseOp(view);
      }
      rewriter.eraseOp(memory);
    }

    bool warpLevel = false;
    body.walk([&](Operation *op) { warpLevel |= isWarpInstruction(op); });
    if (warpLevel)
      return emulateWithHostThreads(rewriter, launch, buffers);

    // Each thread's share of the work: the loops strided by the thread id
    // where there are barriers, else the whole body.
    Value thread = launch.getThreadIds().x;
    bool barriers = false;
    body.walk([&](gpu::BarrierOp) { barriers = true; });
    rewriter.setInsertionPoint(launch);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value wholeBodyThread;
    if (barriers) {
      for (OpOperand &use : llvm::make_early_inc_range(thread.getUses())) {
        Operation *user = use.getOwner();
        auto loop = dyn_cast<scf::ForOp>(user);
        if (loop && use.getOperandNumber() == 0) {
          Value iv = wrapInThreadLoop(rewriter, loop, block.x);
          loop.getLowerBoundMutable().assign(iv);
          continue;
        }
        auto compare = dyn_cast<arith::CmpIOp>(user);
        auto other = compare ? compare->getOperand(1 - use.getOperandNumber())
                                   .getDefiningOp<arith::ConstantIndexOp>()
                             : arith::ConstantIndexOp();
        if (compare && compare.getPredicate() == arith::CmpIPredicate::eq &&
            other && other.value() == 0) {
          // `thread == 0`: the work of thread 0, done once.
          use.set(zero);
          continue;
        }
        return attn::emitOpErrorInInput(user,
                                        "uses the thread id in a way "
                                        "attn-emulate-gpu cannot emulate");
      }
      SmallVector<Operation *> syncs;
      body.walk([&](gpu::BarrierOp barrier) { syncs.push_back(barrier); });
      for (Operation *barrier : syncs)
        rewriter.eraseOp(barrier);
    }

    rewriter.setInsertionPoint(launch);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    std::array<Value, 3> blockIds =
        createBlockLoops(rewriter, loc, grid, zero, one);
    if (!barriers) {
      auto loop = scf::ForOp::create(rewriter, loc, zero, block.x, one);
      wholeBodyThread = loop.getInductionVar();
      rewriter.setInsertionPoint(loop.getBody()->getTerminator());
    }
    inlineLaunch(rewriter, launch, &*rewriter.getInsertionPoint(), blockIds,
                 barriers ? zero : wholeBodyThread, zero, buffers);
    return success();
  }

  /// Each block of \p launch as an OpenMP parallel region of one host
  /// thread per GPU thread, its warp instructions calls into the warp
  /// runtime (the workgroup \p buffers are host buffers already).
  LogicalResult emulateWithHostThreads(RewriterBase &rewriter,
                                       gpu::LaunchOp launch,
                                       ArrayRef<Value> buffers) {
    Location loc = launch.getLoc();
    auto module = launch->getParentOfType<ModuleOp>();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Type i32 = rewriter.getI32Type();

    rewriter.setInsertionPoint(launch);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    std::array<Value, 3> blockIds = createBlockLoops(
        rewriter, loc, launch.getGridSizeOperandValues(), zero, one);
    Value threads =
        arith::IndexCastOp::create(rewriter, loc, i32, block.x).getResult();
    func::FuncOp begin =
        declareFunction(module, "attn_emu_block_begin", {i32}, {});
    func::FuncOp end = declareFunction(module, "attn_emu_block_end", {}, {i32});
    func::FuncOp threadNumber =
        declareFunction(module, "omp_get_thread_num", {}, {i32});
    func::CallOp::create(rewriter, loc, begin, threads);
    omp::ParallelOperands clauses;
    clauses.numThreads = threads;
    auto parallel = omp::ParallelOp::create(rewriter, loc, clauses);
    func::CallOp::create(rewriter, loc, end, ValueRange{});

    Block *region = rewriter.createBlock(&parallel.getRegion());
    rewriter.setInsertionPointToStart(region);
    auto terminator = omp::TerminatorOp::create(rewriter, loc);
    rewriter.setInsertionPoint(terminator);
    Value thread =
        func::CallOp::create(rewriter, loc, threadNumber, ValueRange{})
            .getResult(0);
    Value threadIndex = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), thread);
    // The thread's result registers, allocated once (an alloca inside the
    // kernel's loops would grow the stack at every warp instruction).
    Value four = arith::ConstantIntOp::create(rewriter, loc, 4, 32);
    Value scratch = LLVM::AllocaOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext()), i32,
        four);

    inlineLaunch(rewriter, launch, terminator, blockIds, threadIndex, zero,
                 buffers);

    SmallVector<Operation *> rewritten;
    region->walk([&](Operation *op) {
      if (isWarpInstruction(op) || isa<gpu::BarrierOp>(op))
        rewritten.push_back(op);
    });
    WarpInstructionLowering lowering(rewriter, module, thread, scratch);
    for (Operation *op : rewritten) {
      if (isa<gpu::BarrierOp>(op)) {
        rewriter.setInsertionPoint(op);
        rewriter.replaceOpWithNewOp<omp::BarrierOp>(op);
        continue;
      }
      if (failed(lowering.lower(op)))
        return failure();
    }
    WalkResult unknown = region->walk([&](Operation *op) {
      if (op->getDialect() && isa<gpu::GPUDialect>(op->getDialect()))
        return attn::emitOpErrorInInput(op, "cannot be emulated in a block "
                                            "with warp instructions"),
               WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(unknown.wasInterrupted());
  }
};

} // namespace
