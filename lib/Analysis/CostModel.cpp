//===- CostModel.cpp - Choose the association order and chunk -------------===//
//
// The formulas are explained in docs/CostModel.md; the comments here say why
// a term is counted the way it is.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/CostModel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

using namespace attn;
using namespace attn::cost;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t TermShape::scoreWidth() const {
  if (score != Score::Kernel)
    return featureDim;
  switch (featureMap) {
  case FeatureMap::FavorPlus:
    return numFeatures;
  case FeatureMap::CosFormer:
    return 2 * featureDim;
  default:
    return featureDim;
  }
}

int64_t TermShape::attendedKeys() const {
  return projectedLength > 0 ? projectedLength : keys;
}

const char *cost::toString(Order order) {
  return order == Order::QkFirst ? "qk_first" : "kv_first";
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

Target cost::cpuTarget() { return Target(); }

Target cost::nvptxTarget() {
  Target target;
  target.name = "nvptx";
  // f32 CUDA-core peak: the f32 code generation does not use tensor cores
  // yet (bf16 dense nominal is 989e12).
  target.peakFlops = 67e12;
  target.memoryBandwidth = 4.3e12;
  target.cores = 132;
  target.expFlops = 4; // SFU ex2 runs beside the FMA pipes
  target.qkEfficiency = 0.35;
  target.kvEfficiency = 0.5;
  target.chunkedEfficiency = 0.3;
  target.featureEfficiency = 0.2;
  target.chunkHalfEfficiency = 64;
  target.queryTile = 128;
  target.keyTile = 64;
  target.launchOverhead = 5e-6;
  return target;
}

static std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r\n\"'");
  if (begin == std::string::npos)
    return "";
  size_t end = text.find_last_not_of(" \t\r\n\"'");
  return text.substr(begin, end - begin + 1);
}

static bool setField(Target &target, const std::string &key,
                     const std::string &value, std::string &error) {
  if (key == "base" || key == "name") {
    if (key == "base") {
      if (value == "cpu")
        target = cpuTarget();
      else if (value == "nvptx")
        target = nvptxTarget();
      else
        return error = "unknown base target '" + value +
                       "'; expected cpu or nvptx",
               false;
    } else {
      target.name = value;
    }
    return true;
  }
  char *end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  bool mayBeZero = key == "launch_overhead";
  if (value.empty() || *end != '\0' || !std::isfinite(number) ||
      number < 0 || (number == 0 && !mayBeZero))
    return error = "'" + key + "' needs a positive number, got '" + value +
                   "'",
           false;
  struct Field {
    const char *key;
    double *real;
    int64_t *integer;
  };
  const Field fields[] = {
      {"peak_flops", &target.peakFlops, nullptr},
      {"memory_bandwidth", &target.memoryBandwidth, nullptr},
      {"cores", nullptr, &target.cores},
      {"element_bytes", nullptr, &target.elementBytes},
      {"exp_flops", &target.expFlops, nullptr},
      {"qk_efficiency", &target.qkEfficiency, nullptr},
      {"kv_efficiency", &target.kvEfficiency, nullptr},
      {"chunked_efficiency", &target.chunkedEfficiency, nullptr},
      {"feature_efficiency", &target.featureEfficiency, nullptr},
      {"chunk_half_efficiency", &target.chunkHalfEfficiency, nullptr},
      {"query_tile", nullptr, &target.queryTile},
      {"key_tile", nullptr, &target.keyTile},
      {"launch_overhead", &target.launchOverhead, nullptr},
  };
  for (const Field &field : fields) {
    if (key != field.key)
      continue;
    if (field.real) {
      *field.real = number;
    } else {
      if (number != std::floor(number) || number > (1 << 30))
        return error = "'" + key + "' needs an integer up to 2^30, got '" +
                       value + "'",
               false;
      *field.integer = static_cast<int64_t>(number);
    }
    return true;
  }
  error = "unknown target key '" + key + "'";
  return false;
}

