//===- CostModel.cpp - Choose the association order and chunk -------------===//
//
// The formulas are explained in docs/CostModel.md; the comments here say why
// a term is counted the way it is.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/CostModel.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

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
  case FeatureMap::Rfa:
    return 2 * numFeatures;
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
  switch (order) {
  case Order::QkFirst:
    return "qk_first";
  case Order::KvFirst:
    return "kv_first";
  case Order::Recurrent:
    return "recurrent";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

Target cost::cpuTarget() { return Target(); }

double Target::qk(bool exp, bool masked) const {
  double plain =
      exp ? qkEfficiency
          : (qkKernelEfficiency > 0 ? qkKernelEfficiency : qkEfficiency);
  double maskedEfficiency = exp ? qkMaskedEfficiency : qkKernelMaskedEfficiency;
  return masked && maskedEfficiency > 0 ? maskedEfficiency : plain;
}

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
  // One thread block per (batch, head) walks the tokens in order.
  target.recurrentEfficiency = 0.005;
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

/// The numeric keys of a target file, in the order printTarget writes them.
struct TargetField {
  /// The values a key takes: positive, or also 0 (fixed costs, penalties
  /// that may vanish, flags), or an efficiency: a fraction of the peak in
  /// (0, 1] (< 0 in a Target: unset).
  enum Range { Positive, NonNegative, Fraction };
  const char *key;
  double Target::*real;
  int64_t Target::*integer;
  Range range;
};
static const TargetField kTargetFields[] = {
    {"peak_flops", &Target::peakFlops, nullptr, TargetField::Positive},
    {"memory_bandwidth", &Target::memoryBandwidth, nullptr,
     TargetField::Positive},
    {"cores", nullptr, &Target::cores, TargetField::Positive},
    {"element_bytes", nullptr, &Target::elementBytes, TargetField::Positive},
    {"exp_flops", &Target::expFlops, nullptr, TargetField::Positive},
    {"qk_efficiency", &Target::qkEfficiency, nullptr, TargetField::Fraction},
    {"qk_kernel_efficiency", &Target::qkKernelEfficiency, nullptr,
     TargetField::Fraction},
    {"qk_masked_efficiency", &Target::qkMaskedEfficiency, nullptr,
     TargetField::Fraction},
    {"qk_kernel_masked_efficiency", &Target::qkKernelMaskedEfficiency, nullptr,
     TargetField::Fraction},
    {"kv_efficiency", &Target::kvEfficiency, nullptr, TargetField::Fraction},
    {"chunked_efficiency", &Target::chunkedEfficiency, nullptr,
     TargetField::Fraction},
    {"feature_efficiency", &Target::featureEfficiency, nullptr,
     TargetField::Fraction},
    {"recurrent_efficiency", &Target::recurrentEfficiency, nullptr,
     TargetField::Fraction},
    {"chunk_half_efficiency", &Target::chunkHalfEfficiency, nullptr,
     TargetField::NonNegative},
    {"kv_width_half_efficiency", &Target::kvWidthHalfEfficiency, nullptr,
     TargetField::NonNegative},
    {"chunk_overhead", &Target::chunkOverhead, nullptr,
     TargetField::NonNegative},
    {"qk_row_cost", &Target::qkRowCost, nullptr, TargetField::NonNegative},
    {"query_tile", nullptr, &Target::queryTile, TargetField::Positive},
    {"key_tile", nullptr, &Target::keyTile, TargetField::Positive},
    {"qk_whole_tiles", nullptr, &Target::qkWholeTiles,
     TargetField::NonNegative},
    {"launch_overhead", &Target::launchOverhead, nullptr,
     TargetField::NonNegative},
    {"qk_head_overhead", &Target::qkHeadOverhead, nullptr,
     TargetField::NonNegative},
    {"qk_masked_head_overhead", &Target::qkMaskedHeadOverhead, nullptr,
     TargetField::NonNegative},
    {"kv_head_overhead", &Target::kvHeadOverhead, nullptr,
     TargetField::NonNegative},
    {"chunked_head_overhead", &Target::chunkedHeadOverhead, nullptr,
     TargetField::NonNegative},
    {"recurrent_head_overhead", &Target::recurrentHeadOverhead, nullptr,
     TargetField::NonNegative},
    {"qk_call_overhead", &Target::qkCallOverhead, nullptr,
     TargetField::NonNegative},
    {"qk_masked_call_overhead", &Target::qkMaskedCallOverhead, nullptr,
     TargetField::NonNegative},
    {"kv_call_overhead", &Target::kvCallOverhead, nullptr,
     TargetField::NonNegative},
    {"chunked_call_overhead", &Target::chunkedCallOverhead, nullptr,
     TargetField::NonNegative},
    {"recurrent_call_overhead", &Target::recurrentCallOverhead, nullptr,
     TargetField::NonNegative},
};

int Target::chunkScaleIndex(double chunk) {
  for (int i = 0; i < kChunkScales; ++i)
    if (chunk == (16 << i))
      return i;
  return -1;
}

double Target::chunkScaleFor(double chunk) const {
  int index = chunkScaleIndex(chunk);
  return index >= 0 && chunkScale[index] > 0 ? chunkScale[index] : 1;
}

/// "chunk_scale_64" → its index in Target::chunkScale, or -1.
static int chunkScaleKeyIndex(const std::string &key) {
  const std::string prefix = "chunk_scale_";
  if (key.rfind(prefix, 0) != 0)
    return -1;
  for (int i = 0; i < Target::kChunkScales; ++i)
    if (key.substr(prefix.size()) == std::to_string(16 << i))
      return i;
  return -1;
}

static bool setField(Target &target, const std::string &key,
                     const std::string &value, std::string &error) {
  if (key == "base") {
    std::string source = target.source;
    if (value == "cpu")
      target = cpuTarget();
    else if (value == "nvptx")
      target = nvptxTarget();
    else
      return error =
                 "unknown base target '" + value + "'; expected cpu or nvptx",
             false;
    target.source = source;
    return true;
  }
  if (key == "name" || key == "machine" || key == "calibrated") {
    (key == "name"      ? target.name
     : key == "machine" ? target.machine
                        : target.calibrated) = value;
    return true;
  }
  if (key == "version") {
    if (value != std::to_string(kTargetFormatVersion))
      return error = "target file version '" + value +
                     "' is not the version this attn reads (" +
                     std::to_string(kTargetFormatVersion) +
                     "): the file is stale; run `attnc calibrate` again",
             false;
    return true;
  }
  char *end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  const TargetField *field = nullptr;
  for (const TargetField &candidate : kTargetFields)
    if (key == candidate.key)
      field = &candidate;
  bool mayBeZero = field && field->range == TargetField::NonNegative;
  if (value.empty() || *end != '\0' || !std::isfinite(number) || number < 0 ||
      (number == 0 && !mayBeZero))
    return error = "'" + key + "' needs a positive number, got '" + value + "'",
           false;
  if (int index = chunkScaleKeyIndex(key); index >= 0) {
    target.chunkScale[index] = number;
    return true;
  }
  if (field) {
    if (field->real) {
      if (field->range == TargetField::Fraction && number > 1)
        return error = "'" + key +
                       "' is a fraction of the peak and must be at most 1, "
                       "got '" +
                       value + "'",
               false;
      target.*(field->real) = number;
    } else {
      if (key == "qk_whole_tiles" && number > 1)
        return error = "'qk_whole_tiles' is 0 or 1, got '" + value + "'", false;
      if (number != std::floor(number) || number > (1 << 30))
        return error = "'" + key + "' needs an integer up to 2^30, got '" +
                       value + "'",
               false;
      target.*(field->integer) = static_cast<int64_t>(number);
    }
    return true;
  }
  error = "unknown target key '" + key + "'";
  return false;
}

std::string cost::printTarget(const Target &target, const std::string &header) {
  std::ostringstream os;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);)
    os << "# " << line << "\n";
  os << "version = " << kTargetFormatVersion << "\n";
  os << "base = " << (target.name == "nvptx" ? "nvptx" : "cpu") << "\n";
  if (target.name != "cpu" && target.name != "nvptx")
    os << "name = " << target.name << "\n";
  if (!target.machine.empty())
    os << "machine = \"" << target.machine << "\"\n";
  if (!target.calibrated.empty())
    os << "calibrated = \"" << target.calibrated << "\"\n";
  char buffer[64];
  for (const TargetField &field : kTargetFields) {
    if (field.real) {
      double value = target.*field.real;
      if (value < 0)
        continue; // unset: the fallback applies
      std::snprintf(buffer, sizeof(buffer), "%.6g", value);
    } else {
      std::snprintf(buffer, sizeof(buffer), "%lld",
                    static_cast<long long>(target.*field.integer));
    }
    os << field.key << " = " << buffer << "\n";
  }
  for (int i = 0; i < Target::kChunkScales; ++i) {
    if (target.chunkScale[i] <= 0)
      continue;
    std::snprintf(buffer, sizeof(buffer), "%.6g", target.chunkScale[i]);
    os << "chunk_scale_" << (16 << i) << " = " << buffer << "\n";
  }
  return os.str();
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
      std::string where = isJson ? std::string("")
                                 : "line " + std::to_string(lineNumber) + ": ";
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
  target.source = path;
  return "";
}

