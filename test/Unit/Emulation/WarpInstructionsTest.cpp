//===- WarpInstructionsTest.cpp - PTX warp instructions on the host -------===//
//
// The expected fragments are spelled out the way the PTX ISA's figures draw
// them (which lane and register hold which matrix element), as tables and
// spot checks written independently of WarpInstructions.cpp; whole products
// are checked against a plain matrix product of small whole numbers, which
// every operand type represents exactly.
//
//===----------------------------------------------------------------------===//

#include "attn/Emulation/WarpInstructions.h"

#include "attn/Support/ElementType.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace attn;
using namespace attn::ptx;

namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

uint16_t narrow(MmaInput type, float value) {
  return type == MmaInput::F16 ? floatToHalfBits(value)
                               : floatToBfloat16Bits(value);
}

uint32_t pack(MmaInput type, float low, float high) {
  return narrow(type, low) | static_cast<uint32_t>(narrow(type, high)) << 16;
}

/// The ISA's figure for the m16n8k16 A fragment, row by row of the figure:
/// which (row, column) register `reg` of lane `lane` holds in its low (0)
/// and high (1) half. Rows 0-7 / 8-15 and columns 0-7 / 8-15 are the four
/// 8x8 quadrants, registers 0..3 going down then right.
void fragmentA(int lane, int reg, int half, int &row, int &col) {
  static const int quadrantRow[4] = {0, 8, 0, 8};
  static const int quadrantCol[4] = {0, 0, 8, 8};
  row = quadrantRow[reg] + lane / 4;
  col = quadrantCol[reg] + (lane % 4) * 2 + half;
}

/// m16n8k16 B (16x8, K x N): registers 0 and 1 are the upper and lower
/// 8x8 halves; within one, lane l holds column l / 4, rows 2 (l % 4) and
/// 2 (l % 4) + 1.
void fragmentB(int lane, int reg, int half, int &row, int &col) {
  row = reg * 8 + (lane % 4) * 2 + half;
  col = lane / 4;
}

/// C / D (16x8 f32): registers 0, 1 in the upper half, 2, 3 in the lower.
void fragmentC(int lane, int reg, int &row, int &col) {
  row = (reg >= 2 ? 8 : 0) + lane / 4;
  col = (lane % 4) * 2 + reg % 2;
}

void checkM16N8K16(MmaInput type) {
  // Whole numbers in [-4, 4]: exact in f16 and bf16, products and sums
  // exact in f32.
  float A[16][16], B[16][8], C[16][8];
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k)
      A[i][k] = static_cast<float>((i * 7 + k * 3) % 9 - 4);
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 8; ++j)
      B[k][j] = static_cast<float>((k * 5 + j * 11) % 9 - 4);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j)
      C[i][j] = static_cast<float>(i - j);

  uint32_t a[kWarpSize][4], b[kWarpSize][2];
  float c[kWarpSize][4], d[kWarpSize][4];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      int r0, c0, r1, c1;
      fragmentA(lane, reg, 0, r0, c0);
      fragmentA(lane, reg, 1, r1, c1);
      a[lane][reg] = pack(type, A[r0][c0], A[r1][c1]);
      int row, col;
      fragmentC(lane, reg, row, col);
      c[lane][reg] = C[row][col];
    }
    for (int reg = 0; reg < 2; ++reg) {
      int r0, c0, r1, c1;
      fragmentB(lane, reg, 0, r0, c0);
      fragmentB(lane, reg, 1, r1, c1);
      b[lane][reg] = pack(type, B[r0][c0], B[r1][c1]);
    }
  }
  mmaM16N8K16(type, a, b, c, d);
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int reg = 0; reg < 4; ++reg) {
      int row, col;
      fragmentC(lane, reg, row, col);
      float expected = C[row][col];
      for (int k = 0; k < 16; ++k)
        expected += A[row][k] * B[k][col];
      ASSERT_EQ(d[lane][reg], expected) << "lane " << lane << " reg " << reg;
    }
}

TEST(Mma, M16N8K16Bf16MatchesAPlainProduct) { checkM16N8K16(MmaInput::BF16); }
TEST(Mma, M16N8K16F16MatchesAPlainProduct) { checkM16N8K16(MmaInput::F16); }

TEST(Mma, M16N8K16SpotChecksFromTheFigure) {
  // A = e_{9,10} (one 1 at row 9, column 10), B = e_{10,3}: D = e_{9,3}.
  // The ISA's figure puts A(9, 10) in lane 4*1 + 1 = 5, register a3 (rows
  // 8-15, columns 8-15), low half; B(10, 3) in lane 4*3 + 1 = 13, register
  // b1 (rows 8-15), low half; D(9, 3) in lane 4*1 + 1 = 5, register d3
  // (row 8 + 1, column 2*1 + 1).
  uint32_t a[kWarpSize][4] = {}, b[kWarpSize][2] = {};
  float c[kWarpSize][4] = {}, d[kWarpSize][4];
  a[5][3] = pack(MmaInput::BF16, 1.0f, 0.0f);
  b[13][1] = pack(MmaInput::BF16, 1.0f, 0.0f);
  mmaM16N8K16(MmaInput::BF16, a, b, c, d);
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int reg = 0; reg < 4; ++reg)
      EXPECT_EQ(d[lane][reg], lane == 5 && reg == 3 ? 1.0f : 0.0f)
          << "lane " << lane << " reg " << reg;
  // d may alias c: D = A B + D.
  mmaM16N8K16(MmaInput::BF16, a, b, d, d);
  EXPECT_EQ(d[5][3], 2.0f);
}

