//===- Reference.cpp - Plain C++ reference evaluator for attention --------===//
//
// Computes DESIGN §1 literally: every term is evaluated in its quadratic
// order (all (i, j) pairs), in double precision, with no algebraic shortcut.
// Being the oracle, it favours being obviously right over being fast: a
// kernel term is never reassociated, FAVOR+ is never stabilised, and a
// softmax row is shifted only by its own unmasked maximum, exactly as §1
// writes it.
//
// Only the standard library is used, and nothing throws, so that the file
// builds with -fno-exceptions and without LLVM.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::reference;

/// π to double precision; <cmath> has no portable constant before C++20.
static constexpr double kPi = 3.14159265358979323846;

/// ⌊a / b⌋ for b > 0. Positions are never negative in practice, but Mask is
/// public, and C++ division truncates towards zero, which would put -1 in
/// block 0 instead of block -1.
static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t quotient = a / b;
  if ((a % b != 0) && (a < 0))
    --quotient;
  return quotient;
}

bool Mask::allows(int64_t i, int64_t j) const {
  switch (kind) {
  case MaskKind::None:
    return true;
  case MaskKind::Causal:
    return j <= i;
  case MaskKind::Window: {
    // p - left <= j <= p + right, as a difference of positions so that a
    // window wider than any sequence cannot overflow.
    const int64_t offset = j - i;
    return offset >= -left && offset <= right;
  }
  case MaskKind::Block:
    // A non-positive chunk is rejected by validate(); answering "masked"
    // here keeps a direct caller from dividing by zero.
    return chunk > 0 && floorDiv(i, chunk) == floorDiv(j, chunk);
  case MaskKind::BlockCausal:
    return chunk > 0 && floorDiv(i, chunk) == floorDiv(j, chunk) && j <= i;
  case MaskKind::PriorBlocks:
    return chunk > 0 && floorDiv(j, chunk) < floorDiv(i, chunk);
  }
  return false;
}

std::vector<double> reference::alibiSlopes(int64_t heads) {
  // For a power of two n: a_h = 2^(−8(h+1)/n). Otherwise the slopes of the
  // largest power of two below H, then every other slope of twice that.
  auto powerOfTwoSlopes = [](int64_t n) {
    std::vector<double> slopes;
    for (int64_t h = 0; h < n; ++h)
      slopes.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) /
                                 static_cast<double>(n)));
    return slopes;
  };
  if (heads <= 0)
    return {};
  int64_t closest = 1;
  while (closest * 2 <= heads)
    closest *= 2;
  std::vector<double> slopes = powerOfTwoSlopes(closest);
  if (closest == heads)
    return slopes;
  std::vector<double> extra = powerOfTwoSlopes(2 * closest);
  for (size_t h = 0; static_cast<int64_t>(slopes.size()) < heads; h += 2)
    slopes.push_back(extra[h]);
  return slopes;
}

double reference::effectiveScale(const Term &term) {
  if (term.scale)
    return *term.scale;
  // validate() rejects D < 1; fall back to 1 rather than produce inf/NaN for
  // a caller that asks before validating.
  if (term.featureDim < 1)
    return 1.0;
  return 1.0 / std::sqrt(static_cast<double>(term.featureDim));
}

double reference::effectiveEps(const Term &term) {
  if (term.eps)
    return *term.eps;
  // Kernel weights can sum to (almost) zero, softmax and relu² weights are
  // non-negative with a positive maximum, hence the different defaults.
  return term.score == Score::Kernel ? 1e-6 : 0.0;
}

Normalizer reference::effectiveNormalizer(const Term &term) {
  if (term.normalizer != Normalizer::Default)
    return term.normalizer;
  return term.score == Score::Relu2 ? Normalizer::Length : Normalizer::Rows;
}

int64_t reference::featureWidth(const Term &term) {
  int64_t dim = std::max<int64_t>(term.featureDim, 0);
  switch (term.featureMap) {
  case FeatureMap::None:
    return 0;
  case FeatureMap::Identity:
  case FeatureMap::Relu:
  case FeatureMap::Elu1:
    return dim;
  case FeatureMap::FavorPlus:
    return std::max<int64_t>(term.numFeatures, 0);
  case FeatureMap::CosFormer:
    return 2 * dim;
  case FeatureMap::Rfa:
    return 2 * std::max<int64_t>(term.numFeatures, 0);
  }
  return 0;
}