//===----------------------------------------------------------------------===//
// Counting
//===----------------------------------------------------------------------===//

/// Σ over the integers p in [lo, hi] of max(0, slope·p + intercept), for a
/// slope of −1, 0 or 1.
static double sumPositivePart(double slope, double intercept, double lo,
                              double hi) {
  if (slope > 0)
    lo = std::max(lo, std::floor(-intercept) + 1); // p + b > 0
  else if (slope < 0)
    hi = std::min(hi, std::ceil(intercept) - 1); // b − p > 0
  else if (intercept <= 0)
    return 0;
  if (hi < lo)
    return 0;
  double count = hi - lo + 1;
  return slope * (lo + hi) * count / 2 + intercept * count;
}

/// The pairs of window(left, right) over N queries at positions
/// M − N .. M − 1 and M keys: Σ_p max(0, min(p + r, M − 1) − max(p − l, 0) +
/// 1), summed in the (at most three) ranges of p where both ends are linear.
static double windowPairs(double n, double m, double left, double right) {
  double first = m - n, last = m - 1;
  // The first p of each new linear piece: p − l turns non-negative at p = l,
  // p + r passes the last key at p = m − r.
  double breaks[] = {left, m - right};
  std::sort(std::begin(breaks), std::end(breaks));
  double pairs = 0;
  double lo = first;
  for (int piece = 0; piece < 3 && lo <= last; ++piece) {
    double hi = piece < 2 ? std::min(last, breaks[piece] - 1) : last;
    if (piece < 2 && breaks[piece] - 1 < lo)
      continue;
    // Decide the linear form at a point of [lo, hi].
    double p = lo;
    double slope = 0, intercept = 1;
    if (p + right <= m - 1)
      slope += 1, intercept += right;
    else
      intercept += m - 1;
    if (p - left >= 0)
      slope -= 1, intercept += left;
    pairs += sumPositivePart(slope, intercept, lo, hi);
    lo = hi + 1;
  }
  return pairs;
}