TEST(Mma, M16N8K8Tf32) {
  // tf32 (ISA figure for m16n8k8 .tf32): A(g, t) a0, A(g+8, t) a1,
  // A(g, t+4) a2, A(g+8, t+4) a3; B(t, g) b0, B(t+4, g) b1.
  float A[16][8], B[8][8];
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 8; ++k)
      A[i][k] = static_cast<float>((3 * i + k) % 7 - 3);
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 8; ++j)
      B[k][j] = static_cast<float>((k + 5 * j) % 5 - 2) * 0.5f;
  uint32_t a[kWarpSize][4], b[kWarpSize][2];
  float c[kWarpSize][4] = {}, d[kWarpSize][4];
  static const int rowOffset[4] = {0, 8, 0, 8}, colOffset[4] = {0, 0, 4, 4};
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int reg = 0; reg < 4; ++reg)
      a[lane][reg] = floatBits(A[g + rowOffset[reg]][t + colOffset[reg]]);
    b[lane][0] = floatBits(B[t][g]);
    b[lane][1] = floatBits(B[t + 4][g]);
  }
  // The low 13 mantissa bits are not read: 1 + 2^-20 acts as 1.
  a[0][0] = floatBits(A[0][0] + (A[0][0] == 0 ? 0 : A[0][0] * 0x1p-20f));
  mmaM16N8K8Tf32(a, b, c, d);
  for (int lane = 0; lane < kWarpSize; ++lane)
    for (int reg = 0; reg < 4; ++reg) {
      int row, col;
      fragmentC(lane, reg, row, col);
      float expected = 0;
      for (int k = 0; k < 8; ++k)
        expected += A[row][k] * B[k][col];
      ASSERT_EQ(d[lane][reg], expected) << "lane " << lane << " reg " << reg;
    }
}

TEST(Cvt, RnaTf32RoundsToTenMantissaBitsTiesAway) {
  // 1 + k 2^-10 are tf32 values; 2^-11 is half a step.
  EXPECT_EQ(cvtRnaTf32(floatBits(1.0f)), floatBits(1.0f));
  EXPECT_EQ(cvtRnaTf32(floatBits(1.0f + 0x1p-12f)), floatBits(1.0f));
  EXPECT_EQ(cvtRnaTf32(floatBits(1.0f + 0x1p-11f)),
            floatBits(1.0f + 0x1p-10f)); // a tie: away from zero
  EXPECT_EQ(cvtRnaTf32(floatBits(-1.0f - 0x1p-11f)),
            floatBits(-1.0f - 0x1p-10f));
  EXPECT_EQ(cvtRnaTf32(floatBits(1.0f + 0x1p-10f + 0x1p-12f)),
            floatBits(1.0f + 0x1p-10f));
  EXPECT_EQ(cvtRnaTf32(floatBits(1.0f + 0x1p-10f + 0x1p-11f + 0x1p-20f)),
            floatBits(1.0f + 0x1p-9f));
  // Past the largest tf32 value by half a step: infinity; infinities stay,
  // NaN becomes the canonical NaN.
  EXPECT_EQ(cvtRnaTf32(0x7f7ff000u), 0x7f800000u);
  EXPECT_EQ(cvtRnaTf32(0x7f7fefffu), 0x7f7fe000u);
  EXPECT_EQ(cvtRnaTf32(0xff800000u), 0xff800000u);
  EXPECT_EQ(cvtRnaTf32(0x7f800001u), 0x7fffffffu);
  // Subnormals round the same way.
  EXPECT_EQ(cvtRnaTf32(0x00001000u), 0x00002000u);
  EXPECT_EQ(cvtRnaTf32(0x00000fffu), 0x00000000u);
}

