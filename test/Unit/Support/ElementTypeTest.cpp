//===- ElementTypeTest.cpp - f16 / bf16 conversions -----------------------===//
//
// Expected bits come from the IEEE 754 binary16 and bfloat16 encodings
// written out by hand, and from exhaustive round trips and midpoints, not
// from the conversions under test.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/ElementType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace attn;

namespace {

float floatOfBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

TEST(ElementType, Names) {
  EXPECT_EQ(parseElementType("bf16"), ElementType::BF16);
  EXPECT_EQ(parseElementType("f16"), ElementType::F16);
  EXPECT_EQ(parseElementType("f32"), ElementType::F32);
  EXPECT_FALSE(parseElementType("f64"));
  EXPECT_FALSE(parseElementType("BF16"));
  EXPECT_STREQ(toString(ElementType::BF16), "bf16");
  EXPECT_EQ(byteSize(ElementType::F16), 2u);
  EXPECT_EQ(byteSize(ElementType::F32), 4u);
  EXPECT_STREQ(cTypeName(ElementType::BF16), "uint16_t");
}

TEST(ElementType, HalfKnownEncodings) {
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(0.5f), 0x3800);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff); // largest finite
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00); // halfway to 2^16: inf
  EXPECT_EQ(floatToHalfBits(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalfBits(-1e10f), 0xfc00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400); // min normal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // tie to even
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -26)), 0x0001); // above the tie
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  uint16_t nan = floatToHalfBits(std::nanf(""));
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x3ff, 0);
  EXPECT_FLOAT_EQ(halfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0xfbff), -65504.0f);
  EXPECT_TRUE(std::isinf(halfBitsToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(0x7e00)));
}

TEST(ElementType, HalfRoundTripsAndTiesToEven) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float value = halfBitsToFloat(h);
    if (std::isnan(value))
      continue;
    ASSERT_EQ(floatToHalfBits(value), h) << bits;
    // The midpoint to the next half up (same sign) rounds to the even one.
    if ((h & 0x7fff) >= 0x7bff)
      continue;
    float next = halfBitsToFloat(static_cast<uint16_t>(h + 1));
    float mid = value + (next - value) / 2; // exact: one more bit
    uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : h;
    ASSERT_EQ(floatToHalfBits(mid), even) << bits;
    float above = std::nextafter(mid, next);
    ASSERT_EQ(floatToHalfBits(above), static_cast<uint16_t>(h + 1)) << bits;
  }
}

TEST(ElementType, Bfloat16) {
  EXPECT_EQ(floatToBfloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16Bits(-2.5f), 0xc020);
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x3f808000)), 0x3f80); // tie, even
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x3f818000)), 0x3f82); // tie, up
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x7f7fffff)), 0x7f80); // to inf
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBfloat16Bits(floatOfBits(0x00000001)), 0x0000);
  uint16_t nan = floatToBfloat16Bits(floatOfBits(0x7f800001));
  EXPECT_TRUE(std::isnan(bfloat16BitsToFloat(nan)));
  EXPECT_EQ(bfloat16BitsToFloat(0x4049), 3.140625f);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = bfloat16BitsToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(value))
      ASSERT_EQ(floatToBfloat16Bits(value), bits);
  }
}

TEST(ElementType, PackAndUnpack) {
  const float values[] = {1.0f, 0.1f, -3.0f, 70000.0f};
  uint16_t packed[4];
  float back[4];
  packElements(ElementType::F16, values, 4, packed);
  EXPECT_EQ(packed[0], 0x3c00);
  EXPECT_EQ(packed[3], 0x7c00);
  unpackElements(ElementType::F16, packed, 4, back);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(back[i], roundTo(ElementType::F16, values[i]));
  packElements(ElementType::BF16, values, 4, packed);
  unpackElements(ElementType::BF16, packed, 4, back);
  EXPECT_EQ(back[1], floatOfBits(0x3dcd0000)); // 0.1 = 0x3dcccccd rounds up
  EXPECT_EQ(back[3], 70144.0f);
  float copy[4];
  packElements(ElementType::F32, values, 4, copy);
  EXPECT_EQ(std::memcmp(copy, values, sizeof copy), 0);
  EXPECT_EQ(roundTo(ElementType::F32, 0.1f), 0.1f);
}

} // namespace
