//===- CostModel.h - Choose the association order and chunk ----*- C++ -*-===//
//
// For one attention term with concrete sizes, estimates every legal strategy
// (qk-first, kv-first, kv-first chunked for causal masks) in FLOPs, bytes
// moved, peak extra memory and predicted time on a target, and picks the
// fastest. Plain C++ with no MLIR types, so the driver, the pass and the unit
// tests share it; docs/CostModel.md explains the formulas and their limits.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_COSTMODEL_H
#define ATTN_ANALYSIS_COSTMODEL_H

#include "attn/Reference/Reference.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attn {
namespace cost {

using reference::FeatureMap;
using reference::MaskKind;
using reference::Score;

/// The sizes and kind of one term (DESIGN §1), as the cost model sees it.
struct TermShape {
  Score score = Score::Softmax;
  FeatureMap featureMap = FeatureMap::None;
  MaskKind mask = MaskKind::None;
  int64_t maskBlock = 0;       ///< c of block / block_causal / prior_blocks.
  int64_t windowLeft = 0;      ///< l of window(l, r)
  int64_t windowRight = 0;     ///< r of window(l, r)
  int64_t batch = 1;           ///< B
  int64_t heads = 1;           ///< H
  /// H_kv, the heads of K and V (DESIGN §1.3 grouped heads); 0 means H.
  int64_t keyHeads = 0;
  /// Only qk-first evaluates the term (a window or grouped heads on a kernel
  /// term, the dialect's C15).
  bool qkFirstOnly = false;
  int64_t queries = 1;         ///< N
  /// N (M) is known when the code is compiled: qk-first's query (key) tiles
  /// are then at most N rows (M keys rounded up to 8); a dynamic length runs
  /// whole tiles, padded.
  bool staticQueries = true;
  bool staticKeys = true;
  int64_t keys = 1;            ///< M
  int64_t featureDim = 1;      ///< D
  int64_t valueDim = 1;        ///< E
  int64_t numFeatures = 0;     ///< m of FAVOR+ and RFA (0 otherwise).
  int64_t projectedLength = 0; ///< Linformer k (0 = no projection).
  /// A decay (DESIGN §1.2): every weight carries exp(Λ_i − Λ_j).
  bool decay = false;
  /// A state in or out (DESIGN §1.2): read and written once per head.
  bool state = false;