TEST(Ldmatrix, RowsAndTransposes) {
  // Four 8x8 matrices of 16-bit elements, element (m, r, c) = 100 m + 10 r
  // + c, each row 16 bytes, the matrices' rows interleaved in memory (any
  // row addresses are allowed).
  std::vector<uint8_t> shared(4 * 8 * 16);
  uint32_t rows[kWarpSize];
  for (int m = 0; m < 4; ++m)
    for (int r = 0; r < 8; ++r) {
      uint32_t offset = (r * 4 + m) * 16;
      rows[8 * m + r] = offset;
      for (int c = 0; c < 8; ++c) {
        auto value = static_cast<uint16_t>(100 * m + 10 * r + c);
        std::memcpy(&shared[offset + 2 * c], &value, 2);
      }
    }
  auto element = [](uint32_t reg, int half) {
    return static_cast<int>(half ? reg >> 16 : reg & 0xffff);
  };
  uint32_t d[kWarpSize][4];
  std::memset(d, 0xab, sizeof d);
  ldmatrix(4, /*transpose=*/false, shared.data(), rows, d);
  // Lane 9 holds row 9 / 4 = 2, columns 2 (9 % 4) = 2 and 3 of each matrix.
  for (int m = 0; m < 4; ++m) {
    EXPECT_EQ(element(d[9][m], 0), 100 * m + 22);
    EXPECT_EQ(element(d[9][m], 1), 100 * m + 23);
  }
  EXPECT_EQ(element(d[31][3], 1), 377); // row 7, column 7
  ldmatrix(2, /*transpose=*/true, shared.data(), rows, d);
  // .trans: lane 9 holds (2, 2) and (3, 2) of matrices 0 and 1.
  EXPECT_EQ(element(d[9][1], 0), 122);
  EXPECT_EQ(element(d[9][1], 1), 132);
  EXPECT_EQ(element(d[6][0], 0), 41); // (4, 1)
  EXPECT_EQ(element(d[6][0], 1), 51); // (5, 1)
  // x2 leaves registers 2 and 3 as they were (the x4 load's).
  EXPECT_EQ(element(d[9][2], 0), 222);
}

TEST(Shuffle, ButterflyReducesQuads) {
  // The row sum of an mma fragment: xor 1 then xor 2 within groups of 4.
  uint32_t value[kWarpSize], d[kWarpSize], one[kWarpSize], two[kWarpSize];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    value[lane] = static_cast<uint32_t>(lane);
    one[lane] = 1;
    two[lane] = 2;
  }
  uint32_t sum[kWarpSize];
  shuffle(ShuffleMode::Butterfly, value, one, 0x1f, 0xffffffffu, d);
  for (int lane = 0; lane < kWarpSize; ++lane)
    sum[lane] = value[lane] + d[lane];
  shuffle(ShuffleMode::Butterfly, sum, two, 0x1f, 0xffffffffu, d);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    int first = lane & ~3;
    EXPECT_EQ(sum[lane] + d[lane], static_cast<uint32_t>(4 * first + 6))
        << lane;
  }
}

TEST(Shuffle, UpDownIndexAndClamp) {
  uint32_t value[kWarpSize], d[kWarpSize], b[kWarpSize];
  bool valid[kWarpSize];
  for (int lane = 0; lane < kWarpSize; ++lane)
    value[lane] = 1000u + static_cast<uint32_t>(lane);
  // up 3, c = 0: lanes 0-2 keep their own value (p false).
  for (uint32_t &x : b)
    x = 3;
  shuffle(ShuffleMode::Up, value, b, 0, 0xffffffffu, d, valid);
  EXPECT_EQ(d[2], 1002u);
  EXPECT_FALSE(valid[2]);
  EXPECT_EQ(d[3], 1000u);
  EXPECT_TRUE(valid[3]);
  // down 3, c = 31: lanes 29-31 keep theirs.
  shuffle(ShuffleMode::Down, value, b, 31, 0xffffffffu, d, valid);
  EXPECT_EQ(d[28], 1031u);
  EXPECT_EQ(d[29], 1029u);
  EXPECT_FALSE(valid[29]);
  // idx with 8-lane segments (segmask 0x18, clamp 7): lane l reads lane
  // (l & 0x18) | b of its segment.
  shuffle(ShuffleMode::Index, value, b, 0x1807, 0xffffffffu, d, valid);
  EXPECT_EQ(d[0], 1003u);
  EXPECT_EQ(d[13], 1011u);
  for (uint32_t &x : b)
    x = 5;
  shuffle(ShuffleMode::Index, value, b, 0x1807, 0xffffffffu, d, valid);
  EXPECT_EQ(d[13], 1013u);
  EXPECT_EQ(d[31], 1029u);
  // Lanes outside the member mask keep d.
  uint32_t kept[kWarpSize];
  std::memset(kept, 0, sizeof kept);
  shuffle(ShuffleMode::Index, value, b, 31, 0x1u, kept);
  EXPECT_EQ(kept[0], 1005u);
  EXPECT_EQ(kept[1], 0u);
}

TEST(CpAsync, ZeroFillsPastTheSource) {
  uint8_t source[16], target[16];
  for (int i = 0; i < 16; ++i) {
    source[i] = static_cast<uint8_t>(i + 1);
    target[i] = 0xff;
  }
  cpAsync(target, source, 16, 6);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(target[i], i < 6 ? i + 1 : 0) << i;
  cpAsync(target, source, 8, 8);
  EXPECT_EQ(target[7], 8);
  EXPECT_EQ(target[8], 0);
}

} // namespace
