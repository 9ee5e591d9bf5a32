//===- InputGenerator.cpp - Deterministic test inputs ---------------------===//
//
// See the header for the exact definition of every stream: changing the
// order in which numbers are drawn changes every recorded seed's meaning, so
// the order is part of the interface, and the unit tests pin it down.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/InputGenerator.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace attn;
using namespace attn::inputs;

/// 2π to double precision; <cmath> has no portable constant before C++20.
static constexpr double kTwoPi = 6.28318530717958647692;

/// The output function of splitmix64 (Steele, Lea and Flood, 2014), a good
/// 64-bit mixer: every input bit affects every output bit.
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t &state) {
  state += 0x9e3779b97f4a7c15ULL;
  return mix64(state);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Random::Random(uint64_t seed) {
  // splitmix64 never yields four zero words in a row, so the xoshiro state
  // is never the all-zero fixed point.
  uint64_t s = seed;
  for (uint64_t &word : state)
    word = splitmix64(s);
}

uint64_t Random::next() {
  uint64_t result = rotl(state[1] * 5, 7) * 9;
  uint64_t t = state[1] << 17;
  state[2] ^= state[0];
  state[3] ^= state[1];
  state[1] ^= state[2];
  state[0] ^= state[3];
  state[2] ^= t;
  state[3] = rotl(state[3], 45);
  return result;
}

double Random::uniform() {
  // 53 bits fill a double's mantissa exactly, so the result is an exact
  // multiple of 2^-53 and never rounds up to 1.
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Random::normal() {
  double u1 = 1.0 - uniform();
  double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

uint64_t inputs::seedFor(uint64_t seed, const std::string &name) {
  uint64_t hash = 0xcbf29ce484222325ULL; // FNV-1a 64-bit offset basis
  for (char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL; // FNV-1a 64-bit prime
  }
  // FNV-1a alone barely changes the high bits between similar short names,
  // and the seed is typically a small integer; mixing both on the way in and
  // the result on the way out decorrelates neighbouring seeds and names.
  return mix64(mix64(seed) ^ hash);
}

std::vector<float> inputs::gaussian(uint64_t seed, size_t count,
                                    double stddev) {
  Random random(seed);
  std::vector<float> values(count);
  for (float &value : values)
    value = static_cast<float>(random.normal() * stddev);
  return values;
}

std::vector<float> inputs::uniform(uint64_t seed, size_t count, double lo,
                                   double hi) {
  Random random(seed);
  std::vector<float> values(count);
  for (float &value : values)
    value = static_cast<float>(lo + (hi - lo) * random.uniform());
  return values;
}

std::vector<float> inputs::retentionDecay(int64_t heads) {
  std::vector<float> values(std::max<int64_t>(heads, 0));
  for (size_t h = 0; h < values.size(); ++h)
    values[h] = static_cast<float>(1.0 - std::ldexp(1.0, -5 - int(h)));
  return values;
}

std::vector<float> inputs::orthogonalGaussian(uint64_t seed, int64_t m,
                                              int64_t d) {
  if (m <= 0 || d <= 0 ||
      static_cast<uint64_t>(m) >
          std::numeric_limits<size_t>::max() / static_cast<uint64_t>(d) / 2)
    return {};
  const size_t rows = static_cast<size_t>(m);
  const size_t width = static_cast<size_t>(d);
  Random random(seed);
  std::vector<float> result(rows * width);
  std::vector<double> block(width * width);
  for (size_t blockStart = 0; blockStart < rows; blockStart += width) {
    for (double &value : block)
      value = random.normal();
    std::vector<double> norms(width);
    for (double &norm : norms) {
      double sumOfSquares = 0;
      for (size_t k = 0; k < width; ++k) {
        double value = random.normal();
        sumOfSquares += value * value;
      }
      norm = std::sqrt(sumOfSquares);
    }

    // Modified Gram-Schmidt, run twice per row ("twice is enough", Giraud
    // et al. 2005): one pass leaves errors proportional to the condition of
    // G, which a random G can make large enough to show in the tests' dot
    // products; the second pass brings them to rounding level. Only the rows
    // that are kept need orthonormalising, since row i depends on rows < i.
    const size_t kept = std::min(width, rows - blockStart);
    for (size_t i = 0; i < kept; ++i) {
      double *row = &block[i * width];
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t j = 0; j < i; ++j) {
          const double *other = &block[j * width];
          double dot = 0;
          for (size_t k = 0; k < width; ++k)
            dot += row[k] * other[k];
          for (size_t k = 0; k < width; ++k)
            row[k] -= dot * other[k];
        }
      }
      double length = 0;
      for (size_t k = 0; k < width; ++k)
        length += row[k] * row[k];
      length = std::sqrt(length);
      // A Gaussian matrix is singular with probability zero; should it
      // happen anyway, leave a zero row rather than divide by zero.
      double scale = length > 0 ? 1.0 / length : 0.0;
      for (size_t k = 0; k < width; ++k)
        row[k] *= scale;
      float *out = &result[(blockStart + i) * width];
      for (size_t k = 0; k < width; ++k)
        out[k] = static_cast<float>(row[k] * norms[i]);
    }
  }
  return result;
}