  /// Width of the vectors whose dot product gives the weight: D for softmax
  /// and relu2, φ's width for kernel terms (D, m, or 2D for cosFormer).
  int64_t scoreWidth() const;
  /// Keys the term attends over: k when projected, else M.
  int64_t attendedKeys() const;
  bool hasProductForm() const { return score == Score::Kernel && !qkFirstOnly; }
  /// True for masks that contain j ≤ i (their kv-first form needs prefix
  /// states, computed chunk by chunk).
  bool isCausal() const {
    return mask == MaskKind::Causal || mask == MaskKind::BlockCausal;
  }
  /// True when the recurrent order is legal: a causal kernel term.
  bool hasRecurrentForm() const {
    return hasProductForm() && mask == MaskKind::Causal && projectedLength <= 0;
  }
};

/// A machine, as a roofline with per-kernel-family efficiencies. FLOP counts
/// alone mispredict attention crossovers by ~4x: the efficiencies say how
/// close each family of loops gets to the machine's peak.
struct Target {
  std::string name = "cpu";
  double peakFlops = 210e9;      ///< FLOP/s of all cores together (fp32).
  double memoryBandwidth = 31e9; ///< Bytes/s.
  int64_t cores = 2;
  int64_t elementBytes = 4; ///< f32
  /// FLOPs charged for one exp (the weight of softmax and FAVOR+).
  double expFlops = 8;
  /// Fraction of peakFlops each family reaches.
  double qkEfficiency = 0.5;       ///< tiled (flash) qk-first loops
  double kvEfficiency = 0.7;       ///< kv-first: two GEMM-shaped contractions
  double chunkedEfficiency = 0.45; ///< small c×c blocks plus state updates
  double featureEfficiency = 0.25; ///< elementwise feature maps
  /// The recurrent order's per-token state updates and queries (rank-1
  /// updates and matrix-vector products over a state that stays in cache).
  double recurrentEfficiency = 0.2;
  /// The state contractions of chunked kv-first run at kvEfficiency·c/(c+h)
  /// for chunk c: small chunks make small, latency-bound products. h is the
  /// chunk at which they reach half of kvEfficiency.
  double chunkHalfEfficiency = 4;
  /// The same for the state's width: kv-first's contractions run at
  /// kvEfficiency / (1 + h_c/c + h_w/w) for chunk c (0 for plain kv-first)
  /// and state width w = min(φ's width, the value width): narrow states make
  /// narrow products (on Sapphire Rapids a 64-wide state runs at ~0.8x the
  /// rate of a 128-wide one). Built-in: 0.
  double kvWidthHalfEfficiency = 0;
  /// Seconds per chunk of causal chunked kv-first, per (batch, head): the
  /// per-chunk work whose size does not follow the state's (the loop step,
  /// its small intra-chunk products' set-up). Built-in: 0.
  double chunkOverhead = 0;
  /// Seconds per query row and value column of the qk-first loops, per
  /// (batch, head): the work each output row costs apart from its pairs
  /// (its Q rows' copy-in, the accumulator's set-up, the final division,
  /// the output's stores), which one or two key tiles do not amortise.
  /// Built-in: 0.
  double qkRowCost = 0;
  /// Query rows per tile of the qk-first loops: K and V are re-read once
  /// per query tile.
  int64_t queryTile = 64;
  /// Key rows per tile of the qk-first loops (the `chunk` it records).
  int64_t keyTile = 64;
  /// 1: the qk-first loops compute whole query × key tiles (a partial tile
  /// padded, a diagonal tile of a causal mask in full), so their time
  /// follows the tiles' pairs rather than the unmasked ones, the tiles a
  /// mask cuts at the masked efficiency and the wholly visible ones at the
  /// unmasked one; 0 (built-in): the unmasked pairs, all of a masked term
  /// at the masked efficiency. The FLOPs reported are the unmasked ones
  /// either way.
  int64_t qkWholeTiles = 0;
  /// Fixed cost per kernel launch or parallel loop, in seconds.
  double launchOverhead = 2e-6;
  /// Fraction of peakFlops the qk-first loops of kernel and relu2 terms
  /// reach (no exp, no running max); < 0: qkEfficiency.
  double qkKernelEfficiency = -1;
  /// The same in the tiles a mask cuts (with qk_whole_tiles; else for the
  /// whole of a causal or block-masked term), for softmax and for kernel /
  /// relu2 terms; < 0: the unmasked efficiency.
  double qkMaskedEfficiency = -1;
  double qkKernelMaskedEfficiency = -1;
  /// Fixed seconds per (batch, head) and call of each kind of strategy
  /// (setting up tiles, workspaces and states, which small N do not
  /// amortise): qk-first unmasked and masked, kv-first, causal chunked
  /// kv-first. Built-in: 0 (launch_overhead only).
  double qkHeadOverhead = 0;
  double qkMaskedHeadOverhead = 0;
  double kvHeadOverhead = 0;
  double chunkedHeadOverhead = 0;
  double recurrentHeadOverhead = 0;
  /// The same per call, on top of launch_overhead per launch.
  double qkCallOverhead = 0;
  double qkMaskedCallOverhead = 0;
  double kvCallOverhead = 0;
  double chunkedCallOverhead = 0;
  double recurrentCallOverhead = 0;
  /// Measured correction of causal chunked kv-first per chunk 2^(4+i)
  /// (16 ... 1024): its predicted compute time is multiplied by it, for
  /// chunk sizes whose code runs faster or slower than the chunk formula
  /// says (register tiles that fit or not). < 0: none.
  static constexpr int kChunkScales = 7;
  double chunkScale[kChunkScales] = {-1, -1, -1, -1, -1, -1, -1};
  /// The index of \p chunk in chunkScale, or -1 for another chunk.
  static int chunkScaleIndex(double chunk);
  /// The scale of \p chunk (1 when none).
  double chunkScaleFor(double chunk) const;