std::string cost::parseTarget(const std::string &text, Target &target) {
  // Accept `key = value` lines and a flat JSON object alike: turn the JSON
  // punctuation into line breaks and `:` into `=`.
  std::string normalized = text;
  bool isJson = trim(text).rfind("{", 0) == 0;
  if (isJson) {
    for (char &c : normalized) {
      if (c == '{' || c == '}' || c == ',')
        c = '\n';
      else if (c == ':')
        c = '=';
    }
  }
  // `base` resets every field, so it is applied first wherever it is written.
  for (int pass = 0; pass < 2; ++pass) {
  std::istringstream lines(normalized);
  std::string line;
  int lineNumber = 0;
  while (std::getline(lines, line)) {
    ++lineNumber;
    if (!isJson) {
      size_t comment = line.find('#');
      if (comment != std::string::npos)
        line.resize(comment);
    }
    if (trim(line).empty())
      continue;
    size_t equals = line.find('=');
    std::string where =
        isJson ? std::string("") : "line " + std::to_string(lineNumber) + ": ";
    if (equals == std::string::npos)
      return where + "expected 'key = value', got '" + trim(line) + "'";
    std::string key = trim(line.substr(0, equals));
    if ((key == "base") != (pass == 0))
      continue;
    std::string error;
    if (!setField(target, key, trim(line.substr(equals + 1)), error))
      return where + error;
  }
  }
  for (double efficiency :
       {target.qkEfficiency, target.kvEfficiency, target.chunkedEfficiency,
        target.featureEfficiency})
    if (efficiency > 1)
      return "efficiencies are fractions of the peak and must be at most 1";
  return "";
}

std::string cost::loadTarget(const std::string &path, Target &target) {
  std::ifstream file(path);
  if (!file)
    return "cannot read target file '" + path + "'";
  std::stringstream text;
  text << file.rdbuf();
  std::string error = parseTarget(text.str(), target);
  if (!error.empty())
    return "target file '" + path + "': " + error;
  return "";
}

//===----------------------------------------------------------------------===//
// Counting
//===----------------------------------------------------------------------===//

double cost::unmaskedPairs(MaskKind mask, int64_t block, int64_t queries,
                           int64_t keys) {
  double n = static_cast<double>(queries), m = static_cast<double>(keys);
  if (mask == MaskKind::None)
    return n * m;
  if (mask == MaskKind::Causal) {
    if (queries <= keys)
      return n * (n + 1) / 2;
    return m * (m + 1) / 2 + (n - m) * m;
  }
  if (block <= 0)
    return 0;
  double c = static_cast<double>(block);
  int64_t fullBlocks = std::min(queries, keys) / block;
  double full = static_cast<double>(fullBlocks);
  if (mask == MaskKind::Block) {
    // Full blocks are c×c squares; at most one partial block pairs rows
    // with keys (past it either the rows or the keys have run out).
    double rows = std::min<double>(c, n - full * c);
    double cols = std::max<double>(0, std::min<double>(c, m - full * c));
    return full * c * c + rows * cols;
  }
  if (mask == MaskKind::BlockCausal) {
    if (queries <= keys) {
      double rest = n - full * c;
      return full * c * (c + 1) / 2 + rest * (rest + 1) / 2;
    }
  } else if (mask == MaskKind::PriorBlocks) {
    if (queries <= keys) {
      // Row i of block b sees the b·c keys before its block.
      double rest = n - full * c;
      return c * c * full * (full - 1) / 2 + rest * full * c;
    }
  }
  // More queries than keys with a block mask: sum block by block.
  double pairs = 0;
  for (int64_t start = 0; start < queries; start += block) {
    int64_t rows = std::min(block, queries - start);
    if (mask == MaskKind::PriorBlocks) {
      pairs += static_cast<double>(rows) * std::min(keys, start);
      continue;
    }
    for (int64_t i = start; i < start + rows; ++i)
      pairs += std::max<int64_t>(0, std::min(i + 1, keys) - start);
  }
  return pairs;
}

double cost::featureMapFlops(const TermShape &shape, const Target &target) {
  if (shape.score != Score::Kernel)
    return 0;
  double rows = static_cast<double>(shape.queries + shape.attendedKeys());
  double d = static_cast<double>(shape.featureDim);
  double perRow = 0;
  switch (shape.featureMap) {
  case FeatureMap::None:
  case FeatureMap::Identity:
    perRow = 0;
    break;
  case FeatureMap::Relu:
    perRow = d;
    break;
  case FeatureMap::Elu1:
    perRow = d * (target.expFlops + 1);
    break;
  case FeatureMap::CosFormer:
    // relu, then two scaled copies; cos/sin once per row.
    perRow = 3 * d + 2 * target.expFlops;
    break;
  case FeatureMap::FavorPlus: {
    double m = static_cast<double>(shape.numFeatures);
    // ω x' (m·D multiply-adds), |x'|², then one exp per feature.
    perRow = 2 * m * d + 2 * d + m * (target.expFlops + 2);
    break;
  }
  }
  return rows * perRow * shape.batch * shape.heads;
}

