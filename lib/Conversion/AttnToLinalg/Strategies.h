//===- Strategies.h - convert-attn-to-linalg internals ----------*- C++ -*-===//
//
// Shared between the files of lib/Conversion/AttnToLinalg and nowhere else:
//
//  - LinalgBuilder (LinalgBuilders.cpp): scalars, slices, padding and the
//    linalg.generic shapes (matmul, matvec, row reductions) every strategy
//    is made of;
//  - TermOperands: what a strategy reads of one term once its feature rows
//    exist (AttnToLinalg.cpp builds it, FeatureMaps.cpp the rows);
//  - the masks (Masks.cpp) as scalar predicates and visible ranges;
//  - one entry point per strategy, each taking an immutable tile
//    configuration: qk-first (QkFirst.cpp), kv-first (KvFirst.cpp) and the
//    chunked kv-first of causal and block masks (KvFirstChunked.cpp).
//
// The configurations are passed by value and never written: when one term
// emits two strategies (a run-time crossover), each keeps its own tiles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOLINALG_STRATEGIES_H
#define ATTN_LIB_CONVERSION_ATTNTOLINALG_STRATEGIES_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <utility>

namespace mlir {
namespace attn {
namespace to_linalg {

using utils::IteratorType;
inline constexpr IteratorType kPar = IteratorType::parallel;
inline constexpr IteratorType kRed = IteratorType::reduction;

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

/// Small IR builders over one ImplicitLocOpBuilder. They create every op
/// they are asked for (no folding or caching), so the IR is emitted in the
/// order of the calls.
class LinalgBuilder {
public:
  explicit LinalgBuilder(ImplicitLocOpBuilder &b) : b(b) {}

  // Scalars.
  Value index(int64_t v);
  Value f32(double v);
  /// Dimension \p d of \p tensor: a constant when static, else tensor.dim.
  Value dim(Value tensor, int64_t d);
  Value ceilDiv(Value a, int64_t c);
  Value mul(Value a, Value c);
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value minIdx(Value a, Value c);
  Value maxIdx(Value a, Value c);
  static Value indexToF32(OpBuilder &ob, Location loc, Value v);
  static OpFoldResult ofr(Value v);

  // Tensors.
  /// tensor.empty with the sizes given as index values; constant ones
  /// become static dimensions.
  Value empty(ArrayRef<Value> sizes);
  Value filled(ArrayRef<Value> sizes, double value);
  /// \p tensor filled with \p value (in place of its contents).
  Value refilled(Value tensor, double value);
  /// The 2-D slice [rows, cols] of the 4-D \p tensor at (bi, hi, row0, 0).
  Value tile2d(Value tensor, Value bi, Value hi, Value row0, int64_t rows,
               Value cols);
  Value tile2d(Value tensor, Value bi, Value hi, Value row0, Value rows,
               Value cols);
  /// The leading [rows, cols] of the 2-D \p tile.
  Value tile2d(Value tile, Value rows, Value cols);
  /// The leading [count] entries of the 1-D \p vector.
  Value leading(Value vector, Value count);
  /// The [width, tile] panel \p index of key panels (keyPanels) at (bi, hi).
  Value panel(Value panels, Value bi, Value hi, Value index, Value width,
              int64_t tile);
  /// The 1-D slice [cols] of the 3-D \p tensor at (bi, hi, offset), offset
  /// 0 when not given.
  Value tile1d(Value tensor, Value bi, Value hi, Value cols,
               Value offset = Value());
  /// [B, H, T·tile, X] -> [B, H, T, X, tile]: every tile of rows transposed
  /// into its own contiguous panel. A tile product then reads K^T with a
  /// row stride of `tile` floats, not of the sequence length (a stride of
  /// 4 KiB or a multiple maps every row to one L1 set and thrashes it).
  Value keyPanels(Value tensor, Value tiles, int64_t tile);
  /// Pads the sequence dimension (2) of a 4-D tensor with zero rows up to
  /// \p length.
  Value padRows(Value tensor, Value length);

