//===- Reference.h - Plain C++ reference evaluator for attention -*- C++ -*-===//
//
// The oracle for every attn test: computes DESIGN §1 literally, in double
// precision, on dense row-major f32 buffers. It deliberately uses no MLIR or
// LLVM types so that it can be built anywhere (the GPU device check builds it
// on a machine without LLVM) and so that it shares no code with the compiler
// it checks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_REFERENCE_H
#define ATTN_REFERENCE_REFERENCE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {
namespace reference {

/// How a term turns a (query, key) pair into an unnormalised weight w_ij.
enum class Score {
  Softmax, ///< exp(s·q_i·k_j − max_j' s·q_i·k_j')
  Relu2,   ///< relu(s·q_i·k_j)^2
  Kernel,  ///< φ(q_i, i) · φ(k_j, j)
};

/// The feature map φ of a `Kernel` term.
enum class FeatureMap {
  None,      ///< Only valid for Softmax and Relu2 terms.
  Identity,  ///< φ(x) = x
  Relu,      ///< φ(x) = max(x, 0)
  Elu1,      ///< φ(x) = elu(x) + 1
  FavorPlus, ///< φ(x) = exp(ω x' − |x'|²/2) / sqrt(m), x' = x·s^(1/2)
  CosFormer, ///< φ(x, i) = [relu(x) cos(πi/2L), relu(x) sin(πi/2L)]
  Rfa, ///< φ(x) = [sin(ω x̂), cos(ω x̂)] / sqrt(m), x̂ = x / ‖x‖
};

enum class MaskKind {
  None,        ///< every key
  Causal,      ///< j ≤ i
  Block,       ///< ⌊i/c⌋ = ⌊j/c⌋
  BlockCausal, ///< ⌊i/c⌋ = ⌊j/c⌋ and j ≤ i
  PriorBlocks, ///< ⌊j/c⌋ < ⌊i/c⌋
  Window,      ///< p − left ≤ j ≤ p + right (DESIGN §1.3)
};

/// Which keys a query sees. Masks read the query's position p_i = M − N + i
/// (DESIGN §1.3's bottom-right alignment; p_i = i when N = M).
struct Mask {
  MaskKind kind = MaskKind::None;
  /// The block size c of Block, BlockCausal and PriorBlocks; unused otherwise.
  int64_t chunk = 0;
  /// Window only: the keys left of and right of the query's position it sees
  /// (`window(w)` is left = w − 1, right = 0).
  int64_t left = 0, right = 0;

  /// True when the query at position \p p may attend to key position \p j.
  bool allows(int64_t p, int64_t j) const;
};

enum class Normalizer {
  Default, ///< Rows for Softmax and Kernel, Length for Relu2.
  Rows,    ///< z_i = Σ_j w_ij + ε
  Length,  ///< z_i = number of unmasked keys of row i
  None,    ///< z_i = 1
};

/// One term of a spec. All pointers refer to dense, row-major (C order) f32
/// buffers owned by the caller.
struct Term {
  Score score = Score::Softmax;
  FeatureMap featureMap = FeatureMap::None;
  Mask mask;
  Normalizer normalizer = Normalizer::Default;
  /// s; defaults to 1/sqrt(D). Used by Softmax, Relu2 and FavorPlus only
  /// (Rfa normalises x instead of scaling it).
  std::optional<double> scale;
  /// ε of the Rows normaliser; defaults to 1e-6 for Kernel terms, else 0.
  std::optional<double> eps;

  /// D, the feature width shared by q and k of this term.
  int64_t featureDim = 0;
  const float *q = nullptr; ///< [B, H, N, D]
  const float *k = nullptr; ///< [B, H, M, D]

  /// FAVOR+ and RFA only: m random features and ω [m, D].
  int64_t numFeatures = 0;
  const float *omega = nullptr;

  /// Decay (DESIGN §1.2; Kernel terms under Causal or BlockCausal only, with
  /// the Rows or None normaliser): at most one of a number g in (0, 1] for
  /// every head and token, one g_h per head ([H], in [0, 1]) or one g_t per
  /// token ([B, H, N], in [0, 1]). A visible pair (i, j ≤ i) weighs
  /// d_ij = Π_{t=j+1..i} g_t (d_ii = 1) times its kernel weight.
  std::optional<double> decayRate;
  const float *decayPerHead = nullptr;  ///< [H]
  const float *decayPerToken = nullptr; ///< [B, H, N]
  /// Kernel terms only: κ_j, a weight per key ([B, H, M]) multiplying w_ij.
  const float *keyWeight = nullptr;

  /// State in (DESIGN §1.2; Kernel terms under Causal, no projection, with
  /// the Rows or None normaliser): S0 [B, H, F, E] and z0 [B, H, F], with
  /// F = featureWidth(term) and E = Problem::valueDim, stand for keys before
  /// position 0. Query i sees them with weight D_i = Π_{t=0..i} g_t (1
  /// without decay): its numerator gains D_i·φ(q_i)ᵀS0 and, for Rows, its
  /// Σ_j w_ij gains D_i·φ(q_i)·z0. A null initialNorm means z0 = 0; it needs
  /// initialState, and the None normaliser ignores it. finalState() returns
  /// the matching state out.
  const float *initialState = nullptr; ///< S0 [B, H, F, E]
  const float *initialNorm = nullptr;  ///< z0 [B, H, F]

