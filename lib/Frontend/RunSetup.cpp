//===- RunSetup.cpp - Inputs, reference problem and tolerance of a run ----===//
//
// Moved out of attnc so that the GPU runner, built without LLVM, generates
// the very same inputs and applies the very same tolerance.
//
//===----------------------------------------------------------------------===//

#include "attn/Frontend/RunSetup.h"
#include "attn/Support/InputGenerator.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

using namespace attn;
using namespace attn::frontend;

std::string attn::frontend::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

static bool isOmega(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.omega.name == name)
      return true;
  return false;
}

static bool isDecay(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.decay.name == name)
      return true;
  return false;
}

static bool isKeyWeight(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.keyWeight.name == name)
      return true;
  return false;
}

static bool isAlibiSlopes(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.alibiSlopes.name == name)
      return true;
  return false;
}

static bool isNormState(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.normIn.name == name)
      return true;
  return false;
}

/// The longest length \p name may need to say "all": M where it is some
/// term's key lengths, N where it is query lengths (the larger for both);
/// 0 where it is no term's lengths.
static int64_t lengthsLimit(const Spec &spec, const std::string &name,
                            const SizeBindings &sizes,
                            const InputArrays &arrays) {
  int64_t limit = 0;
  auto rows = [&](const InputRef &ref) -> int64_t {
    const InputDecl *input = spec.findInput(ref.name);
    if (!input)
      return 0;
    auto found = arrays.find(ref.name);
    std::vector<int64_t> shape = found != arrays.end()
                                     ? found->second.shape
                                     : concreteShape(*input, sizes);
    return shape.size() == 4 ? std::max<int64_t>(shape[2], 0) : 0;
  };
  for (const TermDecl &term : spec.terms) {
    if (term.keyLengths.name == name)
      limit = std::max(limit, rows(term.key));
    if (term.queryLengths.name == name)
      limit = std::max(limit, rows(term.query));
  }
  return limit;
}

static bool isLengths(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.keyLengths.name == name || term.queryLengths.name == name)
      return true;
  return false;
}

static bool isProjection(const Spec &spec, const std::string &name) {
  for (const TermDecl &term : spec.terms)
    if (term.projectKeys.name == name || term.projectValues.name == name)
      return true;
  return false;
}

bool attn::frontend::generateInputs(const Spec &spec, const SizeBindings &sizes,
                                    uint64_t seed, InputArrays &arrays,
                                    std::string &error) {
  for (const InputDecl &input : spec.inputs) {
    if (arrays.count(input.name))
      continue;
    npy::Array array;
    array.shape = concreteShape(input, sizes);
    uint64_t count = 1;
    for (int64_t size : array.shape) {
      if (size < 0) {
        error = "input '" + input.name + "' of shape " +
                formatShape(array.shape) + " has an unbound size";
        return false;
      }
      if (size > 0 && count > (uint64_t(1) << 32) / uint64_t(size)) {
        error = "input '" + input.name + "' of shape " +
                formatShape(array.shape) + " is too large to generate";
        return false;
      }
      count *= size;
    }
    uint64_t inputSeed = inputs::seedFor(seed, input.name);
    if (isOmega(spec, input.name))
      array.data =
          inputs::orthogonalGaussian(inputSeed, array.shape[0], array.shape[1]);
    else if (isDecay(spec, input.name) && array.shape.size() == 1)
      // One γ per head: RetNet's.
      array.data = inputs::retentionDecay(array.shape[0]);
    else if (isDecay(spec, input.name))
      // One g per token, near 1 as trained gates are (GLA's sigmoid^(1/16)):
      // a key's weight halves over 7 to 35 tokens.
      array.data = inputs::uniform(inputSeed, count, 0.9, 1.0);
    else if (isAlibiSlopes(spec, input.name))
      // Positive slopes of the size the standard ones have (2^-8 .. 2^-1).
      array.data = inputs::uniform(inputSeed, count, 0.004, 0.5);
    else if (isKeyWeight(spec, input.name))
      array.data = inputs::uniform(inputSeed, count, 0.0, 1.0);
    else if (isNormState(spec, input.name))
      // z0 sums the features of earlier keys: positive, as a state of
      // non-negative features is (S0 is N(0, 1) like any input).
      array.data = inputs::uniform(inputSeed, count, 0.0, 4.0);
    else if (isLengths(spec, input.name)) {
      // Whole numbers in [0, L]: batch 1 full, batch 2 empty (the edges
      // every padded batch has), the others anywhere in between.
      int64_t limit = lengthsLimit(spec, input.name, sizes, arrays);
      array.data = inputs::uniform(inputSeed, count, 0.0, double(limit) + 1.0);
      for (size_t b = 0; b < array.data.size(); ++b)
        array.data[b] = b == 1 ? float(limit)
                        : b == 2
                            ? 0.0f
                            : std::min(std::floor(array.data[b]), float(limit));
    } else if (isProjection(spec, input.name))
      // Linformer's E and F average over the sequence: N(0, 1/k).
      array.data = inputs::gaussian(inputSeed, count,
                                    1.0 / std::sqrt(double(array.shape[0])));
    else
      array.data = inputs::gaussian(inputSeed, count);
    arrays[input.name] = std::move(array);
  }
  return true;
}