  // linalg.generic.
  using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;
  Value generic(Value init, ValueRange inputs, ArrayRef<AffineMap> maps,
                ArrayRef<IteratorType> iterators, Body body);
  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims);
  static Value mulAdd(OpBuilder &ob, Location loc, Value x, Value y, Value acc);
  /// C[r, e] = init + sum_c A[r, c] B[c, e]
  Value matmulNN(Value a, Value bm, Value init);
  /// C[r, e] = init + sum_c A[c, r] B[c, e] (A^T B without a transpose: the
  /// register tile broadcasts A's elements, and a row of A holds a column
  /// of A^T)
  Value matmulTN(Value a, Value bm, Value init);
  /// y[c] = init + sum_r A[r, c]
  Value columnSum(Value a, Value init);
  /// A^T of a static 2-D tile, as a fresh tile.
  Value transposeTile(Value a);
  /// A (or A^T with \p transpose) written into the 2-D \p dest, widened to
  /// dest's element type: a copy into a buffer that already exists.
  Value copyInto(Value a, Value dest, bool transpose);
  /// Rows [row0, row0 + rows) of the 4-D \p tensor at (bi, hi) as a static
  /// [rows, X] tile, with zero rows where rows run past the sequence
  /// (\p validRows = min(rows, L - row0) of them are real).
  Value paddedTile(Value tensor, Value bi, Value hi, Value row0, int64_t rows,
                   Value cols, Value validRows);
  /// y[r] = init + sum_w A[r, w] x[w]
  Value matvec(Value a, Value x, Value init);
  /// y[r] = init (+ | max) over c of A[r, c]
  Value rowReduce(Value a, Value init, bool isMax);