static double projectionFlops(const TermShape &shape) {
  if (shape.projectedLength <= 0)
    return 0;
  // K' = E·K and V' = F·V for every batch and head.
  return 2.0 * shape.projectedLength * shape.keys *
         (shape.featureDim + shape.valueDim) * shape.batch * shape.heads;
}

static double projectionBytes(const TermShape &shape, const Target &target) {
  if (shape.projectedLength <= 0)
    return 0;
  double perHead = static_cast<double>(shape.keys + shape.projectedLength) *
                   (shape.featureDim + shape.valueDim);
  return (perHead * shape.batch * shape.heads +
          2.0 * shape.projectedLength * shape.keys) *
         target.elementBytes;
}

/// The roofline: the slower of compute and memory, plus launch costs.
static double predict(double computeSeconds, double bytes, int launches,
                      const Target &target) {
  return std::max(computeSeconds, bytes / target.memoryBandwidth) +
         launches * target.launchOverhead;
}

Strategy cost::estimateQkFirst(const TermShape &shape, const Target &target) {
  Strategy strategy;
  strategy.order = Order::QkFirst;
  strategy.chunk = target.keyTile;
  double heads = static_cast<double>(shape.batch * shape.heads);
  double n = static_cast<double>(shape.queries);
  double keys = static_cast<double>(shape.attendedKeys());
  double w = static_cast<double>(shape.scoreWidth());
  double e = static_cast<double>(shape.valueDim);
  MaskKind mask = shape.projectedLength > 0 ? MaskKind::None : shape.mask;
  double pairs = unmaskedPairs(mask, shape.maskBlock, shape.queries,
                               shape.attendedKeys());

  // Per pair: the score dot product and the weighted accumulation of v.
  double perPair = 2 * w + 2 * e;
  if (shape.score == Score::Softmax)
    perPair += target.expFlops + 2; // exp, running max and sum
  else if (shape.score == Score::Relu2)
    perPair += 3; // scale, relu, square
  else
    perPair += 1; // row sum for the normaliser
  double pairFlops = pairs * perPair * heads;
  // Online softmax rescales the accumulator once per key tile.
  double rescaleFlops = 0;
  if (shape.score == Score::Softmax)
    rescaleFlops = n * std::ceil(keys / target.keyTile) * 2 * e * heads;
  double divideFlops = n * e * heads;
  double features = featureMapFlops(shape, target);
  double projection = projectionFlops(shape);

  strategy.flops =
      pairFlops + rescaleFlops + divideFlops + features + projection;
  double compute =
      (pairFlops + rescaleFlops + divideFlops) /
          (target.peakFlops * target.qkEfficiency) +
      features / (target.peakFlops * target.featureEfficiency) +
      projection / (target.peakFlops * target.kvEfficiency);

  // Q is read once and O written once; K and V are streamed once per query
  // tile (flash tiling never materialises the N×M weights), but only the
  // key tiles a mask leaves visible: on average P/N keys per row, rounded
  // out to whole tiles.
  double queryTiles = std::ceil(n / target.queryTile);
  double keysPerTile = std::min(keys, pairs / n + target.keyTile);
  double perHead = n * shape.featureDim +
                   queryTiles * keysPerTile * (shape.featureDim + e) + n * e;
  strategy.bytes =
      perHead * heads * target.elementBytes + projectionBytes(shape, target);
  strategy.peakBytes = static_cast<double>(target.queryTile) *
                       target.keyTile * target.elementBytes *
                       std::min<double>(heads, target.cores);
  strategy.computeSeconds = compute;
  strategy.memorySeconds = strategy.bytes / target.memoryBandwidth;
  strategy.seconds = predict(compute, strategy.bytes,
                             shape.projectedLength > 0 ? 2 : 1, target);

  std::ostringstream description;
  description << "qk-first";
  if (shape.projectedLength > 0)
    description << " over " << shape.projectedLength
                << " Linformer-projected keys";
  if (mask != MaskKind::None)
    description << ", only unmasked key tiles";
  description << ", online " << (shape.score == Score::Softmax ? "softmax" : "normaliser")
              << " in " << target.queryTile << "x" << target.keyTile
              << " tiles";
  strategy.description = description.str();
  return strategy;
}