reference::Problem attn::frontend::buildProblem(const Spec &spec,
                                                const InputArrays &arrays) {
  const npy::Array &value = arrays.at(spec.value.name);
  const npy::Array &query = arrays.at(spec.terms.front().query.name);
  reference::Problem problem;
  problem.batch = query.shape[0];
  problem.heads = query.shape[1];
  problem.queries = query.shape[2];
  problem.keys = value.shape[2];
  problem.keyHeads = value.shape[1];
  problem.valueDim = value.shape[3];
  problem.v = value.data.data();
  if (spec.gate.isSet())
    problem.gate = arrays.at(spec.gate.name).data.data();
  for (const TermDecl &decl : spec.terms) {
    reference::Term term;
    term.score = *decl.score;
    term.featureMap = decl.featureMap;
    term.mask = decl.mask;
    term.normalizer = decl.normalizer;
    term.scale = decl.scale;
    term.eps = decl.eps;
    const npy::Array &q = arrays.at(decl.query.name);
    term.featureDim = q.shape[3];
    term.q = q.data.data();
    term.k = arrays.at(decl.key.name).data.data();
    if (decl.omega.isSet()) {
      const npy::Array &omega = arrays.at(decl.omega.name);
      term.numFeatures = omega.shape[0];
      term.omega = omega.data.data();
    }
    term.decayRate = decl.decayRate;
    if (decl.decay.isSet()) {
      const npy::Array &g = arrays.at(decl.decay.name);
      (g.shape.size() == 1 ? term.decayPerHead : term.decayPerToken) =
          g.data.data();
    }
    if (decl.keyWeight.isSet())
      term.keyWeight = arrays.at(decl.keyWeight.name).data.data();
    term.softcap = decl.softcap;
    term.alibi = decl.alibi;
    if (decl.alibiSlopes.isSet())
      term.alibiSlopes = arrays.at(decl.alibiSlopes.name).data.data();
    if (decl.sinks.isSet())
      term.sinks = arrays.at(decl.sinks.name).data.data();
    if (decl.keyLengths.isSet())
      term.keyLengths = arrays.at(decl.keyLengths.name).data.data();
    if (decl.queryLengths.isSet())
      term.queryLengths = arrays.at(decl.queryLengths.name).data.data();
    if (decl.stateIn.isSet())
      term.initialState = arrays.at(decl.stateIn.name).data.data();
    if (decl.normIn.isSet())
      term.initialNorm = arrays.at(decl.normIn.name).data.data();
    if (decl.projectKeys.isSet()) {
      const npy::Array &e = arrays.at(decl.projectKeys.name);
      term.projectedLength = e.shape[0];
      term.projectKeys = e.data.data();
      term.projectValues = arrays.at(decl.projectValues.name).data.data();
    }
    problem.terms.push_back(term);
  }
  return problem;
}