  ImplicitLocOpBuilder &b;
};

//===----------------------------------------------------------------------===//
// The term as the strategies see it
//===----------------------------------------------------------------------===//

/// What a tile-wise strategy needs to compute phi of a tile of rows itself
/// (featureTile) rather than read it from the whole-sequence feature rows:
/// no scalar pass over the sequence, and the features of a tile are still
/// in L1 when the product reads them.
struct FeatureTiles {
  /// The kernel's feature map; none for softmax and relu2 (q s and k).
  std::optional<FeatureMap> map;
  /// softmax, relu2: the score scale s.
  Value scale;
  /// cosFormer: pi / 2L.
  Value angleScale;
  /// FAVOR+: s^(1/2), 1 / sqrt(m) and w^T [D, m]; RFA: 1 / sqrt(m), w^T.
  Value rootScale, invRootM, omegaT;
  /// FAVOR+ under the rows normaliser: the keys' stabiliser c_k subtracted
  /// from their exponents (favorStabiliser) as a [1] tensor and (CPU form)
  /// as a scalar; the queries subtract their row maxima. Else null.
  Value favorShiftTensor, favorShift;
};

/// A kernel term's decay and key weight (DESIGN §1.2; Decay.cpp).
struct DecayOperands {
  enum class Kind { None, Rate, PerHead, PerToken };
  Kind kind = Kind::None;
  /// Rate: log g as an f32 constant.
  Value logRate;
  /// PerHead: g [H]; PerToken: g [B, H, N].
  Value decay;
  /// kappa [B, H, M], or null.
  Value keyWeight;
  bool hasDecay() const { return kind != Kind::None; }
};

/// One term after the Linformer projection and the feature maps: the
/// operands every strategy tiles and the sizes and clauses they read. Built
/// once per term and only read afterwards.
struct TermOperands {
  RankedTensorType resultType;
  Score score = Score::Softmax;
  /// The term (for its feature map's clauses and operands) and V
  /// [B, H, M, E] (projected to M rows for Linformer).
  TermOp op;
  Value values;
  Value batch, heads, queries, keys, valueDim;
  /// W, the feature width (D, or the feature map's).
  Value width;
  /// Q [B, H, N, D] and (projected) K [B, H, M, D] before the feature map,
  /// D, and how to map their tiles.
  Value rawQ, rawK, featureDim;
  FeatureTiles features;
  /// The mask after projection (a projected term has none).
  MaskKind mask = MaskKind::None;
  int64_t block = 0;
  Normalizer normalizer = Normalizer::Rows;
  double eps = 0.0;
  DecayOperands decay;
  /// DESIGN §1.3: K and V have keyHeads heads, query head h reading key/value
  /// head h / groupSize (keyHead()); positionOffset = M - N turns a query
  /// row i into its position p_i = i + M - N, which causal and window masks
  /// compare with the key (signed: N > M makes it negative).
  Value keyHeads, groupSize, positionOffset;
  /// window(windowLeft, windowRight).
  int64_t windowLeft = 0, windowRight = 0;
  /// softmax and relu2: s <- c tanh(s / c), then s <- s - a_h |p_i - j| with
  /// a_h the standard slopes (alibi, no alibiSlopes) or alibiSlopes [H];
  /// softmax: sinks [H] in the denominator.
  std::optional<double> softcap;
  bool alibi = false;
  Value alibiSlopes, sinks;
  /// DESIGN §1.3's lengths [B] (f32 holding whole numbers), or null. Inside
  /// a strategy's per-batch code, forBatch() turns them into `keys` =
  /// min(M, L_b) and `queryLimit` = the rows that are not 0.
  Value keyLengths, queryLengths;
  Value queryLimit;
  /// softmax: the term returns lse [B, H, N] (DESIGN §1.3).
  bool returnsLse = false;
  /// DESIGN §1.2's state in (S0 [B, H, W, E], z0 [B, H, W] or null) and
  /// whether the term returns its final state (and norm).
  Value initialState, initialNorm;
  bool returnsState = false, returnsNorm = false;
};

/// The final states a term returns: S [B, H, W, E] and (rows) z [B, H, W].
struct FinalStates {
  Value state, norm;
};

/// The state a (batch, head) starts from: copies of its [W, E] and [W]
/// slices of S0 and z0 (the loops update them in place), or zeros.
std::pair<Value, Value>
initialStates(LinalgBuilder &b, const TermOperands &term, Value bi, Value hi);
/// The rows a per-(batch, head) forall fills for (bi, hi): its [outRows, E]
/// slice of the forall's output 0, or (\p fresh: static-tiles, padded rows)
/// a new tile; storeHeadRows puts them back (at the terminator).
Value headRows(LinalgBuilder &b, scf::ForallOp forall, Value bi, Value hi,
               Value outRows, Value valueDim, bool fresh);
void storeHeadRows(ImplicitLocOpBuilder &ob, scf::ForallOp forall, Value rows,
                   Value bi, Value hi, Value outRows, Value valueDim);

/// The shared outputs [B, H, W, E] (and [B, H, W]) of the final states,
/// appended to \p outs when the term returns them.
void appendStateOutputs(LinalgBuilder &b, const TermOperands &term,
                        SmallVectorImpl<Value> &outs);
/// Inserts (bi, hi)'s final \p state and \p norm into the forall's shared
/// outputs \p first and \p first + 1 (at the terminator's insertion point).
void insertFinalStates(ImplicitLocOpBuilder &ob, scf::ForallOp forall,
                       const TermOperands &term, unsigned first, Value bi,
                       Value hi, Value state, Value norm);
/// The forall's final-state results from \p first on.
FinalStates finalStatesOf(scf::ForallOp forall, const TermOperands &term,
                          unsigned first);

//===----------------------------------------------------------------------===//
// Decay and key weights (Decay.cpp)
//===----------------------------------------------------------------------===//

DecayOperands buildDecayOperands(LinalgBuilder &b, TermOp op);

/// log g_t [rows] of the positions t = row0 + r, 0 for t >= N (padding
/// decays nothing).
Value tokenLogDecay(LinalgBuilder &b, const TermOperands &term, Value bi,
                    Value hi, Value row0, int64_t rows);

/// lambda [rows]: lambda_r = sum of log g_t over the positions t in
/// [row0, row0 + r] that are < N (a tile's in-chunk cumulative log decay).
Value chunkLogDecay(LinalgBuilder &b, const TermOperands &term, Value bi,
                    Value hi, Value row0, int64_t rows);

/// Per-token decay only: Lambda [B, H, L'] with Lambda_i = sum_{t <= i} log g_t
/// (constant past N), L' >= \p length a whole number of scan chunks.
Value prefixLogDecay(LinalgBuilder &b, const TermOperands &term, Value length);

/// log d_ij (<= 0) of the pair (i, j <= i) of head \p hi, inside a linalg
/// body; \p prefixI and \p prefixJ are Lambda_i and Lambda_j (per-token decay
/// only, else unused).
Value pairLogDecay(OpBuilder &ob, Location loc, const TermOperands &term,
                   Value hi, Value i, Value j, Value prefixI, Value prefixJ);

/// The key feature tile \p phiK [rows, W] of rows [row0, row0 + rows) times
/// kappa row by row (itself without a key weight).
Value applyKeyWeight(LinalgBuilder &b, const TermOperands &term, Value phiK,
                     Value bi, Value hi, Value row0);
/// The whole-sequence key features phi(K) [B, H, M, W] times kappa.
Value applyKeyWeightRows(LinalgBuilder &b, const TermOperands &term,
                         Value phiK);

/// A FAVOR+ stabiliser of \p omega [m, D], as a [1] f32 tensor: c = max(0,
/// max_r |w_r|^2 / 2 - headroom). Every exponent w x' - |x'|^2 / 2 = |w|^2 / 2
/// - |x' - w|^2 / 2 is at most max_r |w_r|^2 / 2, whatever x, so exp(... - c)
/// <= e^headroom: phi(q) . phi(k) and the sums over keys stay finite (the
/// unstabilised map overflows for |q| ~ 28 at D = 64). Under the rows
/// normaliser (DESIGN §1) it cancels exactly, eps scaled alike (per query
/// row). Keys subtract c(kFavorKeyHeadroom), queries their own row maximum
/// less kFavorHeadroom (features <= e^20 / sqrt(m): a row cannot underflow
/// as a whole either).
Value favorStabiliser(LinalgBuilder &b, Value omega, double headroom);
/// Query features stay below e^20 / sqrt(m).
constexpr double kFavorHeadroom = 20.0;
/// Key features stay below e^36 / sqrt(m): with queries <= e^20, phi(q) S and
/// the sums over up to 2^31 keys (e^21.5) of values up to e^10 stay below
/// e^88 (f32's largest); a smaller headroom would push a key's small
/// features (an aligned key's others) into denormals for nothing.
constexpr double kFavorKeyHeadroom = 36.0;

/// X'[b, h, r, d] = sum_j P[r, j] X[b, h, j, d] (Linformer's E K and F V):
/// register-tiled products over tiles of \p tile rows of the sequence, one
/// (batch, head) per forall iteration; with \p staticTiles (the GPU form)
/// one linalg.generic.
Value projectSequence(LinalgBuilder &b, Value projection, Value x, int64_t tile,
                      bool staticTiles);

/// The whole-sequence feature rows phi(Q) [B, H, N, W] and phi(K)
/// [B, H, M, W] of the term; softmax and relu2 get (Q s, K). Built where a
/// strategy that reads them (qk-first, chunked) asks, so that the other
/// branch of a crossover does not pay for them.
/// Stabilised FAVOR+ (favorStabiliser) only when \p queryRowEps is given: it
/// gets the rows' eps [B, H, N, 1] for normalizeRows.
std::pair<Value, Value> buildFeatureRows(LinalgBuilder &b,
                                         const TermOperands &term,
                                         Value *queryRowEps = nullptr);

/// The scalars of \p op's feature map (w^T for FAVOR+), for featureTile;
/// \p staticTiles: the GPU form, whose tensors the host must not read.
FeatureTiles buildFeatureTiles(LinalgBuilder &b, TermOp op, Value queries,
                               Value featureDim, bool staticTiles);

/// phi of the static [rows, D] \p tile of Q or K whose row r is sequence
/// position row0 + r: [rows, W]. Rows r >= \p validRows (when given) are 0.
/// softmax and relu2 (no feature map) give Q s on the query side and K
/// itself on the \p keySide.
/// With FAVOR+'s CPU stabiliser, the query side subtracts each row's own
/// maximum c_r and returns c_r in \p rowShift ([rows]) when given.
Value featureTile(LinalgBuilder &b, const FeatureTiles &features, Value tile,
                  Value row0, Value validRows, bool keySide = false,
                  Value *rowShift = nullptr);

/// Whether featureTile is one elementwise linalg.generic of its tile (pointwise
/// maps, cosFormer, q s): it can read the input's slice in place.
bool isElementwiseFeature(const FeatureTiles &features, bool keySide);

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

/// \p term as batch element \p bi sees it (DESIGN §1.3's lengths): `keys`
/// = the keys j < L_b, clamped to [0, M] (every `j < keys` test, padded tile
/// and visible range then stops there), and `queryLimit` = the rows
/// i < L'_b, which maskAllows hides every key from (so they are 0). The term
/// itself without lengths.
TermOperands forBatch(LinalgBuilder &b, const TermOperands &term, Value bi);

/// The key/value head that query head \p hi reads (DESIGN §1.3).
Value keyHead(LinalgBuilder &b, const TermOperands &term, Value hi);

/// Emits `the term's mask lets query row i see key j` (i1) for index values
/// i, j (causal and window masks at the row's position i + M - N).
Value maskAllows(OpBuilder &ob, Location loc, const TermOperands &term, Value i,
                 Value j);

/// The number of keys j < keys that the term's mask lets query row i see,
/// as f32.
Value visibleKeys(OpBuilder &ob, Location loc, const TermOperands &term,
                  Value i, Value keys);

/// Whether query row i sees key j: a real key (j < keys) the mask allows.
Value keyVisible(OpBuilder &ob, Location loc, const TermOperands &term, Value i,
                 Value j);

/// Whether row r of a tile sees its key column c (tile coordinates).
using TileVisibility =
    function_ref<Value(OpBuilder &, Location, Value r, Value c)>;

/// acc + W V over the visible pairs of a tile only. Where the tile is wholly
/// visible (\p fullyVisible, an i1) or, with \p testFinite, V holds no NaN
/// or infinity, this is the plain register-tiled product: a hidden pair's
/// weight is 0. Otherwise each hidden pair's term W[r, c] V[c, e] is dropped
/// (\p visible), so that a NaN or infinity in the value of a key a row does
/// not see cannot reach that row through 0 * NaN = NaN. (The GPU form does
/// not test V: the test reads a tile on the host side of a branch, which
/// the GPU mapping cannot place.)
Value visibleProduct(LinalgBuilder &b, Value weights, Value values, Value acc,
                     Value fullyVisible, TileVisibility visible,
                     bool testFinite);

/// Whether the mask lets every query row in [row0, row0 + rows) see every key
/// in [col0, col0 + cols) and all those keys are real (< keys): such a tile
/// needs no mask. Rows past the queries are padding and count as seeing.
Value tileFullyVisible(LinalgBuilder &b, const TermOperands &term, Value row0,
                       int64_t rows, Value col0, int64_t cols);
/// The same for the query rows [firstRow, lastRow].
Value tileFullyVisible(LinalgBuilder &b, const TermOperands &term,
                       Value firstRow, Value lastRow, Value col0, int64_t cols);

/// The first and one-past-last key tile (of \p keyTile keys) that the query
/// rows [row0, row0 + queryTile) can see, out of \p keyTiles.
std::pair<Value, Value> visibleKeyTiles(LinalgBuilder &b,
                                        const TermOperands &term,
                                        int64_t queryTile, int64_t keyTile,
                                        Value row0, Value keyTiles);

/// The query row i of tile row \p r, inside a linalg body.
using TileRowQuery = function_ref<Value(OpBuilder &, Location, Value r)>;
/// The ALiBi slope a_h of tile row \p r's head, inside a linalg body.
using TileRowSlope = function_ref<Value(OpBuilder &, Location, Value r)>;

/// DESIGN §1.3's a_h of head \p hi as f32: the ALiBi reference's slopes
/// (2^(-8(h+1)/n) for the n = 2^floor(log2 H) first heads, then every other
/// slope of the rule for 2n) or the slopes operand's entry.
Value alibiSlope(LinalgBuilder &b, const TermOperands &term, Value hi);

/// The score tile after DESIGN §1.3's soft-cap (s <- c tanh(s / c)) and,
/// with \p slopeOf, the ALiBi bias (s <- s - a_h |p_i - j|), before the
/// mask; column c is key col0 + c.
Value modifyScores(LinalgBuilder &inner, const TermOperands &term, Value scores,
                   TileRowQuery rowQuery, Value col0, TileRowSlope slopeOf);

/// The weights of an undecayed score tile (softmax: the scores, -inf where
/// \p visible says a pair is hidden; relu2: relu(s)^2, 0 there), masked only
/// where the tile needs it: most tiles of a long sequence are wholly visible
/// (\p full; the mask's diagonal and the padded last key tile are not), and
/// a masking pass over every tile costs as much as its max or sum.
Value weightsOf(LinalgBuilder &inner, const TermOperands &term, Value scores,
                Value full, TileVisibility visible);

/// One online-softmax step on the weights \p weights of a key tile, with
/// \p tt the number of query rows; yields (newMax, z, acc) from the loop
/// carrying \p iter = (m, z, acc). A row with no visible key so far keeps
/// -inf, and its weights and correction are 0 rather than NaN. Every update
/// writes into its loop-carried tensor so that bufferization reuses the
/// buffers across iterations. With \p iter = (m, z, acc, scores, rowMax),
/// the last two are scratch tiles carried for the same reason: \p weights
/// was computed in `scores`, and the tile maximum is reduced into `rowMax`;
/// the step yields the probabilities and the row shifts (written over the
/// tile maximum) in their places. With \p skipSettledRescale, acc is scaled
/// only where some row's correction is not 1 (a branch on a value of the
/// tile: the CPU form; the GPU mapping keeps such a branch on the host).
/// With \p staleMax as well, m moves only where a tile's maximum exceeds it
/// by more than kStaleMaxSlack: only for a quotient acc / z (normaliser
/// rows, eps = 0), which any common m leaves the same.
void onlineSoftmaxStep(LinalgBuilder &inner, Value tt, Value weights,
                       Value vTile, Value negInf, ValueRange iter, Value full,
                       TileVisibility visible, bool testFinite,
                       bool skipSettledRescale = false, bool staleMax = false);

//===----------------------------------------------------------------------===//
// Shared pieces of the strategies
//===----------------------------------------------------------------------===//

/// phi(Q), phi(K)^T and V padded with zero rows to whole tiles, so that every
/// tile has a static number of rows.
struct PaddedOperands {
  Value queryTiles, keyTiles, queries, keysT, values;
  /// Stabilised FAVOR+: the query rows' eps [B, H, padded N, 1]; else null.
  Value rowEps;
};
PaddedOperands padToTiles(LinalgBuilder &b, const TermOperands &term,
                          int64_t queryTile, int64_t keyTile);

/// What qk-first reads for every query tile, made once, in parallel and
/// without a whole-sequence feature pass.
struct KeyPanels {
  /// phi(K)^T in tile panels [B, H, T, W, keyTile], built by one
  /// scf.forall over (batch, head, key tile) from K itself.
  Value panels;
  /// f32 values: V's last key tile zero-padded [B, H, keyTile, E] (the
  /// whole tiles are read from V in place; valueTile). Otherwise V widened
  /// and zero-padded to whole tiles [B, H, T keyTile, E].
  Value values;
  bool lastValueTileOnly = false;
};
KeyPanels keyPanelsAndValues(LinalgBuilder &b, const TermOperands &term,
                             int64_t keyTile, Value keyTiles);

/// The [keyTile, E] values of the key tile whose first row is \p col0, at
/// (bi, hi):
/// a slice of V itself for a whole tile, of the padded last tile otherwise.
/// Both are slices with rows E apart, so the tile's buffer keeps static
/// strides.
Value valueTile(LinalgBuilder &b, const TermOperands &term,
                const KeyPanels &panels, Value bi, Value hi, Value col0,
                int64_t keyTile);

/// out[r, e] = num[r, e] / z_r over \p rows rows, 0 where z_r = 0; z_r is
/// sums_r + eps (rows), the visible key count (length) or 1 (none). Row r is
/// query row0 + r. With \p validRows, only the first validRows rows.
/// \p rowEps ([rows] or [rows, 1]), when given, replaces eps row by row
/// (stabilised FAVOR+ queries: queryFeatureTile, buildFeatureRows).
Value normalizeRows(LinalgBuilder &b, const TermOperands &term, Value num,
                    Value sums, Value row0, int64_t rows,
                    Value validRows = Value(), Value rowEps = Value());

/// Rows [row0, row0 + rows) of the 4-D \p tensor [B, H, L, X] at (bi, hi)
/// as a fresh static [rows, X] tile: a copy of a whole tile, or the rows
/// left before L (none once row0 >= L) padded with zero rows. (Both branches
/// own their buffer, so the tile keeps an identity layout: a slice and a padded
/// copy would merge to a fully dynamic one, whose vector reads are scalar
/// loads.)
Value rowTile(LinalgBuilder &b, Value tensor, Value bi, Value hi, Value row0,
              int64_t rows, Value length);

/// What the rows of a tile become (consumeRowTile), built in each branch of
/// its scf.if: from the input's slice itself for a whole tile (\p validRows
/// null), from the zero-padded rows left for the last one (validRows: its
/// real rows). The tile has the input's element type.
using RowTileConsumer =
    function_ref<Value(LinalgBuilder &b, Value tile, Value validRows)>;

/// consume(rows [row0, row0 + rows) of \p tensor): rowTile with a consumer
/// in place of its copy. An elementwise consumer (a feature map) whose
/// result owns its buffer in both branches reads a whole tile in place.
Value consumeRowTile(LinalgBuilder &b, Value tensor, Value bi, Value hi,
                     Value row0, int64_t rows, Value length,
                     RowTileConsumer consume);

/// What the row tiles of several tensors become (consumeRowTiles): the
/// values of one branch, the same types in both.
using RowTilesConsumer = function_ref<SmallVector<Value>(
    LinalgBuilder &b, ArrayRef<Value> tiles, Value validRows)>;

/// consumeRowTile over the same rows of several [B, H, L, X] \p tensors at
/// once (kv-first's K and V): one scf.if whose whole branch reads each in
/// place. The partial branch's linalg ops are marked attn.partial_tile.
SmallVector<Value> consumeRowTiles(LinalgBuilder &b, ArrayRef<Value> tensors,
                                   Value bi, Value hi, Value row0, int64_t rows,
                                   Value length, RowTilesConsumer consume);

/// min(rows, L - row0), and 0 once row0 >= L: the real rows of the tile of
/// \p rows rows at row0 of a sequence of \p length.
Value realRows(LinalgBuilder &b, Value row0, int64_t rows, Value length);

/// phi(Q) of the query rows [row0, row0 + rows) at (bi, hi), from Q itself:
/// [rows, W]. Rows past N are zero padding; their outputs are never stored.
/// With FAVOR+'s CPU stabiliser (rows scaled by exp(-c_r - c)), \p rowEps
/// gets eps exp(-c_r - c) per row for normalizeRows, which the caller must
/// pass on; null otherwise.
Value queryFeatureTile(LinalgBuilder &b, const TermOperands &term, Value bi,
                       Value hi, Value row0, int64_t rows, Value &rowEps);

/// phi(K) of the key rows [row0, row0 + rows) at (bi, hi), from K itself:
/// [rows, W], 0 on the rows past M (K as it is for softmax and relu2).
Value keyFeatureTile(LinalgBuilder &b, const TermOperands &term, Value bi,
                     Value hi, Value row0, int64_t rows);

/// scf.forall over \p upperBounds writing [B, H, N, E] in tiles of \p rows
/// query rows: \p body returns the [validRows, E] rows of the iteration's
/// (bi, hi, rowOf(ivs)), validRows = min(rows, N - row0). With
/// \p staticTiles, validRows is null, the body returns all [rows, E] and
/// the tiles go through a padded [B, H, whole tiles, E] buffer.
/// With \p perRowResult, the body also returns one value per row
/// (RowTile::perRow, [validRows] or, static-tiles, [rows]), which go to a
/// second output [B, H, N] returned there (the log-sum-exp).
struct RowTile {
  Value rows;
  Value perRow = {};
};
Value forallRowTiles(
    LinalgBuilder &b, const TermOperands &term, int64_t rows, bool staticTiles,
    ArrayRef<Value> upperBounds,
    function_ref<RowTile(ValueRange ivs, Value validRows)> body,
    function_ref<Value(ValueRange ivs)> rowOf, Value *perRowResult = nullptr);

/// \p tensor as f32: itself, or an f16 / bf16 tensor (C19) widened.
Value widened(LinalgBuilder &b, Value tensor);

/// \p tensor with its elements converted to \p elementType (arith.extf
/// to a wider float type, arith.truncf to a narrower one), elementwise.
Value convertElements(LinalgBuilder &b, Value tensor, Type elementType);

/// The term's [B, H, N, E] result from the output \p out of a strategy:
/// its first N rows when \p padded (static-tiles: a whole number of tiles),
/// else \p out itself, cast to the term's type where a size is static only
/// there.
Value termResult(LinalgBuilder &b, const TermOperands &term, Value out,
                 bool padded);

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

/// qk-first: one forall iteration per (batch, head, query tile) and a loop
/// over the visible key tiles with an online normaliser.
struct QkFirstTiles {
  /// Query rows per forall iteration.
  int64_t queryTile;
  /// Keys per score tile (the score tiles are queryTile x keyTile).
  int64_t keyTile;
  /// The pass's static-tiles.
  bool staticTiles;
};
/// With \p lse (softmax), also lse [B, H, N] = m + log z per row, -inf for
/// rows that see no key.
Value lowerQkFirst(LinalgBuilder &b, const TermOperands &term,
                   const QkFirstTiles &tiles, Value *lse = nullptr);

/// Split-key qk-first for a few query rows (a decode step): the r query
/// heads of a key/value head stacked as the rows of one tile, so that each
/// key and value tile is read once per group and in place; the visible keys
/// split across forall iterations in runs of splitTiles key tiles, whose
/// partial (m, z, acc) a second forall merges (flash-decoding).
struct SplitKeyTiles {
  /// Stacked query rows per tile: r N for a static N, else r N_max.
  int64_t rows;
  int64_t keyTile;
  int64_t splitTiles;
};
Value lowerSplitKeys(LinalgBuilder &b, const TermOperands &term,
                     const SplitKeyTiles &tiles, Value *lse = nullptr);

/// lse = m + log z per row, -inf where m = -inf (no visible key): the
/// log-sum-exp of a softmax row from its maximum \p maxes and its sum
/// \p sums (both [rows], the sink's term included in the sum).
Value logSumExpRows(LinalgBuilder &b, Value maxes, Value sums);

/// kv-first without a mask: a state pass over key tiles, then a query pass
/// over query tiles.
struct KvFirstTiles {
  int64_t queryTile;
  int64_t keyTile;
  /// The pass's static-tiles: whole padded feature rows, not tiles mapped
  /// one by one.
  bool staticTiles;
};
Value lowerKvFirst(LinalgBuilder &b, const TermOperands &term,
                   const KvFirstTiles &tiles);

/// kv-first with a causal or block mask: per (batch, head) a loop over chunks
/// of `chunk` rows carrying the W x E state of the keys before the chunk.
struct ChunkPlan {
  int64_t chunk;
  /// Inside a chunk: causal scores (causal, block_causal) or all of the
  /// chunk's keys (block, whose chunk is the block).
  bool intraCausal;
  bool intraFull;
  /// Whether the state of earlier chunks is carried (all but block).
  bool carry;
  /// In chunks; the state restarts every resetEvery chunks (block_causal),
  /// 0 = never.
  int64_t resetEvery;
  /// The pass's static-tiles: whole padded feature rows and a padded output,
  /// not tiles mapped one by one and the real rows stored in place.
  bool staticTiles = false;
};
/// The chunks of \p mask (not None): the term's `chunk` (else
/// \p defaultChunk) for causal masks, the block for block masks.
ChunkPlan planChunks(MaskKind mask, int64_t block,
                     std::optional<int64_t> termChunk, int64_t defaultChunk);
Value lowerKvFirstChunked(LinalgBuilder &b, const TermOperands &term,
                          const ChunkPlan &plan,
                          FinalStates *finalStates = nullptr);

/// The recurrent order (causal kernel terms): per (batch, head) the tokens
/// one by one, their features mapped `tile` rows at a time.
struct RecurrentTiles {
  int64_t tile;
  bool staticTiles;
};
Value lowerRecurrent(LinalgBuilder &b, const TermOperands &term,
                     const RecurrentTiles &tiles,
                     FinalStates *finalStates = nullptr);

} // namespace to_linalg
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTOLINALG_STRATEGIES_H