Strategy cost::estimateKvFirst(const TermShape &shape, const Target &target,
                               std::optional<int64_t> chunk) {
  Strategy strategy;
  strategy.order = Order::KvFirst;
  double heads = static_cast<double>(shape.batch * shape.heads);
  double n = static_cast<double>(shape.queries);
  double keys = static_cast<double>(shape.attendedKeys());
  double w = static_cast<double>(shape.scoreWidth());
  double e = static_cast<double>(shape.valueDim);

  // State S = Σ_j φ(k_j) v_jᵀ and z = Σ_j φ(k_j); output φ(q_i)·S / φ(q_i)·z.
  double stateFlops = (2 * keys * w * e + keys * w) * heads;
  double outputFlops = (2 * n * w * e + 2 * n * w + n * e) * heads;
  double intraFlops = 0;
  double stateEfficiency = target.kvEfficiency;
  double features = featureMapFlops(shape, target);
  double projection = projectionFlops(shape);
  bool chunked = shape.isCausal() && shape.projectedLength <= 0;
  if (chunked) {
    int64_t c = std::max<int64_t>(1, chunk.value_or(target.keyTile));
    // Chunks must not straddle blocks: the state restarts at each block.
    if (shape.mask == MaskKind::BlockCausal && shape.maskBlock % c != 0)
      c = shape.maskBlock;
    strategy.chunk = c;
    // Inside a chunk the causal part is computed quadratically.
    double pairs = unmaskedPairs(MaskKind::BlockCausal, c, shape.queries,
                                 shape.attendedKeys());
    intraFlops = pairs * (2 * w + 2 * e + 1) * heads;
    stateEfficiency *= c / (c + target.chunkHalfEfficiency);
  } else if (shape.mask == MaskKind::Block ||
             shape.mask == MaskKind::PriorBlocks) {
    // One state per block (block) or a running state updated per block
    // (prior_blocks): the totals are those of plain kv-first.
    strategy.chunk = shape.maskBlock;
  }
  strategy.flops = stateFlops + outputFlops + intraFlops + features +
                   projection;
  double compute =
      (stateFlops + outputFlops) / (target.peakFlops * stateEfficiency) +
      intraFlops / (target.peakFlops * target.chunkedEfficiency) +
      features / (target.peakFlops * target.featureEfficiency) +
      projection / (target.peakFlops * target.kvEfficiency);

  double perHead = n * shape.featureDim + keys * (shape.featureDim + e) +
                   n * e;
  strategy.bytes =
      perHead * heads * target.elementBytes + projectionBytes(shape, target);
  double state = w * (e + 1);
  if (chunked)
    state += static_cast<double>(*strategy.chunk) * *strategy.chunk;
  strategy.peakBytes = state * heads * target.elementBytes;
  // A state pass, then a query pass.
  strategy.computeSeconds = compute;
  strategy.memorySeconds = strategy.bytes / target.memoryBandwidth;
  strategy.seconds = predict(compute, strategy.bytes,
                             shape.projectedLength > 0 ? 3 : 2, target);

  std::ostringstream description;
  if (chunked)
    description << "kv-first, causal chunks of " << *strategy.chunk
                << ": quadratic inside a chunk, a running " << shape.scoreWidth()
                << "x" << shape.valueDim << " state across chunks";
  else if (shape.mask == MaskKind::PriorBlocks)
    description << "kv-first: a running " << shape.scoreWidth() << "x"
                << shape.valueDim << " state, updated after each block of "
                << shape.maskBlock;
  else
    description << "kv-first: one " << shape.scoreWidth() << "x"
                << shape.valueDim << " state per "
                << (shape.mask == MaskKind::Block ? "block" : "head")
                << ", then the query pass";
  strategy.description = description.str();
  return strategy;
}

int64_t cost::bestChunk(const TermShape &shape, const Target &target) {
  if (shape.queries < 16)
    return std::max<int64_t>(1, shape.queries);
  int64_t best = 16;
  double bestSeconds = INFINITY;
  for (int64_t c = 16; c <= 1024 && c <= shape.queries; c *= 2) {
    if (shape.mask == MaskKind::BlockCausal && shape.maskBlock % c != 0)
      continue;
    double seconds = estimateKvFirst(shape, target, c).seconds;
    if (seconds < bestSeconds) {
      bestSeconds = seconds;
      best = c;
    }
  }
  if (shape.mask == MaskKind::BlockCausal && bestSeconds == INFINITY)
    return shape.maskBlock;
  return best;
}