/// φ of one row held in double. evaluate() needs this form because a
/// Linformer-projected key row E·K exists only in double; applyFeatureMap()
/// widens its f32 row and forwards here so both paths share one definition.
static std::vector<double> featureMapRow(const Term &term, const double *x,
                                         int64_t position, int64_t length) {
  const int64_t dim = std::max<int64_t>(term.featureDim, 0);
  std::vector<double> phi(static_cast<size_t>(featureWidth(term)), 0.0);
  switch (term.featureMap) {
  case FeatureMap::None:
    break;
  case FeatureMap::Identity:
    for (int64_t d = 0; d < dim; ++d)
      phi[d] = x[d];
    break;
  case FeatureMap::Relu:
    for (int64_t d = 0; d < dim; ++d)
      phi[d] = std::max(x[d], 0.0);
    break;
  case FeatureMap::Elu1:
    // elu(x) + 1: x + 1 above zero, e^x at or below (the two agree at 0).
    for (int64_t d = 0; d < dim; ++d)
      phi[d] = x[d] > 0.0 ? x[d] + 1.0 : std::exp(x[d]);
    break;
  case FeatureMap::FavorPlus: {
    const int64_t m = term.numFeatures;
    if (!term.omega || m <= 0)
      break; // validate() rejects this; leave zeros rather than read null.
    // x' = x·√s folds the softmax scale into both φ(q) and φ(k), so that
    // φ(q)·φ(k) estimates exp(s q·k). Deliberately no stabiliser: the
    // oracle computes §1's formula as written.
    const double rootScale = std::sqrt(effectiveScale(term));
    std::vector<double> scaled(static_cast<size_t>(dim));
    double squaredNorm = 0.0;
    for (int64_t d = 0; d < dim; ++d) {
      scaled[d] = x[d] * rootScale;
      squaredNorm += scaled[d] * scaled[d];
    }
    const double invRootM = 1.0 / std::sqrt(static_cast<double>(m));
    for (int64_t r = 0; r < m; ++r) {
      const float *omegaRow = term.omega + r * dim;
      double projection = 0.0;
      for (int64_t d = 0; d < dim; ++d)
        projection += static_cast<double>(omegaRow[d]) * scaled[d];
      phi[r] = std::exp(projection - 0.5 * squaredNorm) * invRootM;
    }
    break;
  }
  case FeatureMap::CosFormer: {
    // The first D features carry the cosine, the next D the sine, so that
    // cos(a)cos(b) + sin(a)sin(b) = cos(a − b) re-weights by distance.
    const double angle = length > 0 ? kPi * static_cast<double>(position) /
                                          (2.0 * static_cast<double>(length))
                                    : 0.0;
    const double c = std::cos(angle), s = std::sin(angle);
    for (int64_t d = 0; d < dim; ++d) {
      const double r = std::max(x[d], 0.0);
      phi[d] = r * c;
      phi[dim + d] = r * s;
    }
    break;
  }
  case FeatureMap::Rfa: {
    const int64_t m = term.numFeatures;
    if (!term.omega || m <= 0)
      break; // validate() rejects this; leave zeros rather than read null.
    // x̂ = x / ‖x‖, and x̂ = 0 for x = 0 (DESIGN §1.2), so φ(0) is the
    // well-defined [0…0, 1…1]/√m rather than NaN. No scale: normalising x
    // already fixes its length, and §1.2's φ has no s.
    double squaredNorm = 0.0;
    for (int64_t d = 0; d < dim; ++d)
      squaredNorm += x[d] * x[d];
    const double norm = std::sqrt(squaredNorm);
    const double invNorm = norm > 0.0 ? 1.0 / norm : 0.0;
    // The first m features carry the sines, the next m the cosines, so that
    // sin(a)sin(b) + cos(a)cos(b) = cos(a − b) per random feature.
    const double invRootM = 1.0 / std::sqrt(static_cast<double>(m));
    for (int64_t r = 0; r < m; ++r) {
      const float *omegaRow = term.omega + r * dim;
      double projection = 0.0;
      for (int64_t d = 0; d < dim; ++d)
        projection += static_cast<double>(omegaRow[d]) * (x[d] * invNorm);
      phi[r] = std::sin(projection) * invRootM;
      phi[m + r] = std::cos(projection) * invRootM;
    }
    break;
  }
  }
  return phi;
}

std::vector<double> reference::applyFeatureMap(const Term &term, const float *x,
                                               int64_t position,
                                               int64_t length) {
  const int64_t dim = std::max<int64_t>(term.featureDim, 0);
  std::vector<double> row(static_cast<size_t>(dim));
  for (int64_t d = 0; d < dim; ++d)
    row[d] = x[d];
  return featureMapRow(term, row.data(), position, length);
}

/// Whether a·b·c·d fits in int64_t for non-negative factors; the buffers
/// are indexed with int64_t, so an overflowing size must be an error rather
/// than a wrapped index.
static bool productFits(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors) {
    if (f < 0)
      return false;
    if (f != 0 && product > std::numeric_limits<int64_t>::max() / f)
      return false;
    product *= f;
  }
  return true;
}

const char *reference::toString(MaskKind kind) {
  switch (kind) {
  case MaskKind::None:
    return "none";
  case MaskKind::Causal:
    return "causal";
  case MaskKind::Block:
    return "block";
  case MaskKind::BlockCausal:
    return "block_causal";
  case MaskKind::PriorBlocks:
    return "prior_blocks";
  case MaskKind::Window:
    return "window";
  }
  return "unknown";
}

const char *reference::toString(Score score) {
  switch (score) {
  case Score::Softmax:
    return "softmax";
  case Score::Relu2:
    return "relu2";
  case Score::Kernel:
    return "kernel";
  }
  return "unknown";
}

const char *reference::toString(FeatureMap featureMap) {
  switch (featureMap) {
  case FeatureMap::None:
    return "none";
  case FeatureMap::Identity:
    return "identity";
  case FeatureMap::Relu:
    return "relu";
  case FeatureMap::Elu1:
    return "elu1";
  case FeatureMap::FavorPlus:
    return "favor+";
  case FeatureMap::CosFormer:
    return "cosformer";
  case FeatureMap::Rfa:
    return "rfa";
  }
  return "unknown";
}

const char *reference::toString(Normalizer normalizer) {
  switch (normalizer) {
  case Normalizer::Default:
    return "default";
  case Normalizer::Rows:
    return "rows";
  case Normalizer::Length:
    return "length";
  case Normalizer::None:
    return "none";
  }
  return "unknown";
}

