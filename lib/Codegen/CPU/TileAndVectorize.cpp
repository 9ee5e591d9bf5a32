//===- TileAndVectorize.cpp - Vectorize the static tiles of attn ----------===//

#include "attn/Codegen/Passes.h"

#include "attn/Codegen/CPU/CpuTarget.h"
#include "attn/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILEANDVECTORIZE
#include "attn/Codegen/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

namespace {
/// Elementwise steps and reductions are left to LLVM's loop vectorizer,
/// which handles their masks and index arithmetic better than 2-D vectors.
constexpr bool vectorizeAll = false;

/// Elements a vectorized op may span: beyond this the unrolled vectors cost
/// more in compile time and register spills than they gain.
constexpr int64_t kMaxVectorElements = 64 * 1024;

/// The contraction shapes convert-attn-to-linalg emits for its tiles.
enum class TileProduct {
  None,
  /// C[i, j] += A[i, k]·B[k, j]
  AB,
  /// C[i, j] += A[k, i]·B[k, j] (A^T B): kv-first's state phi(K)^T V. Both
  /// vectorize to B rows times broadcast elements of A.
  ATB,
};

TileProduct classifyProduct(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.size() != 3 || iterators[0] != utils::IteratorType::parallel ||
      iterators[1] != utils::IteratorType::parallel ||
      iterators[2] != utils::IteratorType::reduction ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return TileProduct::None;
  MLIRContext *context = op.getContext();
  AffineExpr i, j, k;
  bindDims(context, i, j, k);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[1] != AffineMap::get(3, 0, {k, j}, context) ||
      maps[2] != AffineMap::get(3, 0, {i, j}, context))
    return TileProduct::None;
  if (maps[0] == AffineMap::get(3, 0, {i, k}, context))
    return TileProduct::AB;
  if (maps[0] == AffineMap::get(3, 0, {k, i}, context))
    return TileProduct::ATB;
  return TileProduct::None;
}

/// An elementwise map (every loop parallel) that computes exp, sin or cos.
bool isTranscendentalMap(linalg::GenericOp op) {
  if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1)
    return false;
  return op.getBody()
      ->walk([](Operation *inner) {
        return isa<math::ExpOp, math::SinOp, math::CosOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// y[c] += A[r, c] with the reduction outermost (kv-first's z += sum of
/// phi(K_t) rows): as loops, every row reloads and stores y.
bool isColumnSum(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.size() != 2 || iterators[0] != utils::IteratorType::reduction ||
      iterators[1] != utils::IteratorType::parallel ||
      op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1)
    return false;
  MLIRContext *context = op.getContext();
  AffineExpr r, c;
  bindDims(context, r, c);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return maps[0] == AffineMap::get(2, 0, {r, c}, context) &&
         maps[1] == AffineMap::get(2, 0, {c}, context);
}

/// The largest of \p preferred and its halvings that divides \p size.
int64_t dividingTile(int64_t size, int64_t preferred) {
  for (int64_t tile = preferred; tile > 1; tile /= 2)
    if (size % tile == 0)
      return tile;
  return 1;
}

/// The largest divisor of \p size that is at most \p preferred.
int64_t largestDivisorAtMost(int64_t size, int64_t preferred) {
  for (int64_t tile = std::min(size, preferred); tile > 1; --tile)
    if (size % tile == 0)
      return tile;
  return 1;
}

/// A^T B's register tile reads A[k.., i..i + rows] as a vector per k; for
/// rows that are not a power of two (AVX2's 6) LLVM widens that odd vector
/// and assembles the broadcasts of its elements with shuffles (and spills).
/// Read element by element instead: each element then becomes one
/// broadcasting load, as the power-of-two rows do.
void readOddTransposedOperandsByElement(RewriterBase &rewriter,
                                        Operation *root) {
  SmallVector<vector::TransferReadOp> reads;
  root->walk([&](vector::ContractionOp contract) {
    MLIRContext *context = contract.getContext();
    AffineExpr i, j, k;
    bindDims(context, i, j, k);
    if (contract.getIndexingMapsArray()[0] !=
        AffineMap::get(3, 0, {k, i}, context))
      return;
    auto read = contract.getLhs().getDefiningOp<vector::TransferReadOp>();
    if (!read || !isa<RankedTensorType>(read.getBase().getType()) ||
        !read.getPermutationMap().isMinorIdentity() ||
        read.hasOutOfBoundsDim() || read.getMask() || !read->hasOneUse())
      return;
    VectorType type = read.getVectorType();
    if (type.getRank() != 2 || llvm::isPowerOf2_64(type.getDimSize(1)))
      return;
    reads.push_back(read);
  });
  for (vector::TransferReadOp read : reads) {
    rewriter.setInsertionPoint(read);
    Location loc = read.getLoc();
    VectorType type = read.getVectorType();
    // index + delta, folded when the index is a constant (the vectorizer's
    // reads of a tile start at 0).
    auto shifted = [&](Value index, int64_t delta) -> Value {
      if (std::optional<int64_t> start = getConstantIntValue(index))
        return arith::ConstantIndexOp::create(rewriter, loc, *start + delta);
      return arith::AddIOp::create(
          rewriter, loc, index,
          arith::ConstantIndexOp::create(rewriter, loc, delta));
    };
    SmallVector<Value> elements;
    for (int64_t row = 0; row < type.getDimSize(0); ++row)
      for (int64_t col = 0; col < type.getDimSize(1); ++col) {
        SmallVector<Value> indices(read.getIndices());
        indices[indices.size() - 2] = shifted(indices[indices.size() - 2], row);
        indices.back() = shifted(indices.back(), col);
        elements.push_back(
            tensor::ExtractOp::create(rewriter, loc, read.getBase(), indices));
      }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(read, type, elements);
  }
}

/// Replaces \p op by its vectorized form, if it vectorizes.
void vectorizeOp(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  // Contractions become one vector.contract of the register tile (not
  // broadcasts and a multi-reduction).
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, /*inputVectorSizes=*/{}, /*inputScalableVecDims=*/{},
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/true);
  if (succeeded(result))
    rewriter.replaceOp(op, result->replacements);
}

