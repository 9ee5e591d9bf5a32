//===- ElementType.cpp - The element types of a spec's arrays -------------===//

#include "attn/Support/ElementType.h"

#include <cmath>
#include <cstring>

using namespace attn;

const char *attn::toString(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  }
  return "f32";
}

std::optional<ElementType> attn::parseElementType(const std::string &name) {
  for (ElementType type :
       {ElementType::F32, ElementType::F16, ElementType::BF16})
    if (name == toString(type))
      return type;
  return std::nullopt;
}

size_t attn::byteSize(ElementType type) {
  return type == ElementType::F32 ? 4 : 2;
}

const char *attn::cTypeName(ElementType type) {
  return type == ElementType::F32 ? "float" : "uint16_t";
}

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint16_t attn::floatToHalfBits(float value) {
  uint32_t bits = bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) // inf, or NaN kept quiet with its payload
    return static_cast<uint16_t>(
        sign | 0x7c00u |
        (magnitude > 0x7f800000u ? 0x200u | ((magnitude >> 13) & 0x3ffu) : 0u));
  if (magnitude < 0x38800000u) {
    // Below 2^-14, f16 is subnormal with a unit of 2^-24: scaling by 2^24 is
    // exact in f32, and nearbyint rounds to nearest even. 1024 units is the
    // smallest normal, whose encoding is 0x400 as well.
    float units = std::fabs(value) * 16777216.0f;
    return static_cast<uint16_t>(sign |
                                 static_cast<uint32_t>(std::nearbyint(units)));
  }
  int32_t exponent = static_cast<int32_t>(magnitude >> 23) - 127 + 15;
  uint32_t mantissa = magnitude & 0x7fffffu;
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  // A carry out of the mantissa steps the exponent, as it should.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  if (half >= 0x7c00u)
    half = 0x7c00u;
  return static_cast<uint16_t>(sign | half);
}

float attn::halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7f800000u | (mantissa << 13));
  return floatOf(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t attn::floatToBfloat16Bits(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  // Round to nearest even on the 16 bits dropped; a carry into the exponent
  // is right, up to the largest finite value rounding to inf.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float attn::bfloat16BitsToFloat(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

float attn::roundTo(ElementType type, float value) {
  switch (type) {
  case ElementType::F32:
    return value;
  case ElementType::F16:
    return halfBitsToFloat(floatToHalfBits(value));
  case ElementType::BF16:
    return bfloat16BitsToFloat(floatToBfloat16Bits(value));
  }
  return value;
}

void attn::packElements(ElementType type, const float *from, size_t count,
                        void *to) {
  if (type == ElementType::F32) {
    if (count)
      std::memcpy(to, from, count * sizeof(float));
    return;
  }
  auto *out = static_cast<uint16_t *>(to);
  for (size_t i = 0; i < count; ++i)
    out[i] = type == ElementType::F16 ? floatToHalfBits(from[i])
                                      : floatToBfloat16Bits(from[i]);
}

void attn::unpackElements(ElementType type, const void *from, size_t count,
                          float *to) {
  if (type == ElementType::F32) {
    if (count)
      std::memcpy(to, from, count * sizeof(float));
    return;
  }
  const auto *in = static_cast<const uint16_t *>(from);
  for (size_t i = 0; i < count; ++i)
    to[i] = type == ElementType::F16 ? halfBitsToFloat(in[i])
                                     : bfloat16BitsToFloat(in[i]);
}