  /// Score modifications of softmax and relu2 terms (DESIGN §1.3), applied
  /// in this order after s·q·k: soft-capping s ← c·tanh(s/c), then ALiBi
  /// s ← s − a_h·|p_i − j| with the slopes of alibiSlopes() (alibi, no
  /// buffer) or the caller's [H] (alibiSlopes). Sinks (softmax): one logit
  /// σ_h per head ([H]) added to the denominator only.
  std::optional<double> softcap;
  bool alibi = false;
  const float *alibiSlopes = nullptr; ///< [H], with alibi
  const float *sinks = nullptr;       ///< [H]

  /// Lengths (DESIGN §1.3), [B] each, integers held in f32: key j of batch
  /// b is visible only if j < keyLengths[b]; rows i ≥ queryLengths[b] of
  /// batch b are 0.
  const float *keyLengths = nullptr;
  const float *queryLengths = nullptr;

  /// Linformer only: the projected length k (0 = no projection), and the
  /// projections E [k, M] (applied to K) and F [k, M] (applied to V).
  int64_t projectedLength = 0;
  const float *projectKeys = nullptr;
  const float *projectValues = nullptr;
};

/// A whole spec: O = G ⊙ Σ_t term_t, O [B, H, N, E].
struct Problem {
  int64_t batch = 1;  ///< B
  int64_t heads = 1;  ///< H
  /// H_kv, the heads of K and V (DESIGN §1.3 grouped heads: query head h
  /// reads key/value head ⌊h / (H / H_kv)⌋); 0 means H.
  int64_t keyHeads = 0;
  int64_t queries = 0;  ///< N
  int64_t keys = 0;     ///< M
  int64_t valueDim = 0; ///< E
  const float *v = nullptr;    ///< [B, H, M, E], shared by every term
  const float *gate = nullptr; ///< [B, H, N, E], or null for G = 1
  std::vector<Term> terms;
};

/// The spec language's spelling of each enumerator (`favor+`,
/// `block_causal`, ...), for messages and printing.
const char *toString(Score score);
const char *toString(FeatureMap featureMap);
const char *toString(MaskKind kind);
const char *toString(Normalizer normalizer);

/// The defaults of DESIGN §1, resolved for one term.
double effectiveScale(const Term &term);
double effectiveEps(const Term &term);
Normalizer effectiveNormalizer(const Term &term);

/// DESIGN §1.3's ALiBi slopes a_h for \p heads heads (the ALiBi reference's
/// get_slopes).
std::vector<double> alibiSlopes(int64_t heads);

/// Width of φ's output for a Kernel term (D, m for FAVOR+, 2D for cosFormer,
/// 2m for RFA).
int64_t featureWidth(const Term &term);

/// Applies the term's feature map to one row \p x of length D at sequence
/// position \p position; \p length is L = max(N, M) (cosFormer only).
/// Returns featureWidth(term) values.
std::vector<double> applyFeatureMap(const Term &term, const float *x,
                                    int64_t position, int64_t length);

/// Checks the sizes and the constraints of DESIGN §1. Returns an empty
/// string when \p problem is valid, else a one-line explanation.
std::string validate(const Problem &problem);

/// The bytes evaluate() allocates for \p problem besides \p out (double
/// copies of one slice's keys, values and features, and its [N, E]
/// accumulator), saturating at UINT64_MAX; only the sizes are read.
uint64_t workspaceBytes(const Problem &problem);

/// Computes O into \p out ([B, H, N, E], f32), accumulating in double. A row
/// with no unmasked key, or with a zero normaliser, contributes 0 (never NaN).
/// Returns validate()'s message, without touching \p out, when \p problem is
/// invalid; an empty string on success.
std::string evaluate(const Problem &problem, float *out);

/// The state out of term \p term (DESIGN §1.2 "State in / out"), which must
/// be a Kernel term with a Causal mask: for every (b, h) slice, over the N
/// tokens of \p problem,
///   S_{N−1} = (Π_{t=0..N−1} g_t)·S0 + Σ_j d_{N−1,j} κ_j φ(k_j, j) v_jᵀ
/// into \p state ([B, H, F, E], f32) and
///   z_{N−1} = (Π_{t=0..N−1} g_t)·z0 + Σ_j d_{N−1,j} κ_j φ(k_j, j)
/// into \p norm ([B, H, F], f32), skipped when \p norm is null; S0 and z0
/// are the term's initialState and initialNorm, 0 when null. Accumulates in
/// double. Passing the result as initialState / initialNorm of the same term
/// over the following tokens continues one pass over all of them (for maps
/// whose φ does not depend on the position, i.e. all but cosFormer). Returns
/// validate()'s message, or another one-line message, without touching the
/// outputs, when the problem is invalid or the term does not qualify; an
/// empty string on success.
std::string finalState(const Problem &problem, size_t term, float *state,
                       float *norm);

/// The log-sum-exp of the rows of softmax term \p term (DESIGN §1.3):
/// lse_i = m_i + log z_i, with the sink when present, −inf for a row with no
/// visible key, into \p lse ([B, H, N], f32). Returns validate()'s message,
/// or another one-line message, without touching \p lse when the problem is
/// invalid or the term is not a softmax term with the rows normaliser.
std::string logSumExp(const Problem &problem, size_t term, float *lse);

} // namespace reference
} // namespace attn

#endif // ATTN_REFERENCE_REFERENCE_H
