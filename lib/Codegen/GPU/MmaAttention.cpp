//===- MmaAttention.cpp - softmax terms on tensor cores (mma.sync) --------===//
//
// A softmax term over bf16 or f16 Q, K, V (or f32 ones under precision tf32,
// on mma.sync m16n8k8 with tf32 operands) becomes one gpu.launch in the
// FlashAttention-2 form, written with the warp instructions themselves
// (upstream's vector-to-mma conversion gives up on anything between the two
// products, see shared/gpu-recipes):
//
//   grid (⌈N/64⌉, B·H), 4 warps per block, 16 query rows per warp;
//   Q's fragments loaded once into registers;
//   per key tile of 64 (32 for D > 64): K and V staged by 16-byte cp.async into
//   padded shared tiles, double-buffered (tile kt + 1 is copied while tile kt
//   is used), S = Q Kᵀ on mma.sync.m16n8k16 (K fragments by
//   ldmatrix), scale and mask, the online softmax on the accumulator fragments
//   (per thread, then 4-lane xor shuffles), P rounded to the input type and
//   used in registers as the next A operand, O += P V (V by ldmatrix .trans);
//   causal and window blocks visit only the key tiles their rows see;
//   softcap, ALiBi, key and query lengths, and sinks (the sink's logit in
//   each row's max and sum);
//   D > 128: Q in shared memory, two warps per 16 rows (half of O each).
//
// Fragment layouts (PTX ISA, mma.m16n8k16, g = lane / 4, t = lane % 4):
// A (row-major 16x16) registers hold (g, 2t), (g + 8, 2t), (g, 2t + 8),
// (g + 8, 2t + 8), each with the next column; B (16x8, k x n) registers
// (2t, g) and (2t + 8, g), each with the next k; C/D (g, 2t), (g, 2t + 1),
// (g + 8, 2t), (g + 8, 2t + 1). m16n8k8 tf32: A (g, t), (g + 8, t),
// (g, t + 4), (g + 8, t + 4); B (t, g), (t + 4, g); C/D as above. The
// emulation (attn-emulate-gpu) executes
// these instructions by definitions written separately from this file.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/Diagnostics.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNMMAATTENTION
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kWarps = 4;
constexpr int64_t kWarpRows = 16;
constexpr int64_t kQueryTile = kWarps * kWarpRows;
constexpr int64_t kThreads = kWarps * 32;
/// Bytes of padding after each shared row. bf16/f16: the 8 rows an
/// ldmatrix reads then start 16 bytes apart modulo 128, in 8 different bank
/// groups. f32 (rows of 4-byte words, stride ≡ 4 mod 32 words): the K reads
/// (key g, dim t) fall in banks 4g + t, the V reads (key 2t, dim g) in
/// banks 8t + g, 32 different banks for the 32 lanes.
constexpr int64_t kRowPaddingBytes = 16;

/// What the tensor cores multiply: the input type, or f32 rounded to tf32.
enum class Operands { F16, BF16, TF32 };

/// Why \p term cannot run on the tensor cores, or an empty string.
std::string unsupportedReason(TermOp term, GpuPrecision precision) {
  auto q = cast<RankedTensorType>(term.getQuery().getType());
  auto k = cast<RankedTensorType>(term.getKey().getType());
  auto v = cast<RankedTensorType>(term.getValue().getType());
  auto result = cast<RankedTensorType>(term.getResult().getType());
  Type element = q.getElementType();
  bool tf32 = element.isF32() && precision == GpuPrecision::TF32;
  if (!element.isBF16() && !element.isF16() && !tf32)
    return precision == GpuPrecision::TF32
               ? "its inputs are not bf16, f16 or f32"
               : "its inputs are not bf16 or f16 (f32 inputs need "
                 "precision tf32)";
  if (term.getScore() != Score::Softmax)
    return "it is not a softmax term";
  MaskKind mask = term.getMaskKind();
  if (mask != MaskKind::None && mask != MaskKind::Causal &&
      mask != MaskKind::Window)
    return "its mask is not none, causal or a window";
  if (term.getEffectiveNormalizer() != Normalizer::Rows ||
      term.getEffectiveEps() != 0)
    return "its normaliser is not rows with eps 0";
  if (term.isProjected() || term.hasDecay() || term.hasState())
    return "it projects, has decay or state";
  // B, N and M may be dynamic; the heads and head dims fix the kernel.
  for (RankedTensorType type : {q, k, v, result})
    if (type.isDynamicDim(1) || type.isDynamicDim(3))
      return "its head counts or head dims are not static";
  int64_t d = q.getDimSize(3), e = v.getDimSize(3);
  // tf32 products are 8 deep; bf16/f16 ones 16.
  int64_t depth = tf32 ? 8 : 16;
  int64_t widest = tf32 ? 128 : 256;
  if (d != e || d % depth != 0 || d > widest)
    return "its head dims are not equal multiples of " + std::to_string(depth) +
           " up to " + std::to_string(widest);
  if (!term.getEffectiveScale())
    return "its scale is unknown";
  return "";
}

