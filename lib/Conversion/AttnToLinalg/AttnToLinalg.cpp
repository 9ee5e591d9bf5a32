//===- AttnToLinalg.cpp - Lower attn ops to tiled linalg on tensors -------===//
//
// Every attn.term becomes, on tensors:
//
//  1. (Linformer) K' = E K and V' = F V;
//  2. the feature rows phi(Q) and phi(K) (Q s and K for softmax and relu2),
//     computed once per row (FeatureMaps.cpp) and padded with zero rows up
//     to a multiple of the tile, so that every tile below has a static
//     number of rows. That is the `static-tiles` form (GPU). The CPU form
//     instead maps each tile of Q and K where it is consumed (featureTile):
//     kv-first and chunked kv-first per tile, qk-first per query tile and in
//     one parallel pass building the K^T panels and V tiles, so that no
//     serial pass over the whole sequence exists;
//  3. the core, in the order the term carries, one strategy per file:
//     - qk-first (QkFirst.cpp): one scf.forall iteration per (batch, head,
//       query tile), looping over the key tiles the mask leaves visible
//       with an online (flash-style) normaliser, so that no N x M matrix
//       exists;
//     - kv-first, no mask (KvFirst.cpp): a state pass S = phi(K)^T V,
//       z = sum phi(k) per (batch, head), then a query pass
//       phi(Q) S / phi(Q) z per query tile;
//     - recurrent (Recurrent.cpp): per (batch, head) the tokens one by
//       one, the W x E state updated and queried per token;
//     - kv-first with a causal or block mask (KvFirstChunked.cpp): per
//       (batch, head) a loop over chunks carrying the state (quadratic
//       inside a chunk when the mask needs it), so the extra memory is one
//       W x E state;
//  4. the normaliser, with zero rows (no visible key, z = 0) giving 0.
//
// attn.combine becomes an elementwise sum times the gate. With `crossover`
// both orders are emitted behind `scf.if N >= crossover`.
//
// This file plans each term (which strategies, with which tiles) and
// dispatches; the plan is fixed before any IR is built, so the two
// branches of a crossover each keep their own tiles.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"
#include "attn/Analysis/CostModel.h"
#include "attn/Conversion/Passes.h"

#include "Strategies.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::to_linalg;

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

namespace {
/// What one term lowers to: the strategies and their tiles, decided from
/// the op and the pass's tile before any IR is built.
struct TermPlan {
  /// QkFirst, KvFirst, or Auto for both behind `N >= crossover`.
  Order order;
  int64_t crossover;
  QkFirstTiles qkFirst;
  /// The unmasked kv-first strategy's tiles.
  KvFirstTiles kvFirst;
  /// The masked kv-first strategy's chunks (unused without a mask).
  ChunkPlan chunked;
  RecurrentTiles recurrent;
  /// Split-key qk-first for few query rows (rows = 0: not used); a
  /// dynamic N takes it at run time when r N <= rows.
  SplitKeyTiles splitKeys{0, 0, 0};
};
} // namespace

/// Keys per split of the split-key form (cost::kSplitKeyRun): 512 keys of
/// D = 128 are 256 KiB of K and V, enough to hide a split's merge and start,
/// and a 4096-key cache over 8 key/value heads still gives 64 iterations to
/// the threads.
static constexpr int64_t kSplitKeys = ::attn::cost::kSplitKeyRun;
/// Stacked rows of the split-key form (cost::kMaxSplitKeyRows): at most two
/// AVX2 register tiles' rows of scores per key; more query rows are a
/// prefill, which qk-first tiles.
static constexpr int64_t kMaxStackedRows = ::attn::cost::kMaxSplitKeyRows;
static constexpr int64_t kMinStackedRows = 4;

/// The stacked rows R of the split-key form for \p op, 0 where it does not
/// apply: softmax under no, causal or window mask with the rows normaliser,
/// no projection, static D and E, CPU form; R = max(r N, 4) for a static N
/// (r the group size), r max(1, 8 / r) for a dynamic one.
static int64_t splitKeyRows(TermOp op, MaskKind mask, bool staticTiles) {
  if (staticTiles || op.getScore() != Score::Softmax || op.isProjected() ||
      op.getEffectiveNormalizer() != Normalizer::Rows)
    return 0;
  if (mask != MaskKind::None && mask != MaskKind::Causal &&
      mask != MaskKind::Window)
    return 0;
  RankedTensorType q = op.getQuery().getType(), k = op.getKey().getType(),
                   v = op.getValue().getType();
  if (q.isDynamicDim(3) || v.isDynamicDim(3) || q.isDynamicDim(1) ||
      k.isDynamicDim(1))
    return 0;
  int64_t group = q.getDimSize(1) / k.getDimSize(1);
  if (group > kMaxStackedRows)
    return 0;
  int64_t queries = q.getDimSize(2);
  if (ShapedType::isDynamic(queries))
    return group * std::max<int64_t>(1, 8 / group);
  if (group * queries > kMaxStackedRows)
    return 0;
  // At least kMinStackedRows: a product of one or two columns is no register
  // tile (and MLIR 22's vectorizer rejects its unit dimension).
  return std::max(group * queries, kMinStackedRows);
}