MemoryNeed attn::frontend::runMemoryNeed(const Spec &spec,
                                         const SizeBindings &sizes,
                                         const InputArrays &loaded,
                                         bool reference, bool compiled) {
  auto bytesOf = [](const std::vector<int64_t> &shape) {
    uint64_t bytes = sizeof(float);
    for (int64_t size : shape)
      bytes = saturatingMul(bytes, static_cast<uint64_t>(std::max<int64_t>(
                                       size, 0)));
    return bytes;
  };
  // The problem's sizes, over arrays that hold shapes but no data.
  InputArrays shapes;
  uint64_t newInputs = 0, allInputs = 0;
  for (const InputDecl &input : spec.inputs) {
    npy::Array array;
    auto found = loaded.find(input.name);
    array.shape = found != loaded.end() ? found->second.shape
                                        : concreteShape(input, sizes);
    uint64_t bytes = bytesOf(array.shape);
    allInputs = allInputs > UINT64_MAX - bytes ? UINT64_MAX : allInputs + bytes;
    if (found == loaded.end())
      newInputs = newInputs > UINT64_MAX - bytes ? UINT64_MAX : newInputs + bytes;
    shapes[input.name] = std::move(array);
  }
  reference::Problem problem = buildProblem(spec, shapes);
  uint64_t output = bytesOf(outputShape(problem));

  MemoryNeed need;
  need.add("inputs", newInputs);
  need.add("output", output);
  if (reference) {
    need.add("reference output", output);
    need.add("reference workspace", reference::workspaceBytes(problem));
  }
  if (compiled)
    need.add("compiled code's workspace (estimate)",
             estimateKernelWorkspace(allInputs));
  return need;
}

/// \p flat as one index per dimension of \p shape.
static std::vector<int64_t> unflatten(size_t flat,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(flat % shape[d]);
    flat /= shape[d];
  }
  return index;
}

std::string attn::frontend::findNonFinite(const Spec &spec,
                                          const InputArrays &arrays) {
  for (const InputDecl &input : spec.inputs) {
    auto found = arrays.find(input.name);
    if (found == arrays.end())
      continue;
    const npy::Array &array = found->second;
    for (size_t i = 0; i < array.data.size(); ++i) {
      float x = array.data[i];
      if (std::isfinite(x))
        continue;
      return "input '" + input.name + "' holds " +
             (std::isnan(x) ? "NaN"
              : x > 0       ? "+inf"
                            : "-inf") +
             " at " + formatShape(unflatten(i, array.shape));
    }
  }
  return "";
}

std::string attn::frontend::findIntegerInputs(const Spec &spec,
                                              const InputArrays &arrays) {
  for (const InputDecl &input : spec.inputs) {
    auto found = arrays.find(input.name);
    if (found == arrays.end() || found->second.integerDtype.empty() ||
        isLengths(spec, input.name))
      continue;
    return "input '" + input.name + "' holds integers (dtype '" +
           found->second.integerDtype +
           "'): only key and query lengths take integers, the others "
           "float32 or float64";
  }
  return "";
}

std::string attn::frontend::findBadValues(const Spec &spec,
                                          const InputArrays &arrays) {
  for (const TermDecl &term : spec.terms) {
    for (const InputRef *lengths : {&term.keyLengths, &term.queryLengths}) {
      auto found = lengths->isSet() ? arrays.find(lengths->name) : arrays.end();
      if (found == arrays.end())
        continue;
      const npy::Array &array = found->second;
      for (size_t i = 0; i < array.data.size(); ++i) {
        float l = array.data[i];
        if (l >= 0.0f && std::floor(l) == l)
          continue;
        char value[32];
        std::snprintf(value, sizeof(value), "%g", double(l));
        return "input '" + lengths->name + "' is the " +
               (lengths == &term.keyLengths ? "key" : "query") +
               " lengths of term '" + term.name +
               "' and must hold whole numbers >= 0, but holds " + value +
               " at " + formatShape(unflatten(i, array.shape));
      }
    }
    if (!term.decay.isSet())
      continue;
    auto found = arrays.find(term.decay.name);
    if (found == arrays.end())
      continue;
    const npy::Array &array = found->second;
    for (size_t i = 0; i < array.data.size(); ++i) {
      float g = array.data[i];
      if (g >= 0.0f && g <= 1.0f)
        continue;
      char value[32];
      std::snprintf(value, sizeof(value), "%g", double(g));
      return "input '" + term.decay.name + "' is the decay of term '" +
             term.name + "' and must lie in [0, 1], but holds " + value +
             " at " + formatShape(unflatten(i, array.shape));
    }
  }
  return "";
}