double cost::unmaskedPairs(MaskKind mask, int64_t block, int64_t queries,
                           int64_t keys, int64_t left, int64_t right) {
  double n = static_cast<double>(queries), m = static_cast<double>(keys);
  if (mask == MaskKind::None)
    return n * m;
  if (mask == MaskKind::Causal) {
    // Row i sees the M − N + i + 1 keys up to its position (bottom-right).
    if (queries <= keys)
      return n * (m - n) + n * (n + 1) / 2;
    return m * (m + 1) / 2;
  }
  if (mask == MaskKind::Window)
    return windowPairs(n, m, static_cast<double>(left),
                       static_cast<double>(right));
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
  case FeatureMap::Rfa: {
    double m = static_cast<double>(shape.numFeatures);
    // ω x (m·D multiply-adds), |x|², then a sine and a cosine per feature
    // (each costed as an exp).
    perRow = 2 * m * d + 2 * d + 2 * m * (target.expFlops + 1);
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

double cost::computeSeconds(const Work &work, const Target &target) {
  double qkSeconds =
      (work.qkFlops - work.qkCutFlops) /
          (target.peakFlops * target.qk(work.qkExp, false)) +
      work.qkCutFlops / (target.peakFlops * target.qk(work.qkExp, true));
  // Small chunks and narrow states make small, latency-bound state
  // products.
  double stateSlowdown = 1;
  if (work.chunk > 0)
    stateSlowdown += target.chunkHalfEfficiency / work.chunk;
  if (work.stateWidth > 0)
    stateSlowdown += target.kvWidthHalfEfficiency / work.stateWidth;
  double stateEfficiency = target.kvEfficiency / stateSlowdown;
  double peak = target.peakFlops;
  double chunkScale = work.chunk > 0 ? target.chunkScaleFor(work.chunk) : 1;
  return qkSeconds +
         chunkScale * (work.stateFlops / (peak * stateEfficiency) +
                       work.intraFlops / (peak * target.chunkedEfficiency)) +
         work.featureFlops / (peak * target.featureEfficiency) +
         work.projectionFlops / (peak * target.kvEfficiency) +
         work.recurrentFlops / (peak * target.recurrentEfficiency);
}

namespace {
/// The kinds of strategy, whose fixed costs differ.
enum class Kind { Qk, QkMasked, Kv, Chunked, Recurrent };
} // namespace

static Kind kindOf(const Work &work) {
  if (work.recurrentFlops > 0)
    return Kind::Recurrent;
  if (work.stateFlops <= 0)
    return work.qkMasked ? Kind::QkMasked : Kind::Qk;
  return work.chunk > 0 ? Kind::Chunked : Kind::Kv;
}

/// The fixed seconds per call and per (batch, head) of \p work's kind.
static double fixedSeconds(const Work &work, const Target &target) {
  switch (kindOf(work)) {
  case Kind::Qk:
    return target.qkCallOverhead + work.heads * target.qkHeadOverhead;
  case Kind::QkMasked:
    return target.qkMaskedCallOverhead +
           work.heads * target.qkMaskedHeadOverhead;
  case Kind::Kv:
    return target.kvCallOverhead + work.heads * target.kvHeadOverhead;
  case Kind::Chunked:
    return target.chunkedCallOverhead + work.heads * target.chunkedHeadOverhead;
  case Kind::Recurrent:
    return target.recurrentCallOverhead +
           work.heads * target.recurrentHeadOverhead;
  }
  return 0;
}

double cost::predictSeconds(const Work &work, const Target &target) {
  return std::max(computeSeconds(work, target),
                  work.bytes / target.memoryBandwidth) +
         work.launches * target.launchOverhead + fixedSeconds(work, target) +
         work.chunks * target.chunkOverhead +
         work.qkRowElements * target.qkRowCost;
}

/// Fills the strategy's totals and times from its work.
static void finish(Strategy &strategy, const Target &target) {
  const Work &work = strategy.work;
  strategy.flops = work.qkFlops + work.stateFlops + work.intraFlops +
                   work.featureFlops + work.projectionFlops +
                   work.recurrentFlops;
  strategy.bytes = work.bytes;
  strategy.computeSeconds = computeSeconds(work, target);
  strategy.memorySeconds = work.bytes / target.memoryBandwidth;
  strategy.seconds = predictSeconds(work, target);
}

namespace {
/// The pairs qk-first loops compute when they run whole tiles, and those of
/// them in tiles a mask or the key count cuts (which run the masked loop).
struct TilePairs {
  double whole = 0;
  double cut = 0;
};
} // namespace

/// Every query tile × key tile block with an unmasked pair, in full, a
/// partial tile padded: exact for no mask and for causal self-attention, the
/// mask's pairs over the padded sizes (all of them cut) otherwise.
static TilePairs wholeTilePairs(MaskKind mask, int64_t block, int64_t queries,
                                int64_t keys, int64_t queryTile,
                                int64_t keyTile, int64_t left, int64_t right) {
  auto roundUp = [](int64_t size, int64_t tile) {
    return std::ceil(static_cast<double>(size) / tile) * tile;
  };
  double paddedQueries = roundUp(queries, queryTile);
  double paddedKeys = roundUp(keys, keyTile);
  double tile = static_cast<double>(queryTile) * keyTile;
  // The key tiles wholly below M (a last, partial one is cut).
  int64_t realKeyTiles = keys / keyTile;
  TilePairs pairs;
  if (mask == MaskKind::None) {
    pairs.whole = paddedQueries * paddedKeys;
    pairs.cut = pairs.whole - paddedQueries * realKeyTiles * keyTile;
    return pairs;
  }
  if (mask == MaskKind::Causal && queries == keys) {
    // Query tile t sees the key tiles up to its last real row; those up to
    // its first row are wholly visible.
    int64_t queryTiles = (queries + queryTile - 1) / queryTile;
    int64_t keyTiles = (keys + keyTile - 1) / keyTile;
    if (queryTiles <= (int64_t(1) << 16)) {
      double visible = 0, full = 0;
      for (int64_t t = 0; t < queryTiles; ++t) {
        int64_t firstRow = t * queryTile;
        int64_t lastRow = std::min(firstRow + queryTile, queries);
        visible += std::min(keyTiles, (lastRow + keyTile - 1) / keyTile);
        full += std::min(realKeyTiles, (firstRow + 1) / keyTile);
      }
      pairs.whole = tile * visible;
      pairs.cut = tile * (visible - full);
      return pairs;
    }
    // Too many tiles to count: each query tile sees its rows' keys and half
    // a key tile more; the diagonal cuts qt / kt + 1 of them.
    pairs.whole =
        paddedQueries * (paddedKeys / 2 + (queryTile + keyTile) / 2.0);
    pairs.cut = (paddedQueries / queryTile) *
                (static_cast<double>(queryTile) / keyTile + 1) * tile;
    return pairs;
  }
  pairs.whole = pairs.cut =
      unmaskedPairs(mask, block, static_cast<int64_t>(paddedQueries),
                    static_cast<int64_t>(paddedKeys), left, right);
  return pairs;
}

bool cost::usesSplitKeys(const TermShape &shape) {
  if (shape.score != Score::Softmax || shape.projectedLength > 0)
    return false;
  if (shape.mask != MaskKind::None && shape.mask != MaskKind::Causal &&
      shape.mask != MaskKind::Window)
    return false;
  int64_t group = shape.keyHeads > 0 ? shape.heads / shape.keyHeads : 1;
  return group * shape.queries <= kMaxSplitKeyRows;
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
  double pairs =
      unmaskedPairs(mask, shape.maskBlock, shape.queries, shape.attendedKeys(),
                    shape.windowLeft, shape.windowRight);

  // Per pair: the score dot product and the weighted accumulation of v.
  double perPair = 2 * w + 2 * e;
  if (shape.score == Score::Softmax)
    perPair += target.expFlops + 2; // exp, running max and sum
  else if (shape.score == Score::Relu2)
    perPair += 3; // scale, relu, square
  else
    perPair += 1; // row sum for the normaliser
  if (shape.decay)
    perPair += target.expFlops + 2; // d_ij = exp(log-decay difference)
  double pairFlops = pairs * perPair * heads;
  // What the loops compute, for the time: whole tiles when the target says
  // its code runs them (a calibration measures that it does).
  // (Static lengths below a tile get smaller tiles, as
  // attn-convert-to-linalg builds them for the CPU: N query rows (from 8 on
  // rounded up to 8), M keys rounded up to 8. The GPU kernels run whole
  // static tiles.)
  const bool shrinks = target.name != "nvptx";
  int64_t queryTile = shrinks && shape.staticQueries
                          ? queryTileFor(target.queryTile, shape.queries)
                          : target.queryTile;
  queryTile = std::max<int64_t>(queryTile, 1);
  // (The split-key form keeps whole key tiles.)
  const bool splitKeys = usesSplitKeys(shape);
  int64_t keyTile = shrinks && shape.staticKeys && !splitKeys
                        ? keyTileFor(target.keyTile, shape.attendedKeys())
                        : target.keyTile;
  keyTile = std::max<int64_t>(keyTile, 1);
  TilePairs computed{pairs, mask != MaskKind::None ? pairs : 0.0};
  if (target.qkWholeTiles)
    computed = wholeTilePairs(mask, shape.maskBlock, shape.queries,
                              shape.attendedKeys(), queryTile, keyTile,
                              shape.windowLeft, shape.windowRight);
  double computedPairFlops = computed.whole * perPair * heads;
  // Online softmax rescales the accumulator once per key tile.
  double rescaleFlops = 0;
  if (shape.score == Score::Softmax)
    rescaleFlops = n * std::ceil(keys / keyTile) * 2 * e * heads;
  double divideFlops = n * e * heads;
  double features = featureMapFlops(shape, target);
  double projection = projectionFlops(shape);

  Work &work = strategy.work;
  work.heads = heads;
  work.qkFlops = computedPairFlops + rescaleFlops + divideFlops;
  // Counted by tiles, the tiles a mask cuts run at the masked rate, the
  // rest at the unmasked one; counted by pairs, all of a masked term does.
  work.qkCutFlops = target.qkWholeTiles ? computed.cut * perPair * heads
                    : computed.cut > 0  ? work.qkFlops
                                        : 0;
  work.qkExp = shape.score == Score::Softmax;
  work.qkMasked = mask != MaskKind::None;
  work.featureFlops = features;
  work.projectionFlops = projection;
  work.qkRowElements = n * e * heads;

  // Q is read once and O written once; K and V are streamed once per query
  // tile (flash tiling never materialises the N×M weights), but only the
  // key tiles a mask leaves visible: on average P/N keys per row, rounded
  // out to whole tiles.
  double queryTiles = std::ceil(n / queryTile);
  double keysPerTile = std::min(keys, pairs / n + keyTile);
  double perHead = n * shape.featureDim +
                   queryTiles * keysPerTile * (shape.featureDim + e) + n * e;
  // The split-key form of a few queries (SplitKeys.cpp) reads each visible
  // K and V tile once per group of query heads, in place.
  double group = shape.keyHeads > 0 ? double(shape.heads) / shape.keyHeads : 1;
  if (splitKeys)
    perHead = n * shape.featureDim +
              keysPerTile * (shape.featureDim + e) / group + n * e;
  work.bytes =
      perHead * heads * target.elementBytes + projectionBytes(shape, target);
  work.launches = shape.projectedLength > 0 ? 2 : 1;
  finish(strategy, target);
  // The FLOPs reported are the useful ones, padding or not.
  strategy.flops += pairFlops - computedPairFlops;
  strategy.peakBytes = static_cast<double>(queryTile) * keyTile *
                       target.elementBytes *
                       std::min<double>(heads, target.cores);

  std::ostringstream description;
  if (splitKeys) {
    description << "split-key qk-first (flash-decoding): the "
                << static_cast<int64_t>(group) * shape.queries
                << " query rows of each key/value head stacked, K/V tiles of "
                << target.keyTile
                << " keys read once per group and in place, the keys split "
                   "across threads in runs of "
                << kSplitKeyRun << " and merged by log-sum-exp";
    strategy.description = description.str();
    return strategy;
  }
  description << "qk-first";
  if (shape.projectedLength > 0)
    description << " over " << shape.projectedLength
                << " Linformer-projected keys";
  if (mask != MaskKind::None)
    description << ", only unmasked key tiles";
  if (shape.keyHeads > 0 && shape.keyHeads < shape.heads)
    description << ", K/V panels built once per group of "
                << shape.heads / shape.keyHeads << " query heads";
  description << ", online "
              << (shape.score == Score::Softmax ? "softmax" : "normaliser")
              << " in " << queryTile << "x" << keyTile << " tiles";
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
  Work &work = strategy.work;
  work.heads = heads;
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
    if (shape.decay) {
      // exp(λ_r − λ_c) per pair; per chunk the state decays once and each
      // key and query row is scaled (exp per row).
      double chunks = std::ceil(n / static_cast<double>(c));
      intraFlops += pairs * (target.expFlops + 2) * heads;
      stateFlops +=
          chunks * (w * e + w) * heads + 2 * n * (target.expFlops + w) * heads;
    }
    work.chunk = static_cast<double>(c);
    work.chunks = std::ceil(n / static_cast<double>(c)) * heads;
  } else if (shape.mask == MaskKind::Block ||
             shape.mask == MaskKind::PriorBlocks) {
    // One state per block (block) or a running state updated per block
    // (prior_blocks): the totals are those of plain kv-first.
    strategy.chunk = shape.maskBlock;
  }
  work.stateFlops = stateFlops + outputFlops;
  work.stateWidth = std::min(w, e);
  work.intraFlops = intraFlops;
  work.featureFlops = features;
  work.projectionFlops = projection;

  double perHead = n * shape.featureDim + keys * (shape.featureDim + e) + n * e;
  if (shape.state)
    perHead += 2 * w * (e + 1);
  work.bytes =
      perHead * heads * target.elementBytes + projectionBytes(shape, target);
  // A state pass, then a query pass.
  work.launches = shape.projectedLength > 0 ? 3 : 2;
  finish(strategy, target);
  double state = w * (e + 1);
  if (chunked)
    state += static_cast<double>(*strategy.chunk) * *strategy.chunk;
  strategy.peakBytes = state * heads * target.elementBytes;

  std::ostringstream description;
  if (chunked)
    description << "kv-first, causal chunks of " << *strategy.chunk
                << ": quadratic inside a chunk, a running "
                << shape.scoreWidth() << "x" << shape.valueDim
                << " state across chunks";
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

Strategy cost::estimateRecurrent(const TermShape &shape, const Target &target) {
  Strategy strategy;
  strategy.order = Order::Recurrent;
  double heads = static_cast<double>(shape.batch * shape.heads);
  double n = static_cast<double>(shape.queries);
  double w = static_cast<double>(shape.scoreWidth());
  double e = static_cast<double>(shape.valueDim);
  Work &work = strategy.work;
  work.heads = heads;
  // Per token: S = g S + φ(k) vᵀ (2we), z = g z + φ(k) (2w), φ(q)ᵀ S (2we),
  // φ(q)·z (2w) and the division (e).
  work.recurrentFlops = n * (4 * w * e + 4 * w + e) * heads;
  if (shape.decay)
    work.recurrentFlops += n * target.expFlops * heads;
  work.featureFlops = featureMapFlops(shape, target);
  // Q, K, V read and O written once; the state stays in cache between
  // tokens, and is written once per (batch, head) at most.
  double perHead = n * 2 * shape.featureDim + n * 2 * e + w * (e + 1);
  if (shape.state)
    perHead += w * (e + 1);
  work.bytes = perHead * heads * target.elementBytes;
  work.launches = 1;
  finish(strategy, target);
  strategy.peakBytes = w * (e + 1) * heads * target.elementBytes;
  std::ostringstream description;
  description << "recurrent: token by token, a " << shape.scoreWidth() << "x"
              << shape.valueDim
              << " state updated and queried per token (memory-bound: no "
                 "reuse across tokens)";
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
  if (order == Order::Recurrent || shape.projectedLength > 0)
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

// Examples of the alternation switchLength handles (Sapphire Rapids, calibrated):
// FAVOR+ causal, D = 64: kv-first wins from N = 129 except at 192, where
// qk-first's three tiles are whole; elu1, D = 64: it wins at most N from 52
// on but loses at 64, qk-first's one whole tile; cosFormer causal, D = 64:
// it wins at 65-112, loses at 120-128, wins from 129. Below P/2, fixed
// costs can make kv-first win at a few rows; those are not switched to.
std::optional<int64_t>
cost::switchLength(const std::function<double(int64_t)> &kvOverQk) {
  const int64_t limit = int64_t(1) << 30;
  auto kvWins = [&](int64_t n) { return kvOverQk(n) < 1.0; };
  int64_t lastLoss = 0;
  for (int64_t n = 1; n <= limit; n *= 2)
    if (!kvWins(n))
      lastLoss = n;
  if (lastLoss == limit)
    return std::nullopt;
  if (lastLoss == 0)
    return 1;
  const int64_t first = lastLoss / 2;
  const int64_t step = std::max<int64_t>(1, lastLoss / 128);
  std::vector<int64_t> ns;
  std::vector<double> logRatio;
  auto sample = [&](int64_t n) {
    double ratio = kvOverQk(n);
    double r = std::log(ratio);
    // An infinite or undefined time: a loss (or a win) larger than any.
    if (!std::isfinite(r))
      r = ratio < 1.0 ? -64.0 : 64.0;
    ns.push_back(n);
    logRatio.push_back(r);
  };
  for (int64_t n = first + step; n <= 2 * lastLoss; n += step)
    sample(n);
  if (ns.back() != 2 * lastLoss)
    sample(2 * lastLoss);
  // loss(j): qk-first at ns[i < j] where kv-first is faster, kv-first at
  // ns[i >= j] where it is slower. Start with the switch at ns[0].
  double loss = 0;
  for (double r : logRatio)
    loss += std::max(0.0, r);
  double bestLoss = loss;
  size_t best = 0;
  for (size_t j = 1; j < ns.size(); ++j) {
    loss += std::max(0.0, -logRatio[j - 1]) - std::max(0.0, logRatio[j - 1]);
    if (loss < bestLoss) {
      bestLoss = loss;
      best = j;
    }
  }
  // Between samples (a long octave) the crossing itself, bisected: kv-first
  // loses at low and wins at high.
  int64_t low = best == 0 ? first : ns[best - 1], high = ns[best];
  while (high - low > 1) {
    int64_t mid = low + (high - low) / 2;
    if (kvWins(mid))
      high = mid;
    else
      low = mid;
  }
  return high;
}

std::optional<int64_t> cost::crossoverLength(const TermShape &shape,
                                             const Target &target,
                                             bool keysFollowQueries) {
  if (!shape.hasProductForm())
    return std::nullopt;
  return switchLength([&](int64_t n) {
    TermShape resized = shape;
    resized.queries = n;
    if (keysFollowQueries)
      resized.keys = n;
    return bestKvFirst(resized, target).seconds /
           estimateQkFirst(resized, target).seconds;
  });
}

std::optional<int64_t> cost::recurrentCrossoverLength(const TermShape &shape,
                                                      const Target &target) {
  if (!shape.hasRecurrentForm())
    return std::nullopt;
  return switchLength([&](int64_t n) {
    TermShape resized = shape;
    resized.queries = resized.keys = n;
    return bestKvFirst(resized, target).seconds /
           estimateRecurrent(resized, target).seconds;
  });
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
    result.reason =
        std::string(shape.score == Score::Softmax ? "softmax" : "relu2") +
        " has no product form: only qk-first is legal";
    return result;
  }
  Strategy kv = bestKvFirst(shape, target);
  result.strategies.push_back(kv);
  bool selfAttention = shape.queries == shape.keys;
  result.crossoverN = crossoverLength(shape, target, selfAttention);
  if (shape.hasRecurrentForm()) {
    result.strategies.push_back(estimateRecurrent(shape, target));
    result.recurrentCrossoverN = recurrentCrossoverLength(shape, target);
  }
  // A state in or out lives in the kv-first and recurrent forms only.
  if (shape.state && result.strategies.size() > 2) {
    result.strategies.erase(result.strategies.begin());
    result.crossoverN = std::nullopt;
  }

  // The fastest, and the runner-up to compare it with (ties keep the
  // earlier: qk-first, then kv-first).
  size_t best = 0;
  for (size_t i = 1; i < result.strategies.size(); ++i)
    if (result.strategies[i].seconds < result.strategies[best].seconds)
      best = i;
  size_t second = best == 0 ? 1 : 0;
  for (size_t i = 0; i < result.strategies.size(); ++i)
    if (i != best &&
        result.strategies[i].seconds < result.strategies[second].seconds)
      second = i;
  const Strategy &winner = result.strategies[best];
  const Strategy &loser = result.strategies[second];
  result.chosen = winner;
  std::ostringstream reason;
  reason << toString(winner.order) << " is predicted "
         << formatSeconds(winner.seconds, 2) << " against "
         << formatSeconds(loser.seconds, 2) << " for " << toString(loser.order)
         << " (" << formatNumber(winner.flops) << " vs "
         << formatNumber(loser.flops) << " FLOPs";
  if (winner.memorySeconds > winner.computeSeconds)
    reason << ", memory-bound";
  reason << ")";
  if (shape.state)
    reason << "; the state rules out qk-first";
  else if (result.crossoverN) {
    bool above = shape.queries >= *result.crossoverN;
    reason << "; kv-first beats qk-first from N = " << *result.crossoverN
           << ", and N = " << shape.queries << " is "
           << (above ? "above" : "below") << " it";
    // Around the switch the orders can alternate (switchLength).
    if (winner.order != Order::Recurrent &&
        above == (winner.order == Order::QkFirst))
      reason << ", though at this N " << toString(winner.order)
             << " is the faster";
  } else {
    reason << "; kv-first never beats qk-first at these widths";
  }
  if (shape.hasRecurrentForm()) {
    if (result.recurrentCrossoverN)
      reason << "; kv-first beats recurrent from N = "
             << *result.recurrentCrossoverN;
    else
      reason << "; kv-first never beats recurrent at these widths";
  }
  result.reason = reason.str();
  return result;
}

//===----------------------------------------------------------------------===//
// Calibration
//===----------------------------------------------------------------------===//

namespace {
/// The unknowns, each a cost per unit of one column of a sample's work.
enum Unknown {
  QkSoftmax,
  QkSoftmaxMasked,
  QkKernel,
  QkKernelMasked,
  State,      ///< s/FLOP of the kv-first contractions (and projections)
  ChunkState, ///< chunk_half_efficiency × State, per FLOP / chunk
  StateWidth, ///< kv_width_half_efficiency × State, per FLOP / width
  ChunkCount, ///< chunk_overhead: seconds per chunk and (batch, head)
  QkRow,      ///< qk_row_cost: seconds per qk-first output element
  Intra,
  Feature,
  Recurrent, ///< s/FLOP of the recurrent order's per-token updates
  QkHead,    ///< fixed seconds per (batch, head), per kind of strategy
  QkMaskedHead,
  KvHead,
  ChunkedHead,
  RecurrentHead,
  QkCall, ///< fixed seconds per call, per kind of strategy
  QkMaskedCall,
  KvCall,
  ChunkedCall,
  RecurrentCall,
  NumUnknowns
};
} // namespace

static void columns(const Work &work, double (&row)[NumUnknowns]) {
  std::fill(std::begin(row), std::end(row), 0.0);
  if (work.qkExp) {
    row[QkSoftmax] = work.qkFlops - work.qkCutFlops;
    row[QkSoftmaxMasked] = work.qkCutFlops;
  } else {
    row[QkKernel] = work.qkFlops - work.qkCutFlops;
    row[QkKernelMasked] = work.qkCutFlops;
  }
  row[State] = work.stateFlops + work.projectionFlops;
  if (work.chunk > 0)
    row[ChunkState] = work.stateFlops / work.chunk;
  if (work.stateWidth > 0)
    row[StateWidth] = work.stateFlops / work.stateWidth;
  row[ChunkCount] = work.chunks;
  row[QkRow] = work.qkRowElements;
  row[Intra] = work.intraFlops;
  row[Feature] = work.featureFlops;
  row[Recurrent] = work.recurrentFlops;
  // Fixed costs are fitted per call of each kind of strategy (which covers
  // launch_overhead, per launch), not per launch.
  Kind kind = kindOf(work);
  int offset = kind == Kind::Qk         ? 0
               : kind == Kind::QkMasked ? 1
               : kind == Kind::Kv       ? 2
               : kind == Kind::Chunked  ? 3
                                        : 4;
  row[QkHead + offset] = work.heads;
  row[QkCall + offset] = 1;
}

void cost::fitTarget(const std::vector<Measurement> &samples, Target &target) {
  // Minimise Σ ((A x - t) / t)² over x ≥ 0 by cyclic coordinate descent:
  // each step is the exact minimum along one unknown, clipped at 0. The
  // problem is small (a few dozen samples, nine unknowns) and convex.
  std::vector<std::array<double, NumUnknowns>> rows;
  for (const Measurement &sample : samples) {
    double row[NumUnknowns];
    columns(sample.work, row);
    std::array<double, NumUnknowns> scaled;
    for (int j = 0; j < NumUnknowns; ++j)
      scaled[j] = row[j] / sample.seconds;
    rows.push_back(scaled);
  }
  double peak = target.peakFlops;
  double x[NumUnknowns] = {};
  x[QkSoftmax] = 1 / (peak * target.qk(true, false));
  x[QkSoftmaxMasked] = 1 / (peak * target.qk(true, true));
  x[QkKernel] = 1 / (peak * target.qk(false, false));
  x[QkKernelMasked] = 1 / (peak * target.qk(false, true));
  x[State] = 1 / (peak * target.kvEfficiency);
  x[ChunkState] = target.chunkHalfEfficiency * x[State];
  x[StateWidth] = target.kvWidthHalfEfficiency * x[State];
  x[ChunkCount] = target.chunkOverhead;
  x[QkRow] = target.qkRowCost;
  x[Intra] = 1 / (peak * target.chunkedEfficiency);
  x[Feature] = 1 / (peak * target.featureEfficiency);
  x[Recurrent] = 1 / (peak * target.recurrentEfficiency);
  x[QkHead] = target.qkHeadOverhead;
  x[QkMaskedHead] = target.qkMaskedHeadOverhead;
  x[KvHead] = target.kvHeadOverhead;
  x[ChunkedHead] = target.chunkedHeadOverhead;
  x[RecurrentHead] = target.recurrentHeadOverhead;
  x[QkCall] = target.qkCallOverhead;
  x[QkMaskedCall] = target.qkMaskedCallOverhead;
  x[KvCall] = target.kvCallOverhead;
  x[ChunkedCall] = target.chunkedCallOverhead;
  x[RecurrentCall] = target.recurrentCallOverhead;
  bool seen[NumUnknowns] = {};
  for (const auto &row : rows)
    for (int j = 0; j < NumUnknowns; ++j)
      seen[j] |= row[j] > 0;
  for (int sweep = 0; sweep < 20000; ++sweep) {
    for (int j = 0; j < NumUnknowns; ++j) {
      if (!seen[j])
        continue;
      double gradient = 0, curvature = 0;
      for (const auto &row : rows) {
        double residual = -1;
        for (int k = 0; k < NumUnknowns; ++k)
          residual += row[k] * x[k];
        gradient += residual * row[j];
        curvature += row[j] * row[j];
      }
      if (curvature > 0)
        x[j] = std::max(0.0, x[j] - gradient / curvature);
    }
  }
  // Back to the model's parameters: an efficiency is a fraction of the peak
  // (capped at 1: a family the fit finds free costs at most the peak).
  auto efficiency = [&](Unknown j) {
    return x[j] > 0 ? std::min(1.0, std::max(1e-4, 1 / (peak * x[j]))) : 1.0;
  };
  if (seen[QkSoftmax])
    target.qkEfficiency = efficiency(QkSoftmax);
  if (seen[QkSoftmaxMasked])
    target.qkMaskedEfficiency = efficiency(QkSoftmaxMasked);
  if (seen[QkKernel])
    target.qkKernelEfficiency = efficiency(QkKernel);
  if (seen[QkKernelMasked])
    target.qkKernelMaskedEfficiency = efficiency(QkKernelMasked);
  if (seen[State])
    target.kvEfficiency = efficiency(State);
  if (seen[ChunkState])
    target.chunkHalfEfficiency =
        x[State] > 0 ? std::min(1e6, x[ChunkState] / x[State]) : 0;
  if (seen[StateWidth])
    target.kvWidthHalfEfficiency =
        x[State] > 0 ? std::min(1e6, x[StateWidth] / x[State]) : 0;
  if (seen[ChunkCount])
    target.chunkOverhead = x[ChunkCount];
  if (seen[QkRow])
    target.qkRowCost = x[QkRow];
  if (seen[Intra])
    target.chunkedEfficiency = efficiency(Intra);
  if (seen[Feature])
    target.featureEfficiency = efficiency(Feature);
  if (seen[Recurrent])
    target.recurrentEfficiency = efficiency(Recurrent);
  // The per-call unknowns replace launch_overhead (per launch) once any
  // kind's is measured; a kind not measured keeps its fixed cost.
  if (seen[QkCall] || seen[QkMaskedCall] || seen[KvCall] || seen[ChunkedCall] ||
      seen[RecurrentCall]) {
    double launch = target.launchOverhead;
    auto perCall = [&](Unknown j, double &field, int launches) {
      field = seen[j] ? x[j] : field + launches * launch;
    };
    perCall(QkCall, target.qkCallOverhead, 1);
    perCall(QkMaskedCall, target.qkMaskedCallOverhead, 1);
    perCall(KvCall, target.kvCallOverhead, 2);
    perCall(ChunkedCall, target.chunkedCallOverhead, 2);
    perCall(RecurrentCall, target.recurrentCallOverhead, 1);
    target.launchOverhead = 0;
  }
  if (seen[QkHead])
    target.qkHeadOverhead = x[QkHead];
  if (seen[QkMaskedHead])
    target.qkMaskedHeadOverhead = x[QkMaskedHead];
  if (seen[KvHead])
    target.kvHeadOverhead = x[KvHead];
  if (seen[ChunkedHead])
    target.chunkedHeadOverhead = x[ChunkedHead];
  if (seen[RecurrentHead])
    target.recurrentHeadOverhead = x[RecurrentHead];

  // What the chunk formula misses per chunk size: the geometric mean of the
  // measured compute time (less the fixed costs) over the predicted one,
  // when more than one chunk was measured (a single chunk's scale would
  // only absorb the fit's error).
  Target unscaled = target;
  std::fill(std::begin(unscaled.chunkScale), std::end(unscaled.chunkScale),
            -1.0);
  double logSum[Target::kChunkScales] = {};
  int count[Target::kChunkScales] = {};
  for (const Measurement &sample : samples) {
    int i =
        sample.work.chunk > 0 ? Target::chunkScaleIndex(sample.work.chunk) : -1;
    if (i < 0)
      continue;
    double compute = computeSeconds(sample.work, unscaled);
    double fixed =
        predictSeconds(sample.work, unscaled) -
        std::max(compute, sample.work.bytes / unscaled.memoryBandwidth);
    double measured = sample.seconds - fixed;
    if (compute > 0 && measured > 0) {
      logSum[i] += std::log(measured / compute);
      ++count[i];
    }
  }
  int measuredChunks = 0;
  for (int i = 0; i < Target::kChunkScales; ++i)
    measuredChunks += count[i] > 0;
  if (measuredChunks > 1)
    for (int i = 0; i < Target::kChunkScales; ++i)
      if (count[i] > 0)
        target.chunkScale[i] = std::exp(logSum[i] / count[i]);
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