std::optional<int64_t> cost::chooseChunk(const TermShape &shape,
                                         const Target &target, Order order) {
  if (order == Order::QkFirst)
    return target.keyTile;
  if (shape.projectedLength > 0)
    return std::nullopt;
  if (shape.isCausal())
    return bestChunk(shape, target);
  if (shape.mask == MaskKind::Block || shape.mask == MaskKind::PriorBlocks)
    return shape.maskBlock;
  return std::nullopt;
}

/// The fastest kv-first strategy (with its best chunk when causal).
static Strategy bestKvFirst(const TermShape &shape, const Target &target) {
  std::optional<int64_t> chunk;
  if (shape.isCausal() && shape.projectedLength <= 0)
    chunk = chooseChunk(shape, target, Order::KvFirst);
  return estimateKvFirst(shape, target, chunk);
}

std::optional<int64_t> cost::crossoverLength(const TermShape &shape,
                                             const Target &target,
                                             bool keysFollowQueries) {
  if (!shape.hasProductForm())
    return std::nullopt;
  auto kvWins = [&](int64_t n) {
    TermShape resized = shape;
    resized.queries = n;
    if (keysFollowQueries)
      resized.keys = n;
    return bestKvFirst(resized, target).seconds <
           estimateQkFirst(resized, target).seconds;
  };
  const int64_t limit = int64_t(1) << 30;
  int64_t high = 1;
  while (high <= limit && !kvWins(high))
    high *= 2;
  if (high > limit)
    return std::nullopt;
  int64_t low = high / 2; // kv-first loses at low (or low == 0)
  while (high - low > 1) {
    int64_t mid = low + (high - low) / 2;
    if (kvWins(mid))
      high = mid;
    else
      low = mid;
  }
  return high;
}

std::string cost::formatSeconds(double seconds, int decimals) {
  char buffer[48];
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.1f us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof(buffer), "%.*f ms", decimals, seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.*f s", decimals, seconds);
  return buffer;
}

std::string cost::formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

TermCost cost::analyzeTerm(const TermShape &shape, const Target &target) {
  TermCost result;
  Strategy qk = estimateQkFirst(shape, target);
  result.strategies.push_back(qk);
  if (!shape.hasProductForm()) {
    result.chosen = qk;
    result.reason = std::string(shape.score == Score::Softmax ? "softmax"
                                                              : "relu2") +
                    " has no product form: only qk-first is legal";
    return result;
  }
  Strategy kv = bestKvFirst(shape, target);
  result.strategies.push_back(kv);
  bool selfAttention = shape.queries == shape.keys;
  result.crossoverN = crossoverLength(shape, target, selfAttention);

  bool kvWins = kv.seconds < qk.seconds;
  const Strategy &winner = kvWins ? kv : qk;
  const Strategy &loser = kvWins ? qk : kv;
  result.chosen = winner;
  std::ostringstream reason;
  reason << toString(winner.order) << " is predicted "
         << formatSeconds(winner.seconds, 2) << " against "
         << formatSeconds(loser.seconds, 2) << " ("
         << formatNumber(winner.flops) << " vs " << formatNumber(loser.flops)
         << " FLOPs";
  if (winner.memorySeconds > winner.computeSeconds)
    reason << ", memory-bound";
  reason << ")";
  if (result.crossoverN) {
    reason << "; kv-first wins from N = " << *result.crossoverN << ", and N = "
           << shape.queries << " is "
           << (shape.queries >= *result.crossoverN ? "above" : "below")
           << " it";
  } else {
    reason << "; kv-first never wins at these widths";
  }
  result.reason = reason.str();
  return result;
}

LayerView cost::layerView(int64_t heads, int64_t headDim,
                          int64_t featureRatio) {
  int64_t hidden = saturatingMul(heads, headDim);
  LayerView view;
  view.attentionExceedsFfnN = saturatingMul(2, hidden);
  view.quadraticDominatesN = saturatingMul(6, hidden);
  view.linearBeatsSoftmaxN =
      saturatingMul(saturatingMul(featureRatio, featureRatio), headDim);
  return view;
}

int64_t cost::saturatingMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0)
    return 0;
  if (a > std::numeric_limits<int64_t>::max() / b)
    return std::numeric_limits<int64_t>::max();
  return a * b;
}