/// The largest Euclidean norm of the rows of X [B, H, L, D].
static double largestRowNorm(const float *x, int64_t rows, int64_t dim) {
  double largest = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t d = 0; d < dim; ++d)
      sum += double(x[r * dim + d]) * double(x[r * dim + d]);
    largest = std::max(largest, std::sqrt(sum));
  }
  return largest;
}

std::vector<std::string>
attn::frontend::overflowWarnings(const reference::Problem &problem) {
  std::vector<std::string> warnings;
  const int64_t slices = problem.batch * problem.heads;
  // K and V have H_kv heads (DESIGN §1.3 grouped heads).
  const int64_t keySlices =
      problem.batch * (problem.keyHeads ? problem.keyHeads : problem.heads);
  double largestValue = 0.0;
  for (int64_t i = 0; i < keySlices * problem.keys * problem.valueDim; ++i)
    largestValue = std::max(largestValue, std::fabs(double(problem.v[i])));
  auto show = [](double x) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2g", x);
    return std::string(text);
  };
  for (size_t t = 0; t < problem.terms.size(); ++t) {
    const reference::Term &term = problem.terms[t];
    // Bounded features: FAVOR+ is stabilised, |RFA's products| <= 2.
    if (term.featureMap == reference::FeatureMap::FavorPlus ||
        term.featureMap == reference::FeatureMap::Rfa)
      continue;
    const int64_t dim = term.featureDim;
    double q = largestRowNorm(term.q, slices * problem.queries, dim);
    double k = largestRowNorm(term.k, keySlices * problem.keys, dim);
    double keys = double(problem.keys);
    std::string what;
    if (term.score == reference::Score::Softmax) {
      double bound = q * k * reference::effectiveScale(term);
      if (bound > FLT_MAX)
        what = "its scores can exceed the f32 range (max|q| max|k| s = " +
               show(bound) + " > 3.4e38): rows may be 0 or NaN instead of the "
                             "softmax of the largest scores";
    } else if (term.score == reference::Score::Relu2) {
      double score = q * k * reference::effectiveScale(term);
      double bound = score * score * keys * std::max(1.0, largestValue);
      if (bound > FLT_MAX)
        what = "relu(s)^2 summed over the keys can exceed the f32 range "
               "(M (max|q| max|k| s)^2 max|v| = " +
               show(bound) + " > 3.4e38)";
    } else {
      // phi(x) <= |x| + 1 elementwise (cosFormer's halves too), so
      // phi(q) . phi(k) <= (|q| + sqrt(D)) (|k| + sqrt(D)) (twice for
      // cosFormer's two halves), summed over M keys, times the values.
      double root = std::sqrt(double(dim));
      double bound = 2.0 * (q + root) * (k + root) * keys *
                     std::max(1.0, largestValue);
      if (bound > FLT_MAX)
        what = "its feature products summed over the keys can exceed the f32 "
               "range (bound " +
               show(bound) + " > 3.4e38)";
    }
    if (!what.empty())
      warnings.push_back("term " + std::to_string(t) + ": " + what +
                         "; the compiled code computes in f32 (the reference "
                         "evaluator in double)");
  }
  return warnings;
}

std::vector<int64_t>
attn::frontend::outputShape(const reference::Problem &problem) {
  return {problem.batch, problem.heads, problem.queries, problem.valueDim};
}