/// A double for a message: std::to_string's fixed six decimals would print
/// a bad decay of 1e-9 as "0.000000", hiding the value being complained about.
static std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

/// "[a, b, c]", the index of a bad element of a [B, H, L] buffer.
static std::string formatIndex(int64_t b, int64_t h, int64_t t) {
  return "[" + std::to_string(b) + ", " + std::to_string(h) + ", " +
         std::to_string(t) + "]";
}

/// The decay and key-weight half of validateTerm() (DESIGN §1.2). Runs after
/// the mask and size checks, so N == M under a causal mask and B·H·N fits.
/// Unlike the rest of validate() it reads buffer contents: an out-of-range
/// g would turn the literal product into growth or a sign flip, and a NaN
/// would poison every later row, so both are errors rather than outputs.
static std::string validateDecay(const Problem &problem, const Term &term) {
  const bool hasRate = term.decayRate.has_value();
  const int decays = int(hasRate) + int(term.decayPerHead != nullptr) +
                     int(term.decayPerToken != nullptr);
  if (decays > 1)
    return "at most one of decay rate, decay per head and decay per token "
           "may be set";
  if (decays == 1) {
    if (term.score != Score::Kernel)
      return std::string("decay needs a kernel score, got ") +
             toString(term.score);
    const MaskKind kind = term.mask.kind;
    if (kind != MaskKind::Causal && kind != MaskKind::BlockCausal)
      return std::string("decay needs a causal or block_causal mask, got ") +
             toString(kind);
    if (problem.queries != problem.keys)
      return "decay needs N == M, got N = " + std::to_string(problem.queries) +
             ", M = " + std::to_string(problem.keys);
    const Normalizer normalizer = effectiveNormalizer(term);
    if (normalizer != Normalizer::Rows && normalizer != Normalizer::None)
      return std::string("decay needs the rows or none normalizer, got ") +
             toString(normalizer);
    // §1.2 gives the constant as (0, 1]; a g of 0 (a full reset) is only
    // meaningful per head or per token, where it stays allowed.
    if (hasRate && !(std::isfinite(*term.decayRate) && *term.decayRate > 0.0 &&
                     *term.decayRate <= 1.0))
      return "decay rate must be finite and in (0, 1], got " +
             formatNumber(*term.decayRate);
    if (term.decayPerHead) {
      for (int64_t h = 0; h < problem.heads; ++h) {
        const double g = term.decayPerHead[h];
        if (!(std::isfinite(g) && g >= 0.0 && g <= 1.0))
          return "decay per head [" + std::to_string(h) +
                 "] must be finite and in [0, 1], got " + formatNumber(g);
      }
    }
    if (term.decayPerToken) {
      const int64_t n = problem.queries;
      for (int64_t b = 0; b < problem.batch; ++b)
        for (int64_t h = 0; h < problem.heads; ++h)
          for (int64_t t = 0; t < n; ++t) {
            const double g =
                term.decayPerToken[(b * problem.heads + h) * n + t];
            if (!(std::isfinite(g) && g >= 0.0 && g <= 1.0))
              return "decay per token " + formatIndex(b, h, t) +
                     " must be finite and in [0, 1], got " + formatNumber(g);
          }
    }
  }

  if (term.keyWeight) {
    if (term.score != Score::Kernel)
      return std::string("key weight needs a kernel score, got ") +
             toString(term.score);
    // κ_j weighs key position j; projected keys have no positions.
    if (term.projectedLength > 0)
      return "key weight cannot be combined with a projection";
    const int64_t m = problem.keys;
    for (int64_t b = 0; b < problem.batch; ++b)
      for (int64_t h = 0; h < problem.heads; ++h)
        for (int64_t j = 0; j < m; ++j) {
          const double kappa = term.keyWeight[(b * problem.heads + h) * m + j];
          if (!std::isfinite(kappa))
            return "key weight " + formatIndex(b, h, j) +
                   " must be finite, got " + formatNumber(kappa);
        }
  }
  return "";
}

/// "[a, b, c, d]", the index of a bad element of a [B, H, F, E] state.
static std::string formatIndex(int64_t b, int64_t h, int64_t f, int64_t e) {
  return "[" + std::to_string(b) + ", " + std::to_string(h) + ", " +
         std::to_string(f) + ", " + std::to_string(e) + "]";
}