  //===--- Where the numbers come from -------------------------------===//
  /// The machine `attnc calibrate` measured (empty: not calibrated).
  std::string machine;
  /// When it measured (free text).
  std::string calibrated;
  /// The file read, or empty for the built-in numbers.
  std::string source;

  /// The efficiency of a qk-first loop with or without exp and mask.
  double qk(bool exp, bool masked) const;
};

/// The version of the target file format (the `version` key) and of the
/// formulas a calibration fits: a file of another version is stale.
constexpr int64_t kTargetFormatVersion = 3;

/// This kind of machine: AMD EPYC Zen 4, 2 cores, ~105 GFLOP/s fp32 sgemm per
/// core, ~31 GB/s with both cores.
Target cpuTarget();
/// NVIDIA H200: 67 TFLOP/s fp32 (989 bf16 dense nominal, for later), 4.3 TB/s.
Target nvptxTarget();

/// Reads a target from a small text file of `key = value` lines (`#`
/// comments); keys are the field names of Target (peak_flops,
/// memory_bandwidth, cores, element_bytes, exp_flops, qk_efficiency,
/// qk_kernel_efficiency, qk_masked_efficiency,
/// qk_kernel_masked_efficiency, kv_efficiency, qk_head_overhead,
/// qk_masked_head_overhead, kv_head_overhead, chunked_head_overhead, the
/// same four with call instead of head,
/// chunk_scale_16 ... chunk_scale_1024,
/// chunked_efficiency, feature_efficiency, chunk_half_efficiency,
/// chunk_overhead, qk_row_cost, kv_width_half_efficiency,
/// query_tile, key_tile, qk_whole_tiles, launch_overhead), `base =
/// cpu|nvptx` to start from
/// a built-in one, and the calibration's `version` (must be
/// kTargetFormatVersion when present), `machine` and `calibrated`. A JSON
/// object with the same keys is accepted too. Returns an empty string on
/// success, else a message naming the line. loadTarget records the path in
/// Target::source.
std::string loadTarget(const std::string &path, Target &target);
std::string parseTarget(const std::string &text, Target &target);
/// \p target as a file parseTarget reads back to the same numbers (with
/// `version`, and `machine` / `calibrated` when set); \p header lines are
/// written first as `#` comments.
std::string printTarget(const Target &target, const std::string &header);

enum class Order { QkFirst, KvFirst, Recurrent };
const char *toString(Order order);

/// "12.3 us", "1.23 ms" (\p decimals digits), "1.23 s".
std::string formatSeconds(double seconds, int decimals);
/// "%.3g".
std::string formatNumber(double value);

/// What a strategy computes, by kernel family: the counts a target's rates
/// turn into time (computeSeconds), and what a calibration fits them to.
struct Work {
  double heads = 0;      ///< B·H
  double qkFlops = 0;    ///< qk-first pair loops, unmasked terms
  bool qkExp = false;    ///< those loops carry an exp (softmax)
  bool qkMasked = false; ///< under a causal or block mask
  /// The part of qkFlops in tiles a mask (or the key count) cuts, which
  /// runs at the masked efficiency; the rest runs at the unmasked one.
  double qkCutFlops = 0;
  double stateFlops = 0; ///< kv-first state and query contractions
  /// For causal chunked kv-first: the chunk c (the state contractions run
  /// at kv_efficiency · c/(c + chunk_half_efficiency)); 0 otherwise.
  double chunk = 0;
  double intraFlops = 0;      ///< quadratic part inside causal chunks
  double chunks = 0;          ///< causal chunks, over all (batch, head)
  /// kv-first: the state's width min(φ's width, value width); 0: none.
  double stateWidth = 0;
  /// qk-first: query rows × value columns, over all (batch, head).
  double qkRowElements = 0;
  double featureFlops = 0;    ///< feature maps
  double recurrentFlops = 0;  ///< the recurrent order's per-token updates
  double projectionFlops = 0; ///< Linformer's K' and V'
  double bytes = 0;
  int launches = 0;
};

/// The compute side of the roofline of \p work on \p target.
double computeSeconds(const Work &work, const Target &target);
/// max(compute, bytes / bandwidth) + launches · launch_overhead.
double predictSeconds(const Work &work, const Target &target);

/// A measured time of some work (attnc calibrate's microbenchmarks).
struct Measurement {
  Work work;
  double seconds = 0;
};

/// Fits \p target's efficiencies, chunk_half_efficiency, per-head overheads
/// and chunk scales (peak, bandwidth and tiles stay) to \p measurements:
/// weighted least squares on relative error of the compute side plus the
/// fixed costs, every rate non-negative; then each measured chunk's scale
/// as the geometric mean of its measured over predicted times. A family no
/// measurement exercises keeps its number; launch_overhead becomes 0 (the
/// per-head overheads hold the fixed costs).
void fitTarget(const std::vector<Measurement> &measurements, Target &target);

/// The estimate of one way to compute a term.
struct Strategy {
  Order order = Order::QkFirst;
  /// The sequence chunk: the key tile of qk-first, the state chunk of causal
  /// kv-first; std::nullopt for plain kv-first.
  std::optional<int64_t> chunk;
  std::string description;
  double flops = 0;          ///< A multiply-add counts 2.
  double bytes = 0;          ///< Moved to and from memory.
  double peakBytes = 0;      ///< Extra memory beyond inputs and output.
  double seconds = 0;        ///< Predicted on the target.
  double computeSeconds = 0; ///< The compute side of the roofline.
  double memorySeconds = 0;  ///< The memory side of the roofline.
  Work work;
};

/// The decision for one term.
struct TermCost {
  std::vector<Strategy> strategies; ///< Every legal strategy (best chunk).
  Strategy chosen;
  std::string reason;
  /// The N (= M for self-attention shapes) from which a run-time switch
  /// picks kv-first (crossoverLength); std::nullopt when kv-first never
  /// wins (or the term has no product form).
  std::optional<int64_t> crossoverN;
  /// Causal kernel terms: the same switch from the recurrent order to
  /// (chunked) kv-first (recurrentCrossoverLength); std::nullopt when it never does or the term has
  /// no recurrent form.
  std::optional<int64_t> recurrentCrossoverN;
};

/// Number of (i, j) pairs the mask lets through for N queries and M keys.
/// Causal and window masks align the queries bottom-right (p_i = M − N + i,
/// DESIGN §1.3); \p left and \p right are the window's sizes.
double unmaskedPairs(MaskKind mask, int64_t block, int64_t queries,
                     int64_t keys, int64_t left = 0, int64_t right = 0);

/// FLOPs to apply the term's feature map to N query rows and M key rows.
double featureMapFlops(const TermShape &shape, const Target &target);

/// Whether convert-attn-to-linalg evaluates \p shape's qk-first by its
/// split-key form (a decode step: softmax under no, causal or window mask,
/// no projection, at most kMaxSplitKeyRows query rows per key/value head):
/// K and V are then read once per group of query heads, and the keys are
/// split across threads in runs of kSplitKeyRun.
bool usesSplitKeys(const TermShape &shape);
inline constexpr int64_t kMaxSplitKeyRows = 16;

/// qk-first's and unchunked kv-first's tiles for a static length below a
/// tile, as the CPU code (attn-convert-to-linalg) builds them and the model
/// counts them (qk-first's; kv-first's FLOPs are counted per real row): \p queries
/// rows (rounded up to 8 from 8 on: the register tiles' rows, whose
/// remainder ran a slower loop; a decode step of 1-7 rows stays as it is),
/// \p keys keys rounded up to 8 (an AVX2 vector), at most \p tile.
inline constexpr int64_t queryTileFor(int64_t tile, int64_t queries) {
  int64_t rows = queries >= 8 ? (queries + 7) / 8 * 8 : queries;
  return rows < tile ? rows : tile;
}
inline constexpr int64_t keyTileFor(int64_t tile, int64_t keys) {
  int64_t rounded = (keys + 7) / 8 * 8;
  return rounded < tile ? rounded : tile;
}
inline constexpr int64_t kSplitKeyRun = 512;

Strategy estimateQkFirst(const TermShape &shape, const Target &target);
/// kv-first, chunked with \p chunk when the mask is causal. Requires the
/// product form.
Strategy estimateKvFirst(const TermShape &shape, const Target &target,
                         std::optional<int64_t> chunk);
/// The recurrent order (causal kernel terms, DESIGN §1.2): per token a
/// rank-1 update of the m × e state and a query against it.
Strategy estimateRecurrent(const TermShape &shape, const Target &target);

/// The chunk in {16, 32, ..., 1024} (and ≤ N) that makes causal kv-first
/// fastest (N itself when N < 16); for block_causal(c) only chunks that
/// divide c (or c itself) are considered.
int64_t bestChunk(const TermShape &shape, const Target &target);

/// The chunk a strategy uses: the key tile for qk-first; for kv-first the
/// best chunk of a causal mask, the block of block / prior_blocks masks, and
/// none otherwise.
std::optional<int64_t> chooseChunk(const TermShape &shape, const Target &target,
                                   Order order);

/// All legal strategies, the choice and the crossover.
TermCost analyzeTerm(const TermShape &shape, const Target &target);

/// Where a run-time switch from qk-first to kv-first goes when N varies
/// (and M with it when \p keysFollowQueries, as for self-attention), all
/// other sizes fixed: switchLength of kv-first's predicted time over
/// qk-first's; std::nullopt if kv-first still loses at 2^30.
std::optional<int64_t> crossoverLength(const TermShape &shape,
                                       const Target &target,
                                       bool keysFollowQueries);
/// The length from which a run-time switch picks kv-first, given
/// \p kvOverOther(n), kv-first's time over the other order's at length n.
/// Above the last power of two P where kv-first loses (ratio >= 1) it wins
/// at every power of two, but around P the orders can alternate, as
/// padded tiles step at tile multiples. The switch is the n in (P/2, 2P]
/// that loses the least, summed as log ratios over those n (each one, or
/// 192 evenly spaced for a large P) for the other order below it and
/// kv-first from it on: an n where kv-first wins and lost just below, the
/// crossing itself where the orders do not alternate. 1 if kv-first wins at
/// every power of two, std::nullopt if it still loses at 2^30.
std::optional<int64_t>
switchLength(const std::function<double(int64_t)> &kvOverOther);

/// The same for kv-first against the recurrent order (causal kernel terms).
std::optional<int64_t> recurrentCrossoverLength(const TermShape &shape,
                                                const Target &target);

/// The seed analysis's whole-layer view (`000`) for h heads of size d
/// (hidden hd, FFN width 4hd), in multiply-adds per token:
/// attention = 4(hd)² projections + 2n·hd quadratic, FFN = 8(hd)².
struct LayerView {
  int64_t attentionExceedsFfnN; ///< n > 2hd
  int64_t quadraticDominatesN;  ///< n > 6hd: 2n·hd > 12(hd)²
  int64_t linearBeatsSoftmaxN;  ///< n > r²·d for r·d features
};
/// Saturates at INT64_MAX (sizes beyond any machine stay ordered and never
/// wrap: signed overflow is undefined behaviour).
LayerView layerView(int64_t heads, int64_t headDim, int64_t featureRatio = 4);

/// a * b for a, b >= 0, or INT64_MAX when it does not fit.
int64_t saturatingMul(int64_t a, int64_t b);

} // namespace cost
} // namespace attn

#endif // ATTN_ANALYSIS_COSTMODEL_H