double attn::frontend::checkTolerance(const Spec &spec, bool tensorCores,
                                      bool tf32) {
  double tolerance = 1e-4;
  bool softmax = false;
  for (const TermDecl &term : spec.terms) {
    bool signedFeatures = term.featureMap == FeatureMap::Identity ||
                          term.featureMap == FeatureMap::Rfa;
    bool rows = term.normalizer == Normalizer::Rows ||
                term.normalizer == Normalizer::Default;
    if (term.featureMap == FeatureMap::FavorPlus || (signedFeatures && rows))
      tolerance = 1e-3;
    softmax |= term.score == Score::Softmax;
  }
  bool narrow = std::any_of(spec.inputs.begin(), spec.inputs.end(),
                            [](const InputDecl &input) {
                              return input.elementType == ElementType::BF16 ||
                                     input.elementType == ElementType::F16;
                            });
  if (tensorCores && (narrow || tf32))
    tolerance = std::max(tolerance, 2e-3);
  // (f16 and tf32 softmax: the 2e-3 above.)
  if (tensorCores && softmax)
    for (const InputDecl &input : spec.inputs)
      if (input.elementType == ElementType::BF16)
        tolerance = std::max(tolerance, 1e-2);
  if (spec.outputType == ElementType::F16)
    tolerance += 5e-4;
  if (spec.outputType == ElementType::BF16)
    tolerance += 4e-3;
  return tolerance;
}

void attn::frontend::roundInputs(const Spec &spec, InputArrays &arrays) {
  for (const InputDecl &input : spec.inputs) {
    auto it = arrays.find(input.name);
    if (input.elementType == ElementType::F32 || it == arrays.end())
      continue;
    for (float &value : it->second.data)
      value = roundTo(input.elementType, value);
  }
}

const void *attn::frontend::packedArray(ElementType type,
                                        const std::vector<float> &data,
                                        std::vector<uint16_t> &storage) {
  if (type == ElementType::F32)
    return data.data();
  storage.resize(data.size());
  packElements(type, data.data(), data.size(), storage.data());
  return storage.data();
}

Comparison
attn::frontend::compareWithReference(const std::vector<float> &out,
                                     const std::vector<float> &expected,
                                     double tolerance) {
  Comparison result;
  double maxRef = 0.0;
  size_t count = std::min(out.size(), expected.size());
  for (size_t i = 0; i < count; ++i) {
    // max() drops NaN, so a NaN on either side must fail on its own: a NaN
    // reference (NaN inputs) is no evidence that the output is right.
    result.finite &= std::isfinite(out[i]) && std::isfinite(expected[i]);
    result.maxAbsError =
        std::max(result.maxAbsError, double(std::fabs(out[i] - expected[i])));
    maxRef = std::max(maxRef, double(std::fabs(expected[i])));
  }
  result.maxRelError =
      maxRef > 0 ? result.maxAbsError / maxRef : result.maxAbsError;
  // A size mismatch is a wrong result, not a smaller comparison.
  result.ok = out.size() == expected.size() && result.finite &&
              result.maxRelError <= tolerance;
  return result;
}

Comparison attn::frontend::compareLogSumExp(const std::vector<float> &out,
                                            const std::vector<float> &expected,
                                            double tolerance) {
  Comparison result;
  double scale = 1.0;
  bool emptyRowsMatch = true;
  size_t count = std::min(out.size(), expected.size());
  for (size_t i = 0; i < count; ++i) {
    bool noKeyOut = std::isinf(out[i]) && out[i] < 0;
    bool noKeyExpected = std::isinf(expected[i]) && expected[i] < 0;
    if (noKeyOut || noKeyExpected) {
      emptyRowsMatch &= noKeyOut == noKeyExpected;
      continue;
    }
    result.finite &= std::isfinite(out[i]) && std::isfinite(expected[i]);
    result.maxAbsError =
        std::max(result.maxAbsError, double(std::fabs(out[i] - expected[i])));
    scale = std::max(scale, double(std::fabs(expected[i])));
  }
  result.maxRelError = result.maxAbsError / scale;
  result.ok = out.size() == expected.size() && result.finite &&
              emptyRowsMatch && result.maxRelError <= tolerance;
  return result;
}