/// The state-in half of validateTerm() (DESIGN §1.2 "State in / out"). Runs
/// last, so the mask, feature-map and size checks have passed. Like the
/// decay checks it reads the buffers: a NaN or inf in S0 or z0 would reach
/// every row.
static std::string validateState(const Problem &problem, const Term &term) {
  if (!term.initialState && !term.initialNorm)
    return "";
  if (!term.initialState)
    return "an initial norm needs an initial state";
  if (term.score != Score::Kernel)
    return std::string("a state needs a kernel score, got ") +
           toString(term.score);
  // Causal also rules out a projection: validateTerm() rejects projections
  // under any mask but `none`.
  if (term.mask.kind != MaskKind::Causal)
    return std::string("a state needs a causal mask, got ") +
           toString(term.mask.kind);
  if (problem.queries != problem.keys)
    return "a state needs N == M, got N = " + std::to_string(problem.queries) +
           ", M = " + std::to_string(problem.keys);
  // §1.2's recurrent form defines only these two; `length` would need the
  // count of the keys the state stands for.
  const Normalizer normalizer = effectiveNormalizer(term);
  if (normalizer != Normalizer::Rows && normalizer != Normalizer::None)
    return std::string("a state needs the rows or none normalizer, got ") +
           toString(normalizer);
  const int64_t width = featureWidth(term), e = problem.valueDim;
  if (!productFits({problem.batch, problem.heads, width, e}))
    return "initial state [B, H, F, E] is too large";
  for (int64_t b = 0; b < problem.batch; ++b)
    for (int64_t h = 0; h < problem.heads; ++h)
      for (int64_t f = 0; f < width; ++f) {
        const int64_t row = (b * problem.heads + h) * width + f;
        for (int64_t c = 0; c < e; ++c) {
          const double s = term.initialState[row * e + c];
          if (!std::isfinite(s))
            return "initial state " + formatIndex(b, h, f, c) +
                   " must be finite, got " + formatNumber(s);
        }
        if (term.initialNorm) {
          const double z = term.initialNorm[row];
          if (!std::isfinite(z))
            return "initial norm " + formatIndex(b, h, f) +
                   " must be finite, got " + formatNumber(z);
        }
      }
  return "";
}

/// The §1.3 half of validateTerm(): score modifications, sinks and lengths.
/// Reads the [H] and [B] buffers: a NaN slope or a fractional length would
/// otherwise become a silently wrong output.
static std::string validateScoreMods(const Problem &problem, const Term &term) {
  const bool kernel = term.score == Score::Kernel;
  if (term.softcap) {
    if (kernel)
      return "softcap needs a softmax or relu2 score, got kernel";
    if (!(std::isfinite(*term.softcap) && *term.softcap > 0.0))
      return "softcap must be finite and positive, got " +
             formatNumber(*term.softcap);
  }
  if (term.alibiSlopes && !term.alibi)
    return "ALiBi slopes need alibi";
  if (term.alibi) {
    if (kernel)
      return "alibi needs a softmax or relu2 score, got kernel";
    if (term.projectedLength > 0)
      return "alibi cannot be combined with a projection";
    if (term.alibiSlopes)
      for (int64_t h = 0; h < problem.heads; ++h)
        if (!std::isfinite(term.alibiSlopes[h]))
          return "ALiBi slope [" + std::to_string(h) +
                 "] must be finite, got " + formatNumber(term.alibiSlopes[h]);
  }
  if (term.sinks) {
    if (term.score != Score::Softmax)
      return std::string("sinks need a softmax score, got ") +
             toString(term.score);
    for (int64_t h = 0; h < problem.heads; ++h)
      if (!std::isfinite(term.sinks[h]))
        return "sink [" + std::to_string(h) + "] must be finite, got " +
               formatNumber(term.sinks[h]);
  }
  const float *lengths[] = {term.keyLengths, term.queryLengths};
  const char *names[] = {"key length", "query length"};
  for (int which = 0; which < 2; ++which) {
    if (!lengths[which])
      continue;
    if (which == 0 && term.projectedLength > 0)
      return "key lengths cannot be combined with a projection";
    for (int64_t b = 0; b < problem.batch; ++b) {
      const double length = lengths[which][b];
      if (!(std::isfinite(length) && length >= 0.0 &&
            length == std::floor(length) && length < 9.0e15))
        return std::string(names[which]) + " [" + std::to_string(b) +
               "] must be a non-negative integer, got " + formatNumber(length);
    }
  }
  return "";
}

/// The per-term half of validate(); returns "" or a message without the
/// "term N: " prefix.
static std::string validateTerm(const Problem &problem, const Term &term) {
  const int64_t n = problem.queries, m = problem.keys;
  if (term.featureDim < 1)
    return "feature size D must be positive, got " +
           std::to_string(term.featureDim);
  if (!term.q)
    return "query tensor q is null";
  if (!term.k)
    return "key tensor k is null";

  if (term.score == Score::Kernel && term.featureMap == FeatureMap::None)
    return "a kernel score needs a feature map";
  if (term.score != Score::Kernel && term.featureMap != FeatureMap::None)
    return std::string("a ") + toString(term.score) +
           " score takes no feature map";
  // FAVOR+ and RFA both draw on the random features ω [m, D]; RFA's
  // feature width 2m must also fit.
  if (term.featureMap == FeatureMap::FavorPlus ||
      term.featureMap == FeatureMap::Rfa) {
    const std::string map = toString(term.featureMap);
    if (term.numFeatures <= 0)
      return map + " needs a positive number of features m, got " +
             std::to_string(term.numFeatures);
    if (!term.omega)
      return map + " needs the random features omega [m, D]";
    if (!productFits({term.numFeatures, term.featureDim}) ||
        !productFits({term.numFeatures, 2}))
      return map + " omega [m, D] is too large";
  }

  const MaskKind kind = term.mask.kind;
  const bool chunked = kind == MaskKind::Block ||
                       kind == MaskKind::BlockCausal ||
                       kind == MaskKind::PriorBlocks;
  if (chunked && term.mask.chunk <= 0)
    return std::string(toString(kind)) +
           " mask needs a positive chunk size, got " +
           std::to_string(term.mask.chunk);
  // causal and window read the query position p_i = M − N + i (§1.3); the
  // block masks compare blocks of i itself, so block_causal needs N = M.
  if (kind == MaskKind::BlockCausal && n != m)
    return std::string(toString(kind)) +
           " mask needs N == M, got N = " + std::to_string(n) +
           ", M = " + std::to_string(m);
  if (kind == MaskKind::Window && (term.mask.left < 0 || term.mask.right < 0))
    return "window mask needs non-negative left and right sizes, got " +
           std::to_string(term.mask.left) + " and " +
           std::to_string(term.mask.right);

  if (term.projectedLength < 0)
    return "projected length must not be negative, got " +
           std::to_string(term.projectedLength);
  if (term.projectedLength > 0) {
    if (kind != MaskKind::None)
      return std::string("projection cannot be combined with a ") +
             toString(kind) + " mask";
    if (!term.projectKeys)
      return "projection needs E [k, M] for the keys";
    if (!term.projectValues)
      return "projection needs F [k, M] for the values";
    if (!productFits({term.projectedLength, m}) ||
        !productFits({term.projectedLength, problem.valueDim}) ||
        !productFits({term.projectedLength, term.featureDim}))
      return "projected tensors are too large";
  }

  if (term.scale && !(std::isfinite(*term.scale) && *term.scale > 0.0))
    return "scale must be finite and positive, got " +
           std::to_string(*term.scale);
  if (term.eps && !(std::isfinite(*term.eps) && *term.eps >= 0.0))
    return "eps must be finite and non-negative, got " +
           std::to_string(*term.eps);

  if (!productFits({problem.batch, problem.heads, n, term.featureDim}) ||
      !productFits({problem.batch, problem.heads, m, term.featureDim}))
    return "q or k is too large";
  std::string message = validateScoreMods(problem, term);
  if (!message.empty())
    return message;
  message = validateDecay(problem, term);
  if (!message.empty())
    return message;
  return validateState(problem, term);
}