/// The fewest keys of kv-first's state pass tile when the cache shrinks it.
static constexpr int64_t kMinStateKeys = 32;

/// \p mask is the term's mask after projection (Linformer drops it).
static TermPlan planTerm(TermOp op, MaskKind mask, int64_t defaultTile,
                         bool staticTiles, int64_t stateCacheBytes) {
  TermPlan plan;
  plan.order = op.getOrder();
  plan.crossover = op.getCrossover().value_or(0);
  // `auto` without a crossover lowers qk-first (attn-select-order decides
  // otherwise); a score without a product form has only qk-first.
  if (plan.order == Order::Auto && !op.getCrossover())
    plan.order = Order::QkFirst;
  if (!op.hasProductForm() || op.needsQkFirst())
    plan.order = Order::QkFirst;
  // A state lives in the kv-first and recurrent forms only (C14): no
  // run-time switch to qk-first.
  if (op.hasState() && plan.order != Order::Recurrent) {
    plan.order = Order::KvFirst;
    plan.crossover = 0;
  }

  // The term's chunk is the qk-first tile (query rows and keys) only when
  // the term says qk_first: attn-select-order then chose it for qk-first.
  // Behind a crossover (or under plain `auto`) it is the kv-first chunk, and
  // qk-first keeps the pass's tile.
  // (Never wider than kMaxChunk: attn-select-order clamps with a remark,
  // IR that did not go through it is clamped here.)
  std::optional<int64_t> chunk = op.getChunk();
  if (chunk)
    chunk = std::min(*chunk, kMaxChunk);
  int64_t qkTile = defaultTile;
  if (chunk && op.getOrder() == Order::QkFirst)
    qkTile = *chunk;
  // Fewer queries than a tile, static (a decode step): tiles of N query
  // rows, not N real rows padded to a whole tile (qk-first's query tiles,
  // the recurrent order's feature tiles: padding a one-token step moved more
  // bytes than its state). qk-first's rows and keys follow
  // cost::queryTileFor / keyTileFor, which the cost model counts too (N
  // = 45 took 58 us in 45-row tiles, N = 48 46 us; at M = 32 a 64-key tile
  // doubled the products).
  int64_t queryRows = op.getQuery().getType().getDimSize(2);
  int64_t keyRows = op.getKey().getType().getDimSize(2);
  if (op.isProjected())
    keyRows =
        cast<RankedTensorType>(op.getKeyProjection().getType()).getDimSize(0);
  // (static-tiles, the GPU form, keeps whole tiles.)
  auto known = [&](int64_t rows) {
    return !staticTiles && !ShapedType::isDynamic(rows);
  };
  // The rows and keys of a query × key tile of at most \p tile.
  auto shrunk = [&](int64_t tile) {
    return std::make_pair(
        known(queryRows) ? ::attn::cost::queryTileFor(tile, queryRows) : tile,
        known(keyRows) ? ::attn::cost::keyTileFor(tile, keyRows) : tile);
  };
  auto [qkRows, qkKeys] = shrunk(qkTile);
  plan.qkFirst = QkFirstTiles{qkRows, qkKeys, staticTiles};
  // kv-first's passes shrink the same way: whole 64-row tiles made N = 32
  // take as long as N = 64 (52 against 55 us, relu D = 64), which the cost
  // model, counting real rows, did not see.
  auto [kvRows, kvKeys] = shrunk(defaultTile);
  // The state pass's key tile: the step S += phi(K_t)^T V_t reads a tile of
  // phi(K_t) and of V_t per register tile of S, so both should stay in L1.
  // At W = E = 128, 64 keys are 64 KiB, beyond a 32-48 KiB L1: 32 keys ran
  // elu1 3% faster on AVX2 (0.5% on AVX-512); at W = E = 64 (32 KiB) 32
  // keys were slower. Not below 32 keys: smaller products.
  std::optional<int64_t> featureWidth = op.getStaticFeatureWidth();
  int64_t valueWidth = op.getValue().getType().getDimSize(3);
  if (stateCacheBytes > 0 && !staticTiles && featureWidth &&
      !ShapedType::isDynamic(valueWidth)) {
    int64_t stateKeys = defaultTile;
    while (stateKeys > kMinStateKeys &&
           stateKeys * (*featureWidth + valueWidth) * int64_t(sizeof(float)) >
               stateCacheBytes)
      stateKeys /= 2;
    kvKeys = shrunk(stateKeys).second;
  }
  plan.kvFirst = KvFirstTiles{kvRows, kvKeys, staticTiles};
  plan.chunked = planChunks(mask, op.getMaskBlock(), chunk, defaultTile);
  plan.chunked.staticTiles = staticTiles;
  plan.recurrent = RecurrentTiles{
      known(queryRows) ? std::min(defaultTile, queryRows) : defaultTile,
      staticTiles};
  if (plan.order == Order::QkFirst) {
    int64_t stacked = splitKeyRows(op, mask, staticTiles);
    if (stacked > 0)
      plan.splitKeys = SplitKeyTiles{stacked, qkTile,
                                     std::max<int64_t>(1, kSplitKeys / qkTile)};
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// One term
//===----------------------------------------------------------------------===//

/// 2 x, a constant when x is one.
static Value twice(LinalgBuilder &b, Value x) {
  if (std::optional<int64_t> constant = getConstantIntValue(x))
    return b.index(2 * *constant);
  return b.add(x, x);
}

/// Reads the sizes and clauses of \p op and builds its projection and
/// feature rows, in that order.
static TermOperands buildTermOperands(LinalgBuilder &b, TermOp op, int64_t tile,
                                      bool staticTiles) {
  TermOperands term;
  term.resultType = op.getResult().getType();
  term.initialState = op.getInitialState();
  term.initialNorm = op.getInitialNorm();
  term.returnsState = op.getFinalState() != nullptr;
  term.returnsNorm = op.getFinalNorm() != nullptr;
  term.returnsLse = op.getLse() != nullptr;
  term.score = op.getScore();
  Value q = op.getQuery();
  Value k = op.getKey();
  Value v = op.getValue();
  term.batch = b.dim(q, 0);
  term.heads = b.dim(q, 1);
  term.queries = b.dim(q, 2);
  Value featureDim = b.dim(q, 3);
  term.valueDim = b.dim(v, 3);
  term.keys = b.dim(k, 2);
  term.mask = op.getMaskKind();
  term.block = op.getMaskBlock();
  // DESIGN §1.3: grouped heads, query positions, windows, score changes.
  term.keyHeads = b.dim(k, 1);
  term.groupSize = b.index(1);
  if (op.hasGroupedHeads())
    term.groupSize = b.index(op.getQuery().getType().getDimSize(1) /
                             op.getKey().getType().getDimSize(1));
  term.positionOffset = b.index(0);
  if (term.mask == MaskKind::Causal || term.mask == MaskKind::Window ||
      op.getAlibi()) {
    int64_t n = op.getQuery().getType().getDimSize(2);
    int64_t m = op.getKey().getType().getDimSize(2);
    if (ShapedType::isDynamic(n) || ShapedType::isDynamic(m))
      term.positionOffset = b.sub(term.keys, term.queries);
    else
      term.positionOffset = b.index(m - n);
  }
  if (std::optional<MaskAttr> mask = op.getMask()) {
    // Sequences hold fewer than 2^61 rows (C1: their bytes fit in int64),
    // so a wider window sees as much as this one, and p + right + 1 cannot
    // overflow.
    constexpr int64_t kWidest = int64_t(1) << 61;
    term.windowLeft = std::min(mask->getLeft(), kWidest);
    term.windowRight = std::min(mask->getRight(), kWidest);
  }
  if (std::optional<APFloat> softcap = op.getSoftcap())
    term.softcap = softcap->convertToDouble();
  term.alibi = op.getAlibi();
  term.alibiSlopes = op.getAlibiSlopes();
  term.sinks = op.getSinks();
  term.keyLengths = op.getKeyLengths();
  term.queryLengths = op.getQueryLengths();
  term.normalizer = op.getEffectiveNormalizer();
  term.eps = op.getEffectiveEps();

  if (op.isProjected()) {
    // Every query sees all of the projected keys.
    // (The CPU form widens an f16 / bf16 K and V tile by tile.)
    k = projectSequence(b, op.getKeyProjection(),
                        staticTiles ? widened(b, k) : k, tile, staticTiles);
    v = projectSequence(b, op.getValueProjection(),
                        staticTiles ? widened(b, v) : v, tile, staticTiles);
    term.keys = b.dim(k, 2);
    term.mask = MaskKind::None;
  }
  term.op = op;
  term.decay = buildDecayOperands(b, op);
  term.values = v;
  term.featureDim = featureDim;
  term.rawQ = q;
  term.rawK = k;
  term.features =
      buildFeatureTiles(b, op, term.queries, featureDim, staticTiles);
  term.width = featureDim;
  if (term.features.map == FeatureMap::FavorPlus)
    term.width = b.dim(op.getOmega(), 0);
  else if (term.features.map == FeatureMap::Rfa)
    term.width = twice(b, b.dim(op.getOmega(), 0));
  else if (term.features.map == FeatureMap::CosFormer)
    term.width = twice(b, featureDim);
  return term;
}

/// qk-first, or the split-key form for few query rows (behind a run-time
/// test of r N <= R when N is dynamic); with \p lse the log-sum-exp too.
static Value lowerQkFirstAny(LinalgBuilder &b, const TermOperands &term,
                             const TermPlan &plan, Value *lse) {
  if (plan.splitKeys.rows == 0)
    return lowerQkFirst(b, term, plan.qkFirst, lse);
  if (getConstantIntValue(term.queries))
    return lowerSplitKeys(b, term, plan.splitKeys, lse);
  ImplicitLocOpBuilder &ib = b.b;
  Value few = arith::CmpIOp::create(ib, arith::CmpIPredicate::ule,
                                    b.mul(term.queries, term.groupSize),
                                    b.index(plan.splitKeys.rows));
  SmallVector<Type> types = {term.resultType};
  if (lse)
    types.push_back(RankedTensorType::get(
        term.resultType.getShape().drop_back(), ib.getF32Type()));
  auto ifOp = scf::IfOp::create(ib, types, few, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(ib);
  auto branch = [&](Region &region, bool split) {
    ib.setInsertionPointToStart(&region.front());
    Value branchLse;
    Value out =
        split ? lowerSplitKeys(b, term, plan.splitKeys,
                               lse ? &branchLse : nullptr)
              : lowerQkFirst(b, term, plan.qkFirst, lse ? &branchLse : nullptr);
    SmallVector<Value> yielded = {out};
    if (lse)
      yielded.push_back(tensor::CastOp::create(ib, types[1], branchLse));
    scf::YieldOp::create(ib, yielded);
  };
  branch(ifOp.getThenRegion(), true);
  branch(ifOp.getElseRegion(), false);
  if (lse)
    *lse = ifOp.getResult(1);
  return ifOp.getResult(0);
}

static Value lowerKvFirstAny(LinalgBuilder &b, const TermOperands &term,
                             const TermPlan &plan,
                             FinalStates *finalStates = nullptr) {
  if (term.mask == MaskKind::None)
    return lowerKvFirst(b, term, plan.kvFirst);
  return lowerKvFirstChunked(b, term, plan.chunked, finalStates);
}

/// Emits the term's strategies as \p plan says and returns its [B, H, N, E]
/// value.
static Value lowerTerm(LinalgBuilder &b, const TermOperands &term,
                       const TermPlan &plan, FinalStates *finalStates,
                       Value *lse) {
  if (plan.order == Order::Auto) {
    ImplicitLocOpBuilder &ib = b.b;
    Value threshold = b.index(plan.crossover);
    Value useKv = arith::CmpIOp::create(ib, arith::CmpIPredicate::uge,
                                        term.queries, threshold);
    auto ifOp = scf::IfOp::create(ib, TypeRange{term.resultType}, useKv,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(ib, lowerKvFirstAny(b, term, plan));
    ib.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(ib, lowerQkFirst(b, term, plan.qkFirst));
    return ifOp.getResult(0);
  }
  if (plan.order == Order::KvFirst)
    return lowerKvFirstAny(b, term, plan, finalStates);
  if (plan.order == Order::Recurrent)
    return lowerRecurrent(b, term, plan.recurrent, finalStates);
  return lowerQkFirstAny(b, term, plan, lse);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {
/// attn.term: plans the term, builds its feature rows, then dispatches to
/// the strategies of the plan (one, or two behind a crossover).
struct TermOpLowering : public OpRewritePattern<TermOp> {
  TermOpLowering(MLIRContext *context, int64_t tile, bool staticTiles,
                 int64_t stateCacheBytes)
      : OpRewritePattern<TermOp>(context), tile(tile),
        staticTiles(staticTiles), stateCacheBytes(stateCacheBytes) {}

  LogicalResult matchAndRewrite(TermOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder ib(op.getLoc(), rewriter);
    LinalgBuilder b(ib);
    // C19: f16 / bf16 queries, keys and values stay narrow in TermOperands;
    // the strategies widen them where they load them (rowTile, padRows, the
    // feature maps), so that no widened copy of a whole input is made where
    // a tile suffices. A narrow result is rounded at the end.
    Type f32 = ib.getF32Type();
    TermOperands term = buildTermOperands(b, op, tile, staticTiles);
    term.resultType = term.resultType.clone(f32);
    const TermPlan plan =
        planTerm(op, term.mask, tile, staticTiles, stateCacheBytes);
    FinalStates finalStates;
    Value lse;
    Value out =
        lowerTerm(b, term, plan, &finalStates, op.getLse() ? &lse : nullptr);
    Type outputElement = op.getResult().getType().getElementType();
    if (outputElement != f32)
      out = convertElements(b, out, outputElement);
    SmallVector<Value> results = {out};
    if (finalStates.state)
      results.push_back(finalStates.state);
    if (finalStates.norm)
      results.push_back(finalStates.norm);
    if (lse) {
      if (lse.getType() != op.getLse().getType())
        lse = tensor::CastOp::create(ib, op.getLse().getType(), lse);
      results.push_back(lse);
    }
    rewriter.replaceOp(op, results);
    return success();
  }

  /// The pass's tile-size: the qk-first tile, the kv-first tile and the
  /// default chunk.
  int64_t tile;
  bool staticTiles;
  int64_t stateCacheBytes;
};

/// attn.combine: out = (sum of the terms) * gate, elementwise.
struct CombineOpLowering : public OpRewritePattern<CombineOp> {
  using OpRewritePattern<CombineOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(CombineOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder ib(op.getLoc(), rewriter);
    LinalgBuilder b(ib);
    SmallVector<Value> inputs(op.getTerms());
    if (Value gate = op.getGate())
      inputs.push_back(gate);
    size_t numTerms = op.getTerms().size();
    bool gated = op.getGate() != nullptr;
    SmallVector<AffineMap> maps(inputs.size() + 1, b.map(4, {0, 1, 2, 3}));
    Type outputElement = op.getType().getElementType();
    Value init = tensor::EmptyOp::create(
        ib, tensor::getMixedSizes(ib, ib.getLoc(), op.getTerms().front()),
        outputElement);
    Value result =
        b.generic(init, inputs, maps, {kPar, kPar, kPar, kPar},
                  [&](OpBuilder &ob, Location loc, ValueRange args) {
                    Value sum = args[0];
                    for (size_t t = 1; t < numTerms; ++t)
                      sum = arith::AddFOp::create(ob, loc, sum, args[t]);
                    if (gated)
                      sum = arith::MulFOp::create(ob, loc, sum, args[numTerms]);
                    if (outputElement != sum.getType())
                      sum =
                          arith::TruncFOp::create(ob, loc, outputElement, sum);
                    return sum;
                  });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertAttnToLinalgPass
    : public mlir::attn::impl::ConvertAttnToLinalgBase<
          ConvertAttnToLinalgPass> {
  using ConvertAttnToLinalgBase::ConvertAttnToLinalgBase;

  void runOnOperation() override {
    if (tileSize <= 0) {
      getOperation()->emitError()
          << "convert-attn-to-linalg: tile-size must be positive, got "
          << static_cast<int64_t>(tileSize);
      return signalPassFailure();
    }
    if (stateCacheBytes < 0) {
      getOperation()->emitError()
          << "convert-attn-to-linalg: state-cache-bytes must not be "
             "negative, got "
          << static_cast<int64_t>(stateCacheBytes);
      return signalPassFailure();
    }
    ConversionTarget target(getContext());
    target.addIllegalDialect<AttnDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, affine::AffineDialect,
                           bufferization::BufferizationDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns, tileSize, staticTiles,
                                 stateCacheBytes);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns,
                                              int64_t tileSize,
                                              bool staticTiles,
                                              int64_t stateCacheBytes) {
  patterns.add<TermOpLowering>(patterns.getContext(), tileSize, staticTiles,
                               stateCacheBytes);
  patterns.add<CombineOpLowering>(patterns.getContext());
}
