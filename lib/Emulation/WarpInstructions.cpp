//===- WarpInstructions.cpp - PTX warp instructions, executed on the host -===//
//
// Every layout below is the PTX ISA's table for the instruction, stated per
// lane with g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group).
//
//===----------------------------------------------------------------------===//

#include "attn/Emulation/WarpInstructions.h"

#include "attn/Support/ElementType.h"

#include <cstring>

using namespace attn;
using namespace attn::ptx;

namespace {

float wordToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Element \p half (0: low 16 bits) of a bf16x2 / f16x2 register.
double halfOf(MmaInput type, uint32_t reg, int half) {
  auto bits = static_cast<uint16_t>(half ? reg >> 16 : reg & 0xffffu);
  return type == MmaInput::F16 ? halfBitsToFloat(bits)
                               : bfloat16BitsToFloat(bits);
}

/// D = A B + C over a 16x8 tile from dense A [16][K], B [K][8] (double),
/// scattered back into the C/D fragment layout: c_i of lane l is row
/// g + 8 (i / 2), column 2t + (i % 2).
template <int K>
void multiplyAccumulate(const double (&a)[16][K], const double (&b)[K][8],
                        const float c[kWarpSize][4], float d[kWarpSize][4]) {
  float result[kWarpSize][4];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int row = g + 8 * (i / 2), col = 2 * t + i % 2;
      // Products of f16 / bf16 / tf32 values are exact in double, and so
      // is their sum for the magnitudes attention produces; one rounding.
      double sum = c[lane][i];
      for (int k = 0; k < K; ++k)
        sum += a[row][k] * b[k][col];
      result[lane][i] = static_cast<float>(sum);
    }
  }
  std::memcpy(d, result, sizeof result);
}

} // namespace

void ptx::mmaM16N8K16(MmaInput type, const uint32_t a[kWarpSize][4],
                      const uint32_t b[kWarpSize][2],
                      const float c[kWarpSize][4], float d[kWarpSize][4]) {
  double denseA[16][16], denseB[16][8];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int g = lane / 4, t = lane % 4;
    // A: element a_i (register i / 2, half i % 2) is row g (+8 for
    // i % 4 >= 2), column 2t + (i & 1) (+8 for i >= 4).
    for (int i = 0; i < 8; ++i) {
      int row = g + ((i % 4) >= 2 ? 8 : 0);
      int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
      denseA[row][col] = halfOf(type, a[lane][i / 2], i % 2);
    }
    // B: element b_i (register i / 2, half i % 2) is row 2t + (i & 1)
    // (+8 for i >= 2), column g.
    for (int i = 0; i < 4; ++i) {
      int row = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
      denseB[row][g] = halfOf(type, b[lane][i / 2], i % 2);
    }
  }
  multiplyAccumulate<16>(denseA, denseB, c, d);
}

void ptx::mmaM16N8K8Tf32(const uint32_t a[kWarpSize][4],
                         const uint32_t b[kWarpSize][2],
                         const float c[kWarpSize][4], float d[kWarpSize][4]) {
  auto tf32 = [](uint32_t bits) {
    return static_cast<double>(wordToFloat(bits & 0xffffe000u));
  };
  double denseA[16][8], denseB[8][8];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int g = lane / 4, t = lane % 4;
    // A: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
    for (int i = 0; i < 4; ++i)
      denseA[g + (i % 2) * 8][t + (i / 2) * 4] = tf32(a[lane][i]);
    // B: b0 (t, g), b1 (t + 4, g).
    for (int i = 0; i < 2; ++i)
      denseB[t + i * 4][g] = tf32(b[lane][i]);
  }
  multiplyAccumulate<8>(denseA, denseB, c, d);
}

uint32_t ptx::cvtRnaTf32(uint32_t bits) {
  constexpr uint32_t exponent = 0x7f800000u, dropped = 0x1fffu;
  if ((bits & exponent) == exponent)
    return (bits & 0x007fffffu) ? 0x7fffffffu : bits;
  // Half of the dropped part's range added to the magnitude rounds ties
  // away from zero; a carry into the exponent is the rounding up, to
  // infinity past the largest finite value.
  return (bits + (dropped + 1) / 2) & ~dropped;
}

void ptx::ldmatrix(int count, bool transpose, const uint8_t *shared,
                   const uint32_t rowAddress[kWarpSize],
                   uint32_t d[kWarpSize][4]) {
  for (int m = 0; m < count; ++m) {
    // Matrix m: its rows start where lanes 8m .. 8m + 7 point.
    uint16_t matrix[8][8];
    for (int row = 0; row < 8; ++row)
      std::memcpy(matrix[row], shared + rowAddress[8 * m + row], 16);
    for (int lane = 0; lane < kWarpSize; ++lane) {
      int r = lane / 4, c = 2 * (lane % 4);
      uint16_t low = transpose ? matrix[c][r] : matrix[r][c];
      uint16_t high = transpose ? matrix[c + 1][r] : matrix[r][c + 1];
      d[lane][m] =
          static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16);
    }
  }
}

void ptx::shuffle(ShuffleMode mode, const uint32_t value[kWarpSize],
                  const uint32_t b[kWarpSize], uint32_t clampAndMask,
                  uint32_t memberMask, uint32_t d[kWarpSize],
                  bool valid[kWarpSize]) {
  uint32_t result[kWarpSize];
  bool predicate[kWarpSize];
  int clamp = static_cast<int>(clampAndMask & 0x1f);
  int segmentMask = static_cast<int>((clampAndMask >> 8) & 0x1f);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int bval = static_cast<int>(b[lane] & 0x1f);
    int minLane = lane & segmentMask;
    int maxLane = minLane | (clamp & ~segmentMask);
    int j = lane;
    bool inRange = false;
    switch (mode) {
    case ShuffleMode::Up:
      j = lane - bval;
      inRange = j >= maxLane;
      break;
    case ShuffleMode::Down:
      j = lane + bval;
      inRange = j <= maxLane;
      break;
    case ShuffleMode::Butterfly:
      j = lane ^ bval;
      inRange = j <= maxLane;
      break;
    case ShuffleMode::Index:
      j = minLane | (bval & ~segmentMask);
      inRange = j <= maxLane;
      break;
    }
    if (!inRange)
      j = lane;
    result[lane] = value[j];
    predicate[lane] = inRange;
  }
  for (int lane = 0; lane < kWarpSize; ++lane) {
    if (!(memberMask >> lane & 1u))
      continue;
    d[lane] = result[lane];
    if (valid)
      valid[lane] = predicate[lane];
  }
}

void ptx::cpAsync(uint8_t *sharedDst, const uint8_t *globalSrc, unsigned cpSize,
                  unsigned srcSize) {
  unsigned copied = srcSize < cpSize ? srcSize : cpSize;
  std::memcpy(sharedDst, globalSrc, copied);
  std::memset(sharedDst + copied, 0, cpSize - copied);
}