std::string reference::validate(const Problem &problem) {
  struct NamedSize {
    const char *name;
    int64_t value;
  };
  const NamedSize sizes[] = {{"batch B", problem.batch},
                             {"heads H", problem.heads},
                             {"queries N", problem.queries},
                             {"keys M", problem.keys},
                             {"value size E", problem.valueDim}};
  for (const NamedSize &size : sizes)
    if (size.value < 1)
      return std::string(size.name) + " must be positive, got " +
             std::to_string(size.value);
  if (!productFits(
          {problem.batch, problem.heads, problem.queries, problem.valueDim}) ||
      !productFits(
          {problem.batch, problem.heads, problem.keys, problem.valueDim}))
    return "v, gate or output is too large";
  if (!problem.v)
    return "value tensor v is null";
  const int64_t keyHeads = problem.keyHeads ? problem.keyHeads : problem.heads;
  if (keyHeads < 1 || problem.heads % keyHeads != 0)
    return "key/value heads H_kv must divide the query heads H = " +
           std::to_string(problem.heads) + ", got " + std::to_string(keyHeads);
  if (problem.terms.empty())
    return "a spec needs at least one term";
  for (size_t t = 0; t < problem.terms.size(); ++t) {
    std::string message = validateTerm(problem, problem.terms[t]);
    if (!message.empty())
      return "term " + std::to_string(t) + ": " + message;
  }
  return "";
}

/// The (batch, key/value head) slice of K and V that query slice \p slice
/// (b·H + h) reads: head h uses key/value head ⌊h / (H / H_kv)⌋ (§1.3).
static int64_t keyValueSlice(const Problem &problem, int64_t slice) {
  const int64_t keyHeads = problem.keyHeads ? problem.keyHeads : problem.heads;
  const int64_t group = problem.heads / keyHeads;
  return (slice / problem.heads) * keyHeads + (slice % problem.heads) / group;
}

/// The block masks compare the blocks of the row i itself; causal and
/// window read its position p_i = M − N + i (§1.3).
static bool isBlockMask(MaskKind kind) {
  return kind == MaskKind::Block || kind == MaskKind::BlockCausal ||
         kind == MaskKind::PriorBlocks;
}