struct TileAndVectorizePass
    : public mlir::attn::impl::AttnTileAndVectorizeBase<TileAndVectorizePass> {
  using AttnTileAndVectorizeBase::AttnTileAndVectorizeBase;

  void runOnOperation() override {
    std::string why;
    std::optional<attn::CpuTarget> target =
        attn::resolveCpuTarget(cpu, cpuFeatures, why);
    if (!target) {
      getOperation().emitError("attn-tile-and-vectorize: ") << why;
      return signalPassFailure();
    }
    attn::RegisterTile tile = target->registerTile();
    int64_t tileRows = rows > 0 ? int64_t(rows) : tile.rows;
    int64_t tileCols = cols > 0 ? int64_t(cols) : tile.cols;
    int64_t steps =
        reductionTile >= 0 ? int64_t(reductionTile) : target->reductionSteps();

    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics())
        candidates.push_back(op);
    });
    // Tiles \p op by \p sizes and vectorizes the tiles.
    auto tileAndVectorize = [&](linalg::GenericOp op, ArrayRef<int64_t> sizes,
                                TileProduct product) {
      scf::SCFTilingOptions options;
      options.setTileSizes(getAsIndexOpFoldResult(&getContext(), sizes));
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), options);
      if (failed(tiled))
        return;
      rewriter.replaceOp(op, tiled->replacements);
      for (Operation *tiledOp : tiled->tiledOps) {
        // A named matmul vectorizes to a single vector.contract of the
        // tile. (A^T B is left generic: its named form, a matmul with
        // indexing maps, vectorizes to wrongly shaped vectors in MLIR 22.)
        auto generic = dyn_cast<linalg::GenericOp>(tiledOp);
        if (generic && product == TileProduct::AB) {
          rewriter.setInsertionPoint(generic);
          FailureOr<linalg::LinalgOp> named =
              linalg::specializeGenericOp(rewriter, generic);
          if (succeeded(named))
            tiledOp = named->getOperation();
        }
        vectorizeOp(rewriter, tiledOp);
      }
    };

    // A product whose accumulator is a fill (S = Q K^T from 0): the fill
    // is fused into the loops over register tiles, so each register tile
    // starts from a vector of the fill value, not from loads of a buffer
    // that was filled first (a memset of the whole tile).
    auto tileAndVectorizeFromFill = [&](linalg::GenericOp op,
                                        ArrayRef<int64_t> sizes,
                                        TileProduct product) -> bool {
      Value init = op.getDpsInitOperand(0)->get();
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (!fill || !init.hasOneUse())
        return false;
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(getAsIndexOpFoldResult(
          &getContext(), ArrayRef<int64_t>{sizes[0], sizes[1], 0}));
      scf::SCFTileAndFuseOptions fusion;
      fusion.setTilingOptions(tiling);
      fusion.setFusionControlFn(
          [](tensor::ExtractSliceOp, OpResult producer, bool)
              -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            if (isa<linalg::FillOp>(producer.getOwner()))
              return scf::SCFTileAndFuseOptions::ControlFnResult{};
            return std::nullopt;
          });
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTileAndFuseResult> fused =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, cast<TilingInterface>(op.getOperation()), fusion);
      if (failed(fused))
        return false;
      rewriter.replaceOp(op, fused->replacements.lookup(op->getResult(0)));
      auto tiledProduct =
          dyn_cast<linalg::GenericOp>(fused->tiledAndFusedOps.front());
      for (Operation *tiled : fused->tiledAndFusedOps)
        if (isa<linalg::FillOp>(tiled))
          vectorizeOp(rewriter, tiled);
      if (!tiledProduct)
        return true;
      tileAndVectorize(tiledProduct, {0, 0, sizes[2]}, product);
      return true;
    };

    for (linalg::GenericOp op : candidates) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      // A 0-d op has nothing to tile (and no last loop to size).
      if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      // The op's iteration count, saturated: a linalg op of the input may
      // count more than int64 holds.
      int64_t elements = 1;
      for (int64_t range : ranges)
        if (llvm::MulOverflow(elements, range, elements)) {
          elements = std::numeric_limits<int64_t>::max();
          break;
        }

      TileProduct product = classifyProduct(op);
      if (product != TileProduct::None) {
        SmallVector<int64_t> sizes = {0, dividingTile(ranges[1], tileCols),
                                      steps > 0 && ranges[2] > steps
                                          ? dividingTile(ranges[2], steps)
                                          : 0};
        // Rows in whole register tiles, and the rows a register tile of
        // rows that are not a power of two (AVX2's 6) leaves of the
        // power-of-two tiles as one shorter register tile: a 64-row tile
        // is ten 6-row tiles and one of 4, not 64 tiles of one row. (A^T B
        // too: readOddTransposedOperandsByElement reads its odd rows.)
        int64_t rows = ranges[0];
        int64_t wholeRows = rows / tileRows * tileRows;
        if (wholeRows == 0 || wholeRows == rows) {
          sizes[0] = std::min(rows, tileRows);
          if (!tileAndVectorizeFromFill(op, sizes, product))
            tileAndVectorize(op, sizes, product);
          continue;
        }
        rewriter.setInsertionPoint(op);
        auto [whole, rest] =
            linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()),
                            /*dimension=*/0, rewriter.getIndexAttr(wholeRows));
        auto wholeOp = dyn_cast_or_null<linalg::GenericOp>(
            whole ? whole.getOperation() : nullptr);
        auto restOp = dyn_cast_or_null<linalg::GenericOp>(
            rest ? rest.getOperation() : nullptr);
        if (!wholeOp || !restOp)
          continue;
        sizes[0] = tileRows;
        tileAndVectorize(wholeOp, sizes, product);
        sizes[0] = rows - wholeRows;
        tileAndVectorize(restOp, sizes, product);
        continue;
      }

      // Tile sizes per kind of op; nothing else is tiled here.
      SmallVector<int64_t> sizes;
      if (isColumnSum(op)) {
        // Columns of one register width at a time, all rows: the sums stay
        // in registers.
        sizes = {0, dividingTile(ranges[1], tileCols)};
      } else if (isTranscendentalMap(op)) {
        // exp and friends are long dependent chains: one vector of them per
        // loop iteration (what LLVM's loop vectorizer makes) is bound by
        // latency. About as many elements as a register tile give
        // independent chains, in rows of one machine vector: LLVM then
        // selects each op as is (wider rows it splits during type
        // legalization, which is most of the compile time).
        int64_t lanes = target->lanes();
        sizes.assign(ranges.size(), 1);
        sizes.back() = dividingTile(ranges.back(), lanes);
        // The last tile's map runs once per loop: one chain, least code.
        if (ranges.size() >= 2 && !op->hasAttr(attn::kPartialTileAttrName))
          sizes[ranges.size() - 2] = largestDivisorAtMost(
              ranges[ranges.size() - 2],
              tileRows * std::max<int64_t>(1, tileCols / lanes));
      }

      if (!sizes.empty())
        tileAndVectorize(op, sizes, TileProduct::None);
      else if (vectorizeAll && elements <= kMaxVectorElements)
        vectorizeOp(rewriter, op);
    }

    // Fold the transfers the vectorizer leaves around tensor slices.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorReductionToContractPatterns(patterns);
    // A^T B vectorizes with broadcasting reads; as explicit broadcasts they
    // fold into the contraction's maps (a plain 4 x 16 register tile).
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    readOddTransposedOperandsByElement(rewriter, getOperation());
  }
};
} // namespace