/// Builds the kernel of one term.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &builder, Location loc, Type element)
      : b(builder), loc(loc), element(element),
        operands(element.isBF16()  ? Operands::BF16
                 : element.isF16() ? Operands::F16
                                   : Operands::TF32) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value i32(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }
  Value f32(double value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(static_cast<float>(value)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value addF(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mulF(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value maxF(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value lessThan(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }

  /// The type of an mma A or B register: i32 holding bf16x2 or one tf32,
  /// or f16x2.
  Type registerType() {
    return operands == Operands::F16
               ? Type(VectorType::get({2}, b.getF16Type()))
               : Type(b.getI32Type());
  }
  Type pointerType(unsigned space) {
    return LLVM::LLVMPointerType::get(b.getContext(), space);
  }

  /// The address of element \p offset (elements) of \p buffer, whose layout
  /// is the identity, in address space \p space.
  Value address(Value buffer, Value offset, unsigned space) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    auto type = cast<MemRefType>(buffer.getType());
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    Value at = add(base, mul(offset, index(bytes)));
    Value bits = arith::IndexCastOp::create(b, loc, b.getI64Type(), at);
    Value generic = LLVM::IntToPtrOp::create(b, loc, pointerType(0), bits);
    if (space == 0)
      return generic;
    return LLVM::AddrSpaceCastOp::create(b, loc, pointerType(space), generic);
  }

  /// \p pointer advanced by \p elements elements (a constant: the
  /// instruction's immediate offset, so that the addresses of a tile's
  /// fragments share one register instead of one each).
  Value advance(Value pointer, int64_t elements) {
    if (elements == 0)
      return pointer;
    return LLVM::GEPOp::create(
        b, loc, pointer.getType(), element, pointer,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(elements)});
  }

  /// Two adjacent elements of row \p row (zero when row >= rows) of the
  /// rank-4 \p buffer at [batch, head, row, column], as an mma register.
  Value loadPair(Value buffer, Value batch, Value head, Value row, Value rows,
                 Value column) {
    Value inside = lessThan(row, rows);
    Value clamped = select(inside, row, index(0));
    auto pairType = VectorType::get({2}, element);
    Value pair = vector::LoadOp::create(
        b, loc, pairType, buffer, ValueRange{batch, head, clamped, column});
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(pairType, b.getZeroAttr(element)));
    pair = select(inside, pair, zero);
    return toRegister(pair);
  }

  /// The element at [batch, head, row, column] of the rank-4 f32 \p buffer
  /// (zero when row >= rows) as a tf32 register.
  Value loadTf32(Value buffer, Value batch, Value head, Value row, Value rows,
                 Value column) {
    Value inside = lessThan(row, rows);
    Value clamped = select(inside, row, index(0));
    Value value = memref::LoadOp::create(
        b, loc, buffer, ValueRange{batch, head, clamped, column});
    return tf32(select(inside, value, f32(0)));
  }

  /// \p value (f32) rounded to tf32, to the nearest with ties away from
  /// zero (cvt.rna.tf32.f32), as an mma register.
  Value tf32(Value value) {
    return NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), value,
                                              NVVM::FPRoundingMode::RNA);
  }

  /// \p value (a vector<2 x element>, or an i32 that ldmatrix gives) as an
  /// mma register: the same 32 bits, in registerType().
  Value toRegister(Value value) {
    if (value.getType() == registerType())
      return value;
    return LLVM::BitcastOp::create(b, loc, registerType(), value);
  }

  /// Two f32 values rounded to the input type, as one mma register (the
  /// first in the low half).
  Value packPair(Value low, Value high) {
    auto pairType = VectorType::get({2}, element);
    Value lowNarrow = arith::TruncFOp::create(b, loc, element, low);
    Value highNarrow = arith::TruncFOp::create(b, loc, element, high);
    Value pair = vector::FromElementsOp::create(
        b, loc, pairType, ValueRange{lowNarrow, highNarrow});
    return toRegister(pair);
  }

  /// D = A B + C on mma.sync.m16n8k16 (bf16, f16) or m16n8k8 (tf32) with
  /// f32 accumulators.
  SmallVector<Value, 4> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                            ArrayRef<Value> c) {
    Type f32Type = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32Type, f32Type, f32Type, f32Type});
    NVVM::MMATypes type = operands == Operands::BF16  ? NVVM::MMATypes::bf16
                          : operands == Operands::F16 ? NVVM::MMATypes::f16
                                                      : NVVM::MMATypes::tf32;
    int64_t depth = operands == Operands::TF32 ? 8 : 16;
    auto op = NVVM::MmaOp::create(
        b, loc, resultType, a, bRegs, c, ArrayRef<int64_t>{16, 8, depth},
        std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value, 4> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(
          LLVM::ExtractValueOp::create(b, loc, op, ArrayRef<int64_t>{i}));
    return d;
  }

  /// ldmatrix.x4 (.trans with \p transpose) from shared row address \p row.
  SmallVector<Value, 4> ldmatrix4(Value row, bool transpose) {
    Type i32Type = b.getI32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {i32Type, i32Type, i32Type, i32Type});
    auto op = NVVM::LdMatrixOp::create(
        b, loc, resultType, row, 4,
        transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    SmallVector<Value, 4> registers;
    for (int64_t i = 0; i < 4; ++i) {
      Value word =
          LLVM::ExtractValueOp::create(b, loc, op, ArrayRef<int64_t>{i});
      registers.push_back(toRegister(word));
    }
    return registers;
  }

  /// \p value combined with the other lanes of its row group (xor 1, 2).
  Value rowReduce(Value value, bool maximum) {
    Value all = i32(-1);
    Value clamp = i32(31);
    for (int64_t offset : {1, 2}) {
      Value other =
          NVVM::ShflOp::create(b, loc, b.getF32Type(), all, value, i32(offset),
                               clamp, NVVM::ShflKind::bfly, UnitAttr());
      value = maximum ? maxF(value, other) : addF(value, other);
    }
    return value;
  }

  OpBuilder &b;
  Location loc;
  Type element;
  Operands operands;
};