/// Adds term_i = Σ_j w_ij v_j / z_i of \p term, for the (batch, head) slice
/// \p slice, into \p acc ([N, E], double).
/// With \p lse ([N]), also stores each row's log-sum-exp (softmax terms).
static void accumulateTerm(const Problem &problem, const Term &term,
                           int64_t slice, std::vector<double> &acc,
                           std::vector<double> *lse = nullptr) {
  const int64_t n = problem.queries, m = problem.keys, e = problem.valueDim;
  const int64_t dim = term.featureDim;
  const int64_t batchIndex = slice / problem.heads;
  const int64_t head = slice % problem.heads;
  const int64_t kvSlice = keyValueSlice(problem, slice);
  const float *q = term.q + slice * n * dim;
  const float *k = term.k + kvSlice * m * dim;
  const float *v = problem.v + kvSlice * m * e;
  // §1.3: the query position p_i = M − N + i of row i, the keys this batch
  // element has and the rows it keeps.
  const int64_t positionOffset = m - n;
  // (Without key lengths every key counts, the k projected keys of a
  // Linformer term too.)
  const int64_t keyLength =
      term.keyLengths ? static_cast<int64_t>(term.keyLengths[batchIndex])
                      : std::numeric_limits<int64_t>::max();
  const int64_t queryLength =
      term.queryLengths ? static_cast<int64_t>(term.queryLengths[batchIndex])
                        : n;
  const double alibiSlope =
      !term.alibi ? 0.0
      : term.alibiSlopes
          ? static_cast<double>(term.alibiSlopes[head])
          : alibiSlopes(problem.heads)[static_cast<size_t>(head)];
  const double sink = term.sinks ? static_cast<double>(term.sinks[head])
                                 : -std::numeric_limits<double>::infinity();
  if (lse)
    std::fill(lse->begin(), lse->end(),
              -std::numeric_limits<double>::infinity());
  // §1.2's per-key weight κ and per-token decay of this slice, if any.
  const float *keyWeight =
      term.keyWeight ? term.keyWeight + slice * m : nullptr;
  const float *decayPerToken =
      term.decayPerToken ? term.decayPerToken + slice * n : nullptr;
  const bool hasDecay = term.decayRate || term.decayPerHead || decayPerToken;
  // g_t of this slice at token t (validate() allows only one source).
  auto decayAt = [&](int64_t t) -> double {
    if (decayPerToken)
      return decayPerToken[t];
    if (term.decayPerHead)
      return term.decayPerHead[slice % problem.heads];
    return *term.decayRate;
  };
  // §1.2's state in, S0 [F, E] and z0 [F] of this slice (validate() allows
  // them only on causal kernel terms).
  const int64_t stateWidth = featureWidth(term);
  const float *initialState =
      term.initialState ? term.initialState + slice * stateWidth * e : nullptr;
  const float *initialNorm = term.initialState && term.initialNorm
                                 ? term.initialNorm + slice * stateWidth
                                 : nullptr;

  // The keys and values this term attends over, widened to double. With a
  // Linformer projection they are E·K and F·V (both along the sequence),
  // built here per term so that another term still sees the original V.
  const int64_t numKeys = term.projectedLength > 0 ? term.projectedLength : m;
  std::vector<double> keys(static_cast<size_t>(numKeys * dim), 0.0);
  std::vector<double> values(static_cast<size_t>(numKeys * e), 0.0);
  if (term.projectedLength > 0) {
    for (int64_t p = 0; p < numKeys; ++p) {
      for (int64_t j = 0; j < m; ++j) {
        const double ek = term.projectKeys[p * m + j];
        const double fv = term.projectValues[p * m + j];
        for (int64_t d = 0; d < dim; ++d)
          keys[p * dim + d] += ek * static_cast<double>(k[j * dim + d]);
        for (int64_t c = 0; c < e; ++c)
          values[p * e + c] += fv * static_cast<double>(v[j * e + c]);
      }
    }
  } else {
    for (int64_t i = 0; i < m * dim; ++i)
      keys[i] = k[i];
    for (int64_t i = 0; i < m * e; ++i)
      values[i] = v[i];
  }

  // cosFormer's L is §1's max(N, M), with M the spec's key count even when a
  // projection leaves k keys: §1 defines L from the input sizes, and a
  // compiled kernel knows those before it projects anything.
  const int64_t length = std::max(n, m);
  const bool isKernel = term.score == Score::Kernel;
  const int64_t width = isKernel ? featureWidth(term) : 0;
  std::vector<double> keyFeatures;
  if (isKernel) {
    keyFeatures.resize(static_cast<size_t>(numKeys * width));
    for (int64_t j = 0; j < numKeys; ++j) {
      std::vector<double> phi = featureMapRow(term, &keys[j * dim], j, length);
      std::copy(phi.begin(), phi.end(), keyFeatures.begin() + j * width);
    }
  }

  const double scale = effectiveScale(term);
  const double eps = effectiveEps(term);
  const Normalizer normalizer = effectiveNormalizer(term);
  std::vector<double> query(static_cast<size_t>(dim));
  std::vector<double> weights(static_cast<size_t>(numKeys));
  std::vector<char> unmasked(static_cast<size_t>(numKeys));
  // D_i = Π_{t=0..i} g_t, the weight of the state in at row i, as the same
  // literal product the pairs use (1 without decay).
  double stateDecay = 1.0;

  for (int64_t i = 0; i < n; ++i) {
    if (hasDecay)
      stateDecay *= decayAt(i);
    // §1.3: rows at or past the query length are 0.
    if (i >= queryLength)
      continue;
    const int64_t position = i + positionOffset;
    for (int64_t d = 0; d < dim; ++d)
      query[d] = q[i * dim + d];
    std::vector<double> queryFeatures;
    if (isKernel)
      queryFeatures = featureMapRow(term, query.data(), i, length);

    // Raw scores (s·q·k, or φ·φ for kernels) of the unmasked keys.
    int64_t count = 0;
    double maxScore = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < numKeys; ++j) {
      // A projected term has no key positions to mask (validate() insists
      // on `none`), so j indexes the k projected keys.
      unmasked[j] =
          term.mask.allows(isBlockMask(term.mask.kind) ? i : position, j) &&
          j < keyLength;
      weights[j] = 0.0;
      if (!unmasked[j])
        continue;
      ++count;
      double score = 0.0;
      if (isKernel) {
        for (int64_t f = 0; f < width; ++f)
          score += queryFeatures[f] * keyFeatures[j * width + f];
      } else {
        for (int64_t d = 0; d < dim; ++d)
          score += query[d] * keys[j * dim + d];
        score *= scale;
        // §1.3's score pipeline: soft-cap, then the ALiBi bias.
        if (term.softcap)
          score = *term.softcap * std::tanh(score / *term.softcap);
        if (term.alibi)
          score -= alibiSlope * static_cast<double>(std::llabs(position - j));
      }
      weights[j] = score;
      maxScore = std::max(maxScore, score);
    }
    // §1.2: w_ij = d_ij · κ_j · φ(q_i)·φ(k_j) for kernel terms. d_ij is the
    // literal product Π_{t=j+1..i} g_t, built by walking j down from i
    // (d_ii = 1, then d_{i,j−1} = d_ij · g_j). No log space: the oracle
    // states the formula as written, and a product that underflows to 0 in
    // double is correct to within double's range. validate() allows decay only
    // under causal masks (N = M, every unmasked j ≤ i), so keys above the
    // diagonal never need a factor.
    if (isKernel && keyWeight) {
      for (int64_t j = 0; j < numKeys; ++j)
        if (unmasked[j])
          weights[j] *= static_cast<double>(keyWeight[j]);
    }
    if (isKernel && hasDecay) {
      double decay = 1.0;
      for (int64_t j = std::min(i, numKeys - 1); j >= 0; --j) {
        if (unmasked[j])
          weights[j] *= decay;
        decay *= decayAt(j);
      }
    }
    // No unmasked key: the row contributes 0. For softmax this is also what
    // keeps exp(−inf − (−inf)) = NaN out of the output. A state in counts as
    // visible (it only exists under causal masks, where j = i always is).
    if (count == 0 && !initialState)
      continue;

    // A sink σ joins the maximum and adds exp(σ − max) to the denominator.
    if (term.sinks)
      maxScore = std::max(maxScore, sink);
    double sum = 0.0;
    for (int64_t j = 0; j < numKeys; ++j) {
      if (!unmasked[j])
        continue;
      if (term.score == Score::Softmax) {
        weights[j] = std::exp(weights[j] - maxScore);
      } else if (term.score == Score::Relu2) {
        const double r = std::max(weights[j], 0.0);
        weights[j] = r * r;
      }
      sum += weights[j];
    }
    if (term.sinks)
      sum += std::exp(sink - maxScore);
    if (lse && term.score == Score::Softmax)
      (*lse)[i] = maxScore + std::log(sum);
    // The state's share of Σ_j w_ij: D_i · φ(q_i)·z0.
    if (initialNorm) {
      double stateSum = 0.0;
      for (int64_t f = 0; f < stateWidth; ++f)
        stateSum += queryFeatures[f] * static_cast<double>(initialNorm[f]);
      sum += stateDecay * stateSum;
    }

    double z = 1.0;
    switch (normalizer) {
    case Normalizer::Default: // Resolved by effectiveNormalizer().
    case Normalizer::Rows:
      z = sum + eps;
      break;
    case Normalizer::Length:
      z = static_cast<double>(count);
      break;
    case Normalizer::None:
      z = 1.0;
      break;
    }
    // Kernel weights may cancel exactly; §1 asks for 0 rather than ±inf/NaN.
    if (z == 0.0)
      continue;

    for (int64_t c = 0; c < e; ++c) {
      double numerator = 0.0;
      for (int64_t j = 0; j < numKeys; ++j)
        if (unmasked[j])
          numerator += weights[j] * values[j * e + c];
      // The state's share of the numerator: D_i · φ(q_i)ᵀ S0.
      if (initialState) {
        double stateNumerator = 0.0;
        for (int64_t f = 0; f < stateWidth; ++f)
          stateNumerator +=
              queryFeatures[f] * static_cast<double>(initialState[f * e + c]);
        numerator += stateDecay * stateNumerator;
      }
      acc[i * e + c] += numerator / z;
    }
  }
}

uint64_t reference::workspaceBytes(const Problem &problem) {
  auto count = [](int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(v, 0)); };
  auto mul = [](uint64_t a, uint64_t b) {
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
  };
  auto add = [](uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
  };
  // The [N, E] accumulator, then the largest term's copies (accumulateTerm).
  uint64_t total = mul(mul(count(problem.queries), count(problem.valueDim)),
                       sizeof(double));
  uint64_t largestTerm = 0;
  for (const Term &term : problem.terms) {
    uint64_t keys = count(term.projectedLength > 0 ? term.projectedLength
                                                   : problem.keys);
    uint64_t width =
        term.score == Score::Kernel ? count(featureWidth(term)) : 0;
    // Keys, values and key features in double, a weight and a mask byte per
    // key, and a query and its features.
    uint64_t perKey = add(add(count(term.featureDim), count(problem.valueDim)),
                          add(width, 1));
    uint64_t bytes = add(mul(mul(keys, perKey), sizeof(double)), keys);
    bytes = add(bytes, mul(add(count(term.featureDim), mul(width, 2)),
                           sizeof(double)));
    largestTerm = std::max(largestTerm, bytes);
  }
  return add(total, largestTerm);
}

std::string reference::evaluate(const Problem &problem, float *out) {
  std::string message = validate(problem);
  if (!message.empty())
    return message;
  if (!out)
    return "output buffer is null";

  const int64_t n = problem.queries, e = problem.valueDim;
  const int64_t slices = problem.batch * problem.heads;
  // One (batch, head) slice at a time: the terms are summed in double and
  // gated before the single rounding to f32.
  std::vector<double> acc(static_cast<size_t>(n * e));
  for (int64_t slice = 0; slice < slices; ++slice) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (const Term &term : problem.terms)
      accumulateTerm(problem, term, slice, acc);
    const int64_t base = slice * n * e;
    for (int64_t idx = 0; idx < n * e; ++idx) {
      const double gate =
          problem.gate ? static_cast<double>(problem.gate[base + idx]) : 1.0;
      out[base + idx] = static_cast<float>(gate * acc[idx]);
    }
  }
  return "";
}