/// Replaces \p term by a launch of the tensor-core kernel.
LogicalResult convertTerm(RewriterBase &rewriter, TermOp term) {
  Location loc = term.getLoc();
  auto qType = cast<RankedTensorType>(term.getQuery().getType());
  auto kType = cast<RankedTensorType>(term.getKey().getType());
  auto resultType = cast<RankedTensorType>(term.getResult().getType());
  const int64_t heads = qType.getDimSize(1), dim = qType.getDimSize(3);
  const int64_t keyHeads = kType.getDimSize(1);
  const int64_t group = heads / keyHeads;
  // Query i (position p_i = i + M - N) sees keys p_i - left <= j <=
  // p_i + right: causal is (∞, 0); without a mask every key.
  const MaskKind maskKind = term.getMaskKind();
  const bool limited =
      maskKind == MaskKind::Causal || maskKind == MaskKind::Window;
  const bool windowed = maskKind == MaskKind::Window;
  // Sequences hold fewer than 2^61 rows, so wider windows see as much.
  constexpr int64_t kWidest = int64_t(1) << 61;
  const int64_t left =
      windowed ? std::min(term.getMask()->getLeft(), kWidest) : 0;
  const int64_t right =
      windowed ? std::min(term.getMask()->getRight(), kWidest) : 0;
  std::optional<double> softcap;
  if (std::optional<APFloat> cap = term.getSoftcap())
    softcap = cap->convertToDouble();
  const double scale = *term.getEffectiveScale();
  Type element = qType.getElementType();
  Type f32Type = rewriter.getF32Type();
  const bool tf32 = element.isF32();
  const int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  // Heads wider than 128 (bf16/f16): Q's fragments (dim / 4 registers) do
  // not fit beside the O accumulators (dim / 2); Q waits in shared memory
  // and each step's fragment is loaded by ldmatrix, as FlashAttention-2 does.
  const bool queryInShared = dim > 128;
  // Then also the O accumulators (dim / 2) leave too little room within
  // ptxas's 255 registers: two warps share each 16 rows, each accumulating
  // half of O's columns (both compute the rows' scores).
  const int64_t valueSplit = queryInShared ? 2 : 1;
  const int64_t threads = kThreads * valueSplit;
  // Keys per step. bf16/f16: 64, or 32 for heads wider than 64, whose O
  // accumulators (dim / 2 registers per thread) and Q fragments (dim / 4)
  // leave no room for 64 keys' scores (32 registers) within ptxas's 255.
  // f32: half as many, so that the two buffers of K and V (rows of twice the
  // bytes) stay within 48 KiB of static shared memory, and the Q fragments
  // (dim / 2 registers) leave room for the rest.
  const int64_t keyTile = (dim > 64 ? 32 : 64) / (tf32 ? 2 : 1);

  rewriter.setInsertionPoint(term);
  auto buffer = [&](Value tensor) -> Value {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        tensor, /*read_only=*/true);
  };
  Value q = buffer(term.getQuery());
  Value k = buffer(term.getKey());
  Value v = buffer(term.getValue());
  Value sinks = term.getSinks() ? buffer(term.getSinks()) : Value();
  Value slopes =
      term.getAlibiSlopes() ? buffer(term.getAlibiSlopes()) : Value();
  Value keyLengths =
      term.getKeyLengths() ? buffer(term.getKeyLengths()) : Value();
  Value queryLengths =
      term.getQueryLengths() ? buffer(term.getQueryLengths()) : Value();
  KernelBuilder kb(rewriter, loc, element);
  // B, N and M (constants where static).
  auto size = [&](Value buffer, int64_t index) -> Value {
    return getValueOrCreateConstantIndexOp(
        rewriter, loc, memref::getMixedSize(rewriter, loc, buffer, index));
  };
  Value batchCount = size(q, 0);
  Value queryCount = size(q, 2);
  Value keyCount = size(k, 2);
  // Query i is at position p_i = i + M - N.
  Value keyOffset = arith::SubIOp::create(rewriter, loc, keyCount, queryCount);
  // The output [B, H, N, E] and the log-sum-exp of every row, lse_i = m_i +
  // log z_i ([B, H, N]): their dynamic sizes are B and N.
  auto allocate = [&](ArrayRef<int64_t> shape, Type elementType) -> Value {
    SmallVector<Value> dynamicSizes;
    for (auto [i, extent] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(extent))
        dynamicSizes.push_back(i == 0 ? batchCount : queryCount);
    return memref::AllocOp::create(
        rewriter, loc, MemRefType::get(shape, elementType), dynamicSizes);
  };
  Value out = allocate(resultType.getShape(), resultType.getElementType());
  Value lse;
  if (Value lseResult = term.getLse())
    lse = allocate(cast<RankedTensorType>(lseResult.getType()).getShape(),
                   f32Type);

  auto workgroup = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                              gpu::AddressSpace::Workgroup);
  const int64_t rowStride = dim + kRowPaddingBytes / elementBytes;
  // Shared tiles: K and V (two buffers each), and Q when it waits there.
  SmallVector<SmallVector<int64_t, 3>> tileShapes = {{2, keyTile, rowStride},
                                                     {2, keyTile, rowStride}};
  if (queryInShared)
    tileShapes.push_back({kQueryTile, rowStride});
  // Beyond the 48 KiB a kernel may declare statically, the tiles are views
  // of dynamic shared memory (the runtime opts the kernel in).
  constexpr int64_t kStaticSharedBytes = 48 * 1024;
  constexpr int64_t kTileAlignment = 128;
  SmallVector<int64_t> tileOffsets;
  int64_t sharedBytes = 0;
  for (ArrayRef<int64_t> shape : tileShapes) {
    sharedBytes = llvm::alignTo(sharedBytes, kTileAlignment);
    tileOffsets.push_back(sharedBytes);
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    sharedBytes += elements * elementBytes;
  }
  const bool dynamicShared = sharedBytes > kStaticSharedBytes;
  SmallVector<Type> attributionTypes;
  for (ArrayRef<int64_t> shape : tileShapes)
    if (!dynamicShared)
      attributionTypes.push_back(MemRefType::get(
          shape, element, MemRefLayoutAttrInterface(), workgroup));
  Value gridX = arith::CeilDivUIOp::create(rewriter, loc, queryCount,
                                           kb.index(kQueryTile));
  Value gridY = kb.mul(batchCount, kb.index(heads));
  Value one = kb.index(1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, gridX, gridY, one, kb.index(threads), one, one,
      dynamicShared ? kb.i32(sharedBytes) : Value(),
      /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributionTypes);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  Value dynamicMemory;
  if (dynamicShared)
    dynamicMemory = gpu::DynamicSharedMemoryOp::create(
        rewriter, loc,
        MemRefType::get({ShapedType::kDynamic}, rewriter.getIntegerType(8),
                        MemRefLayoutAttrInterface(), workgroup));
  // The tiles as generic memrefs (the addresses of cp.async and ldmatrix
  // are cast back to the shared space).
  SmallVector<Value> tiles;
  for (auto [i, shape] : llvm::enumerate(tileShapes)) {
    Value tile;
    if (dynamicShared)
      tile = memref::ViewOp::create(
          rewriter, loc,
          MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                          workgroup),
          dynamicMemory, kb.index(tileOffsets[i]), ValueRange());
    else
      tile = launch.getWorkgroupAttributions()[i];
    tiles.push_back(memref::MemorySpaceCastOp::create(
        rewriter, loc, MemRefType::get(shape, element), tile));
  }
  Value kTile = tiles[0];
  Value vTile = tiles[1];
  Value qTile = queryInShared ? tiles[2] : Value();

  Value queryTile = launch.getBlockIds().x;
  Value batchHead = launch.getBlockIds().y;
  Value thread = launch.getThreadIds().x;
  Value b = arith::DivUIOp::create(rewriter, loc, batchHead, kb.index(heads));
  Value h = arith::RemUIOp::create(rewriter, loc, batchHead, kb.index(heads));
  Value hk = arith::DivUIOp::create(rewriter, loc, h, kb.index(group));
  Value warp = arith::DivUIOp::create(rewriter, loc, thread, kb.index(32));
  // The warp's 16 rows, and the first of its O columns.
  Value rowGroup =
      arith::DivUIOp::create(rewriter, loc, warp, kb.index(valueSplit));
  Value firstColumn =
      kb.mul(arith::RemUIOp::create(rewriter, loc, warp, kb.index(valueSplit)),
             kb.index(dim / valueSplit));
  Value lane = arith::RemUIOp::create(rewriter, loc, thread, kb.index(32));
  Value g = arith::DivUIOp::create(rewriter, loc, lane, kb.index(4));
  Value t = arith::RemUIOp::create(rewriter, loc, lane, kb.index(4));
  Value t2 = kb.mul(t, kb.index(2));
  Value firstRow = kb.mul(queryTile, kb.index(kQueryTile));
  Value row0 =
      kb.add(kb.add(firstRow, kb.mul(rowGroup, kb.index(kWarpRows))), g);
  Value row1 = kb.add(row0, kb.index(8));
  // ldmatrix: lane l gives row l % 8 of 8x8 matrix l / 8.
  Value matrix = arith::DivUIOp::create(rewriter, loc, lane, kb.index(8));
  Value matrixRow = arith::RemUIOp::create(rewriter, loc, lane, kb.index(8));
  Value matrixLow = arith::RemUIOp::create(rewriter, loc, matrix, kb.index(2));
  Value matrixHigh = arith::DivUIOp::create(rewriter, loc, matrix, kb.index(2));

  // Q's A fragments, one group of 4 registers per 16 columns (tf32: per 8
  // columns, (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)).
  const int64_t kDepth = tf32 ? 8 : 16;
  const int64_t kSteps = dim / kDepth;
  SmallVector<SmallVector<Value, 4>> qFragments;
  for (int64_t s = 0; s < kSteps && !queryInShared; ++s) {
    // Two registers (bf16/f16: pairs) of columns c0 and c0 + kDepth / 2.
    Value column =
        tf32 ? kb.add(kb.index(8 * s), t) : kb.add(kb.index(16 * s), t2);
    Value second = kb.add(column, kb.index(kDepth / 2));
    auto load = [&](Value row, Value at) {
      return tf32 ? kb.loadTf32(q, b, h, row, queryCount, at)
                  : kb.loadPair(q, b, h, row, queryCount, at);
    };
    qFragments.push_back({load(row0, column), load(row1, column),
                          load(row0, second), load(row1, second)});
  }

  // Key tiles: all of them, or under a causal or window mask those from
  // the first key the block's first row sees to the last key its last row
  // sees.
  Value firstTile = kb.index(0);
  Value keyTiles =
      arith::CeilDivUIOp::create(rewriter, loc, keyCount, kb.index(keyTile));
  if (limited) {
    Value lastRow = arith::MinSIOp::create(
        rewriter, loc, kb.add(firstRow, kb.index(kQueryTile - 1)),
        arith::SubIOp::create(rewriter, loc, queryCount, kb.index(1)));
    Value visible = kb.add(lastRow, kb.add(keyOffset, kb.index(right + 1)));
    visible = arith::MaxSIOp::create(rewriter, loc, visible, kb.index(0));
    visible = arith::MinSIOp::create(rewriter, loc, visible, keyCount);
    keyTiles =
        arith::CeilDivSIOp::create(rewriter, loc, visible, kb.index(keyTile));
  }
  if (windowed) {
    Value firstKey = arith::SubIOp::create(
        rewriter, loc, kb.add(firstRow, keyOffset), kb.index(left));
    firstKey = arith::MaxSIOp::create(rewriter, loc, firstKey, kb.index(0));
    firstTile =
        arith::DivUIOp::create(rewriter, loc, firstKey, kb.index(keyTile));
    firstTile = arith::MinSIOp::create(rewriter, loc, firstTile, keyTiles);
  }

  // Copies rows first .. first + rows - 1 of the sequences whose row 0 is
  // row \p sequenceBase of each source (rank 4, rows of dim elements) into
  // shared rows sharedFirst .. of each destination: 16-byte cp.async, rows
  // past \p rowCount zero-filled; one group.
  const int64_t chunkElements = 16 / elementBytes;
  const int64_t chunksPerRow = dim / chunkElements;
  auto copyRows = [&](ArrayRef<std::pair<Value, Value>> sourcesAndTiles,
                      Value sequenceBase, Value first, Value rowCount,
                      int64_t rows, Value sharedFirst) {
    auto copies =
        scf::ForOp::create(rewriter, loc, thread, kb.index(rows * chunksPerRow),
                           kb.index(threads));
    {
      OpBuilder::InsertionGuard copyGuard(rewriter);
      rewriter.setInsertionPointToStart(copies.getBody());
      Value chunk = copies.getInductionVar();
      Value row =
          arith::DivUIOp::create(rewriter, loc, chunk, kb.index(chunksPerRow));
      Value column = kb.mul(
          arith::RemUIOp::create(rewriter, loc, chunk, kb.index(chunksPerRow)),
          kb.index(chunkElements));
      Value sequenceRow = kb.add(first, row);
      Value inside = kb.lessThan(sequenceRow, rowCount);
      Value source = kb.select(inside, sequenceRow, kb.index(0));
      Value bytes = kb.select(inside, kb.i32(16), kb.i32(0));
      Value globalOffset =
          kb.add(kb.mul(kb.add(sequenceBase, source), kb.index(dim)), column);
      Value sharedOffset =
          kb.add(kb.mul(kb.add(sharedFirst, row), kb.index(rowStride)), column);
      for (auto [from, to] : sourcesAndTiles)
        NVVM::CpAsyncOp::create(rewriter, loc, kb.address(to, sharedOffset, 3),
                                kb.address(from, globalOffset, 1), 16,
                                NVVM::LoadCacheModifierKind::CG, bytes);
    }
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
  };
  // Q's rows of this block, once, in a group before the first key tile's.
  if (queryInShared)
    copyRows({{q, qTile}}, kb.mul(batchHead, queryCount), firstRow, queryCount,
             kQueryTile, kb.index(0));
  // Key tile \p tileIndex of K and V into buffer \p bufferIndex.
  Value keySequence =
      kb.mul(kb.add(kb.mul(b, kb.index(keyHeads)), hk), keyCount);
  auto stage = [&](Value tileIndex, Value bufferIndex) {
    copyRows({{k, kTile}, {v, vTile}}, keySequence,
             kb.mul(tileIndex, kb.index(keyTile)), keyCount, keyTile,
             kb.mul(bufferIndex, kb.index(keyTile)));
  };
  stage(firstTile,
        arith::RemUIOp::create(rewriter, loc, firstTile, kb.index(2)));

  const int64_t valueTiles = dim / 8 / valueSplit;
  Value zero = kb.f32(0);
  Value minusInfinity = kb.f32(-std::numeric_limits<double>::infinity());
  auto toF32 = [&](Value index) -> Value {
    Value i64 =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), index);
    return arith::SIToFPOp::create(rewriter, loc, f32Type, i64);
  };
  // ALiBi's a_h: the operand's entry, or the ALiBi reference's slopes
  // (2^(-8(h+1)/n) for the n = 2^floor(log2 H) first heads, then every
  // other slope of the rule for 2n).
  Value slope;
  if (slopes) {
    slope = memref::LoadOp::create(rewriter, loc, slopes, ValueRange{h});
  } else if (term.getAlibi()) {
    int64_t closest = 1;
    while (closest * 2 <= heads)
      closest *= 2;
    Value first = kb.lessThan(h, kb.index(closest));
    // As exp(x ln 2): no exp2 (or libdevice) on the kernels' math path.
    const double ln2 = std::log(2.0);
    Value own = toF32(kb.add(h, kb.index(1)));
    own = kb.mulF(own, kb.f32(-8.0 * ln2 / closest));
    Value beyond = arith::SubIOp::create(
        rewriter, loc, h,
        arith::MinSIOp::create(rewriter, loc, h, kb.index(closest)));
    Value extra = toF32(kb.add(kb.mul(beyond, kb.index(2)), kb.index(1)));
    extra = kb.mulF(extra, kb.f32(-4.0 * ln2 / closest));
    slope = math::ExpOp::create(rewriter, loc, kb.select(first, own, extra));
  }
  // Key and query lengths of this batch element (whole numbers in f32).
  Value keyLength =
      keyLengths
          ? memref::LoadOp::create(rewriter, loc, keyLengths, ValueRange{b})
                .getResult()
          : Value();
  Value queryLength =
      queryLengths
          ? memref::LoadOp::create(rewriter, loc, queryLengths, ValueRange{b})
                .getResult()
          : Value();
  SmallVector<Value> initial(valueTiles * 4, zero);
  if (sinks) {
    // The sink's logit σ_h counts in every row's max and, once per row (in
    // lane t = 0's partial sum), in its sum: m = σ_h, l = exp(σ_h - m) = 1
    // (0 for σ_h = -inf, which is no sink).
    Value sink = memref::LoadOp::create(rewriter, loc, sinks, ValueRange{h});
    Value finite = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, sink, minusInfinity);
    Value counts = arith::AndIOp::create(
        rewriter, loc, finite,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, t,
                              kb.index(0)));
    Value sum = kb.select(counts, kb.f32(1), zero);
    initial.append({sink, sink, sum, sum});
  } else {
    initial.append({minusInfinity, minusInfinity, zero, zero});
  }
  // With lse: the largest visible score of each row, -inf while the row has
  // seen no key (its lse is then -inf, the sink's logit notwithstanding).
  if (lse)
    initial.append({minusInfinity, minusInfinity});
  auto loop = scf::ForOp::create(rewriter, loc, firstTile, keyTiles,
                                 kb.index(1), initial);
  {
    OpBuilder::InsertionGuard loopGuard(rewriter);
    rewriter.setInsertionPointToStart(loop.getBody());
    Value tile = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    SmallVector<Value> acc(carried.begin(), carried.begin() + valueTiles * 4);
    Value runningMax[2] = {carried[valueTiles * 4],
                           carried[valueTiles * 4 + 1]};
    Value runningSum[2] = {carried[valueTiles * 4 + 2],
                           carried[valueTiles * 4 + 3]};
    Value firstKey = kb.mul(tile, kb.index(keyTile));

    // Tile kt + 1 is copied into the other buffer while this one is used:
    // wait for all but the newest group (this tile's), then a barrier.
    Value buffer = arith::RemUIOp::create(rewriter, loc, tile, kb.index(2));
    Value next = kb.add(tile, kb.index(1));
    auto prefetch = scf::IfOp::create(rewriter, loc, kb.lessThan(next, keyTiles),
                                      /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard prefetchGuard(rewriter);
      rewriter.setInsertionPointToStart(&prefetch.getThenRegion().front());
      stage(next, arith::SubIOp::create(rewriter, loc, kb.index(1), buffer));
      NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 1);
      rewriter.setInsertionPointToStart(&prefetch.getElseRegion().front());
      NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
    }
    gpu::BarrierOp::create(rewriter, loc);
    Value bufferOffset = kb.mul(buffer, kb.index(keyTile * rowStride));

    // This lane's ldmatrix row addresses for the first fragment of each
    // tile; the others are constant offsets from them. Q: matrices (rows
    // +0, columns +0), (rows +8, +0), (+0, +8), (+8, +8) of the warp's 16
    // rows; K: (keys +0, dims +0), (+0, +8), (+8, +0), (+8, +8); V: (keys
    // +0, dims +0), (+8, +0), (+0, +8), (+8, +8).
    Value queryRows, keyRows, valueRows;
    if (!tf32) {
      auto lanePointer = [&](Value tile, Value base, Value row, Value column) {
        return kb.address(
            tile,
            kb.add(base, kb.add(kb.mul(row, kb.index(rowStride)), column)), 3);
      };
      Value low8 = kb.mul(matrixLow, kb.index(8));
      Value high8 = kb.mul(matrixHigh, kb.index(8));
      if (queryInShared)
        queryRows = lanePointer(qTile, kb.index(0),
                                kb.add(kb.mul(rowGroup, kb.index(kWarpRows)),
                                       kb.add(low8, matrixRow)),
                                high8);
      keyRows =
          lanePointer(kTile, bufferOffset, kb.add(high8, matrixRow), low8);
      valueRows = lanePointer(vTile, bufferOffset, kb.add(low8, matrixRow),
                              kb.add(firstColumn, high8));
    }

    // S = Q Kᵀ: 8 accumulator tiles of 8 keys. ldmatrix.x4 gives the B
    // registers of two key tiles: matrices (keys +0, dims +0), (keys +0,
    // dims +8), (keys +8, dims +0), (keys +8, dims +8).
    const int64_t keyTiles8 = keyTile / 8;
    SmallVector<SmallVector<Value, 4>> scores(keyTiles8,
                                              SmallVector<Value, 4>(4, zero));
    // tf32: B (dims 8s .. 8s + 7 x keys 8j .. 8j + 7) registers (t, g) and
    // (t + 4, g) are K[8j + g][8s + t] and K[8j + g][8s + t + 4].
    for (int64_t s = 0; s < kSteps && tf32; ++s) {
      for (int64_t j = 0; j < keyTiles8; ++j) {
        Value key = kb.add(kb.index(8 * j), g);
        Value column = kb.add(kb.index(8 * s), t);
        SmallVector<Value, 2> regs;
        for (int64_t half = 0; half < 2; ++half)
          regs.push_back(kb.tf32(memref::LoadOp::create(
              rewriter, loc, kTile,
              ValueRange{buffer, key, kb.add(column, kb.index(4 * half))})));
        scores[j] = kb.mma(qFragments[s], regs, scores[j]);
      }
    }
    // One step of 16 dims: \p queryFragment (A) times the K fragments at
    // \p keyStep.
    auto keyProducts = [&](ArrayRef<Value> queryFragment, Value keyStep) {
      for (int64_t pair = 0; pair < keyTiles8 / 2; ++pair) {
        SmallVector<Value, 4> regs = kb.ldmatrix4(
            kb.advance(keyStep, 16 * pair * rowStride), /*transpose=*/false);
        scores[2 * pair] =
            kb.mma(queryFragment, {regs[0], regs[1]}, scores[2 * pair]);
        scores[2 * pair + 1] =
            kb.mma(queryFragment, {regs[2], regs[3]}, scores[2 * pair + 1]);
      }
    };
    for (int64_t s = 0; s < kSteps && !tf32 && !queryInShared; ++s)
      keyProducts(qFragments[s], kb.advance(keyRows, 16 * s));
    if (queryInShared) {
      // A rolled loop over the steps: unrolled, the Q fragments' addresses
      // (loop-invariant) would each be hoisted into registers of their own.
      SmallVector<Value> flat;
      for (const SmallVector<Value, 4> &tileScores : scores)
        llvm::append_range(flat, tileScores);
      auto steps = scf::ForOp::create(rewriter, loc, kb.index(0),
                                      kb.index(kSteps), one, flat);
      OpBuilder::InsertionGuard stepGuard(rewriter);
      rewriter.setInsertionPointToStart(steps.getBody());
      for (int64_t j = 0; j < keyTiles8; ++j)
        for (int64_t i = 0; i < 4; ++i)
          scores[j][i] = steps.getRegionIterArgs()[4 * j + i];
      Value column = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI32Type(),
          kb.mul(steps.getInductionVar(), kb.index(16)));
      auto step = [&](Value rows) -> Value {
        return LLVM::GEPOp::create(rewriter, loc, rows.getType(), element, rows,
                                   ArrayRef<LLVM::GEPArg>{column});
      };
      // Q's A fragment of columns 16s ..: matrices (rows +0, columns +0),
      // (rows +8, columns +0), (rows +0, columns +8), (rows +8, columns +8)
      // of the warp's 16 rows.
      keyProducts(kb.ldmatrix4(step(queryRows), /*transpose=*/false),
                  step(keyRows));
      flat.clear();
      for (const SmallVector<Value, 4> &tileScores : scores)
        llvm::append_range(flat, tileScores);
      scf::YieldOp::create(rewriter, loc, flat);
      for (int64_t j = 0; j < keyTiles8; ++j)
        for (int64_t i = 0; i < 4; ++i)
          scores[j][i] = steps.getResult(4 * j + i);
    }

    // Scale, mask, and the online softmax per row (g: registers 0, 1;
    // g + 8: registers 2, 3).
    Value scaleValue = kb.f32(scale);
    Value tileMax[2] = {minusInfinity, minusInfinity};
    for (int64_t j = 0; j < keyTiles8; ++j) {
      for (int64_t i = 0; i < 4; ++i) {
        Value key = kb.add(kb.add(firstKey, kb.index(8 * j + i % 2)), t2);
        Value visible = kb.lessThan(key, keyCount);
        Value row = i < 2 ? row0 : row1;
        if (limited) {
          Value last = kb.add(row, kb.add(keyOffset, kb.index(right + 1)));
          visible = arith::AndIOp::create(rewriter, loc, visible,
                                          kb.lessThan(key, last));
        }
        if (windowed) {
          // p_i - left <= j, as p_i - left < j + 1.
          Value first = arith::SubIOp::create(
              rewriter, loc, kb.add(row, keyOffset), kb.index(left));
          visible = arith::AndIOp::create(
              rewriter, loc, visible,
              kb.lessThan(first, kb.add(key, kb.index(1))));
        }
        Value score = kb.mulF(scores[j][i], scaleValue);
        if (softcap) {
          // s <- c tanh(s / c)
          Value capped = math::TanhOp::create(
              rewriter, loc, kb.mulF(score, kb.f32(1 / *softcap)));
          score = kb.mulF(kb.f32(*softcap), capped);
        }
        if (slope) {
          // s <- s - a_h |p_i - j|, p_i = i + M - N
          Value distance = math::AbsFOp::create(
              rewriter, loc,
              arith::SubFOp::create(rewriter, loc,
                                    toF32(kb.add(row, keyOffset)), toF32(key)));
          score = arith::SubFOp::create(rewriter, loc, score,
                                        kb.mulF(slope, distance));
        }
        if (keyLength)
          visible = arith::AndIOp::create(
              rewriter, loc, visible,
              arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT,
                                    toF32(key), keyLength));
        scores[j][i] = kb.select(visible, score, minusInfinity);
        tileMax[i / 2] = kb.maxF(tileMax[i / 2], scores[j][i]);
      }
    }
    Value newMax[2], shift[2], alpha[2];
    for (int r = 0; r < 2; ++r) {
      tileMax[r] = kb.rowReduce(tileMax[r], true);
      newMax[r] = kb.maxF(runningMax[r], tileMax[r]);
      // A row with no visible key so far keeps max -inf: shift by 0, so
      // that exp(-inf - 0) = 0 instead of NaN.
      Value none = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OEQ, newMax[r], minusInfinity);
      shift[r] = kb.select(none, zero, newMax[r]);
      alpha[r] = math::ExpOp::create(
          rewriter, loc,
          arith::SubFOp::create(rewriter, loc, runningMax[r], shift[r]));
    }
    Value tileSum[2] = {zero, zero};
    for (int64_t j = 0; j < keyTiles8; ++j)
      for (int64_t i = 0; i < 4; ++i) {
        scores[j][i] = math::ExpOp::create(
            rewriter, loc,
            arith::SubFOp::create(rewriter, loc, scores[j][i], shift[i / 2]));
        tileSum[i / 2] = kb.addF(tileSum[i / 2], scores[j][i]);
      }
    for (int64_t n = 0; n < valueTiles; ++n)
      for (int64_t i = 0; i < 4; ++i)
        acc[4 * n + i] = kb.mulF(acc[4 * n + i], alpha[i / 2]);

    // tf32: O += P V per 8 keys, with the keys of the product permuted so
    // that P's accumulator registers are the A operand as they are: lane
    // (g, t) holds P's keys 2t, 2t + 1, which become A's columns t, t + 4,
    // so B's rows t, t + 4 are V's keys 2t, 2t + 1 (registers (t, g) and
    // (t + 4, g) of value tile n are V[8j + 2t][8n + g], V[8j + 2t + 1][..]).
    for (int64_t j = 0; j < keyTiles8 && tf32; ++j) {
      SmallVector<Value, 4> p = {kb.tf32(scores[j][0]), kb.tf32(scores[j][2]),
                                 kb.tf32(scores[j][1]), kb.tf32(scores[j][3])};
      for (int64_t n = 0; n < valueTiles; ++n) {
        Value column = kb.add(firstColumn, kb.add(kb.index(8 * n), g));
        SmallVector<Value, 2> regs;
        for (int64_t half = 0; half < 2; ++half) {
          Value key = kb.add(kb.index(8 * j + half), t2);
          regs.push_back(kb.tf32(memref::LoadOp::create(
              rewriter, loc, vTile, ValueRange{buffer, key, column})));
        }
        SmallVector<Value, 4> c(acc.begin() + 4 * n, acc.begin() + 4 * n + 4);
        SmallVector<Value, 4> d = kb.mma(p, regs, c);
        std::copy(d.begin(), d.end(), acc.begin() + 4 * n);
      }
    }
    // O += P V over 4 steps of 16 keys: P's registers from two score tiles;
    // ldmatrix.x4.trans gives the B registers of two value tiles: matrices
    // (keys +0, dims +0), (keys +8, dims +0), (keys +0, dims +8),
    // (keys +8, dims +8).
    for (int64_t step = 0; step < keyTile / 16 && !tf32; ++step) {
      const SmallVector<Value, 4> &left = scores[2 * step];
      const SmallVector<Value, 4> &right = scores[2 * step + 1];
      SmallVector<Value, 4> p = {
          kb.packPair(left[0], left[1]), kb.packPair(left[2], left[3]),
          kb.packPair(right[0], right[1]), kb.packPair(right[2], right[3])};
      for (int64_t pair = 0; pair < valueTiles / 2; ++pair) {
        SmallVector<Value, 4> regs = kb.ldmatrix4(
            kb.advance(valueRows, 16 * step * rowStride + 16 * pair),
            /*transpose=*/true);
        for (int64_t half = 0; half < 2; ++half) {
          int64_t n = 2 * pair + half;
          SmallVector<Value, 4> c(acc.begin() + 4 * n, acc.begin() + 4 * n + 4);
          SmallVector<Value, 4> d =
              kb.mma(p, {regs[2 * half], regs[2 * half + 1]}, c);
          std::copy(d.begin(), d.end(), acc.begin() + 4 * n);
        }
      }
    }
    // The next iteration's copies overwrite this buffer.
    gpu::BarrierOp::create(rewriter, loc);

    SmallVector<Value> yielded = acc;
    for (int r = 0; r < 2; ++r)
      yielded.push_back(newMax[r]);
    for (int r = 0; r < 2; ++r)
      yielded.push_back(kb.addF(kb.mulF(runningSum[r], alpha[r]), tileSum[r]));
    if (lse)
      for (int r = 0; r < 2; ++r)
        yielded.push_back(kb.maxF(carried[valueTiles * 4 + 4 + r], tileMax[r]));
    scf::YieldOp::create(rewriter, loc, yielded);
  }

  // (With no key tile the first copy is still in flight.)
  NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);

  // O / l per row (0 for a row without a visible key), rows < N stored.
  ValueRange results = loop.getResults();
  Type outElement = resultType.getElementType();
  for (int r = 0; r < 2; ++r) {
    Value sum = kb.rowReduce(results[valueTiles * 4 + 2 + r], false);
    Value positive = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, sum, zero);
    Value row = r == 0 ? row0 : row1;
    if (queryLength) {
      // Rows i >= L_b are 0.
      Value kept = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OLT, toF32(row), queryLength);
      positive = arith::AndIOp::create(rewriter, loc, positive, kept);
    }
    Value inverse = kb.select(
        positive, arith::DivFOp::create(rewriter, loc, kb.f32(1), sum), zero);
    auto store = scf::IfOp::create(rewriter, loc, kb.lessThan(row, queryCount));
    OpBuilder::InsertionGuard storeGuard(rewriter);
    rewriter.setInsertionPointToStart(&store.getThenRegion().front());
    if (lse) {
      // lse_i = m_i + log z_i; -inf for a row that saw no key (or is
      // beyond its query length). Lane t = 0 of the row stores it.
      Value seen =
          arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                                results[valueTiles * 4 + 4 + r], minusInfinity);
      seen = arith::AndIOp::create(rewriter, loc, seen, positive);
      Value logSumExp =
          kb.addF(results[valueTiles * 4 + r],
                  math::LogOp::create(rewriter, loc, sum).getResult());
      logSumExp = kb.select(seen, logSumExp, minusInfinity);
      // (With split columns, the warp of the first half.)
      Value leading =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                kb.add(t, firstColumn), kb.index(0));
      auto leader = scf::IfOp::create(rewriter, loc, leading);
      OpBuilder::InsertionGuard leaderGuard(rewriter);
      rewriter.setInsertionPointToStart(&leader.getThenRegion().front());
      memref::StoreOp::create(rewriter, loc, logSumExp, lse,
                              ValueRange{b, h, row});
    }
    for (int64_t n = 0; n < valueTiles; ++n)
      for (int64_t i = 0; i < 2; ++i) {
        Value value = kb.mulF(results[4 * n + 2 * r + i], inverse);
        if (outElement != f32Type)
          value = arith::TruncFOp::create(rewriter, loc, outElement, value);
        Value column = kb.add(firstColumn, kb.add(kb.index(8 * n + i), t2));
        memref::StoreOp::create(rewriter, loc, value, out,
                                ValueRange{b, h, row, column});
      }
  }
  gpu::TerminatorOp::create(rewriter, loc);

  rewriter.setInsertionPointAfter(launch);
  Value result = bufferization::ToTensorOp::create(rewriter, loc, resultType,
                                                   out, rewriter.getUnitAttr(),
                                                   rewriter.getUnitAttr());
  rewriter.replaceAllUsesWith(term.getResult(), result);
  if (lse)
    rewriter.replaceAllUsesWith(
        term.getLse(), bufferization::ToTensorOp::create(
                           rewriter, loc, term.getLse().getType(), lse,
                           rewriter.getUnitAttr(), rewriter.getUnitAttr()));
  rewriter.eraseOp(term);
  return success();
}

struct AttnMmaAttention
    : public attn::impl::AttnMmaAttentionBase<AttnMmaAttention> {
  using AttnMmaAttentionBase::AttnMmaAttentionBase;

  void runOnOperation() override {
    SmallVector<TermOp> terms;
    getOperation().walk([&](TermOp term) {
      if (unsupportedReason(term, precision).empty())
        terms.push_back(term);
    });
    IRRewriter rewriter(&getContext());
    for (TermOp term : terms)
      if (failed(convertTerm(rewriter, term)))
        return signalPassFailure();
  }
};

} // namespace