/// validate()'s message, or one for a \p termIndex past the terms; "" when
/// the problem is valid and has that term.
static std::string validateTermIndex(const Problem &problem, size_t termIndex) {
  std::string message = validate(problem);
  if (!message.empty())
    return message;
  if (termIndex >= problem.terms.size())
    return "term " + std::to_string(termIndex) +
           " does not exist (the spec has " +
           std::to_string(problem.terms.size()) + ")";
  return "";
}

std::string reference::finalState(const Problem &problem, size_t termIndex,
                                  float *state, float *norm) {
  std::string message = validateTermIndex(problem, termIndex);
  if (!message.empty())
    return message;
  const Term &term = problem.terms[termIndex];
  const std::string prefix = "term " + std::to_string(termIndex) + ": ";
  if (term.score != Score::Kernel || term.mask.kind != MaskKind::Causal)
    return prefix +
           "a final state needs a kernel term with a causal mask, got " +
           toString(term.score) + " with a " + toString(term.mask.kind) +
           " mask";
  if (!state)
    return "state buffer is null";

  // validate() passed: N == M, no projection, and every size fits.
  const int64_t n = problem.queries, e = problem.valueDim;
  const int64_t dim = term.featureDim, width = featureWidth(term);
  const int64_t slices = problem.batch * problem.heads;
  const bool hasDecay =
      term.decayRate || term.decayPerHead || term.decayPerToken;
  std::vector<double> accState(static_cast<size_t>(width * e));
  std::vector<double> accNorm(static_cast<size_t>(width));
  for (int64_t slice = 0; slice < slices; ++slice) {
    const int64_t kvSlice = keyValueSlice(problem, slice);
    const float *k = term.k + kvSlice * n * dim;
    const float *v = problem.v + kvSlice * n * e;
    const float *keyWeight =
        term.keyWeight ? term.keyWeight + slice * n : nullptr;
    const float *decayPerToken =
        term.decayPerToken ? term.decayPerToken + slice * n : nullptr;
    auto decayAt = [&](int64_t t) -> double {
      if (decayPerToken)
        return decayPerToken[t];
      if (term.decayPerHead)
        return term.decayPerHead[slice % problem.heads];
      return *term.decayRate;
    };
    std::fill(accState.begin(), accState.end(), 0.0);
    std::fill(accNorm.begin(), accNorm.end(), 0.0);
    // Walk j down from N − 1 so that d = d_{N−1,j} = Π_{t=j+1..N−1} g_t is
    // the literal product (d_{N−1,N−1} = 1, then d_{N−1,j−1} = d · g_j);
    // after j = 0 it is Π_{t=0..N−1} g_t, the weight of the state in.
    double decay = 1.0;
    for (int64_t j = n - 1; j >= 0; --j) {
      const double kappa = keyWeight ? static_cast<double>(keyWeight[j]) : 1.0;
      const double weight = decay * kappa;
      std::vector<double> phi = applyFeatureMap(term, k + j * dim, j, n);
      for (int64_t f = 0; f < width; ++f) {
        accNorm[f] += weight * phi[f];
        for (int64_t c = 0; c < e; ++c)
          accState[f * e + c] +=
              weight * phi[f] * static_cast<double>(v[j * e + c]);
      }
      if (hasDecay)
        decay *= decayAt(j);
    }
    const float *initialState =
        term.initialState ? term.initialState + slice * width * e : nullptr;
    const float *initialNorm = term.initialState && term.initialNorm
                                   ? term.initialNorm + slice * width
                                   : nullptr;
    for (int64_t f = 0; f < width; ++f) {
      for (int64_t c = 0; c < e; ++c) {
        double s = accState[f * e + c];
        if (initialState)
          s += decay * static_cast<double>(initialState[f * e + c]);
        state[(slice * width + f) * e + c] = static_cast<float>(s);
      }
      if (norm) {
        double z = accNorm[f];
        if (initialNorm)
          z += decay * static_cast<double>(initialNorm[f]);
        norm[slice * width + f] = static_cast<float>(z);
      }
    }
  }
  return "";
}

std::string reference::logSumExp(const Problem &problem, size_t termIndex,
                                 float *lse) {
  std::string message = validateTermIndex(problem, termIndex);
  if (!message.empty())
    return message;
  const Term &term = problem.terms[termIndex];
  if (term.score != Score::Softmax ||
      effectiveNormalizer(term) != Normalizer::Rows)
    return "term " + std::to_string(termIndex) +
           ": a log-sum-exp needs a softmax term with the rows normalizer";
  if (!lse)
    return "log-sum-exp buffer is null";
  const int64_t n = problem.queries;
  std::vector<double> acc(static_cast<size_t>(n * problem.valueDim));
  std::vector<double> rows(static_cast<size_t>(n));
  for (int64_t slice = 0; slice < problem.batch * problem.heads; ++slice) {
    accumulateTerm(problem, term, slice, acc, &rows);
    for (int64_t i = 0; i < n; ++i)
      lse[slice * n + i] = static_cast<float>(rows[i]);
  }
  return "";
}
