//===- ElementType.h - The element types of a spec's arrays -----*- C++ -*-===//
//
// f32, f16 and bf16: the element types an input of a spec may have (DESIGN
// §1.1: bf16/f16 inputs, f32 accumulation), with their exact conversions to
// and from f32. Host code keeps every array as f32 holding values that the
// array's type represents exactly; the narrow bits exist only at the calls
// of compiled code. Plain C++ (no LLVM/MLIR), like the rest of Support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_ELEMENTTYPE_H
#define ATTN_SUPPORT_ELEMENTTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace attn {

enum class ElementType { F32, F16, BF16 };

/// "f32", "f16" or "bf16": the spelling of the spec language and of MLIR.
const char *toString(ElementType type);
/// The type spelled \p name ("f32", "f16", "bf16"), or nullopt.
std::optional<ElementType> parseElementType(const std::string &name);
/// Bytes per element: 4 or 2.
size_t byteSize(ElementType type);
/// The C type of an element in a generated header: "float" for f32 and
/// "uint16_t" (the bits) for f16 and bf16, which C has no portable type for.
const char *cTypeName(ElementType type);

/// IEEE binary16 bits of \p value, rounded to nearest, ties to even;
/// overflow gives ±inf, NaN stays a (quiet) NaN.
uint16_t floatToHalfBits(float value);
/// The value of binary16 bits (exact: every f16 is an f32).
float halfBitsToFloat(uint16_t bits);
/// bfloat16 bits of \p value (the upper half of the f32 bits), rounded to
/// nearest, ties to even; overflow gives ±inf, NaN stays a (quiet) NaN.
uint16_t floatToBfloat16Bits(float value);
/// The value of bfloat16 bits (exact).
float bfloat16BitsToFloat(uint16_t bits);

/// \p value rounded to the nearest value of \p type (identity for f32).
float roundTo(ElementType type, float value);
/// \p count values of \p from packed as \p type into \p to (byteSize(type)
/// bytes each; f32 is copied, f16 and bf16 are rounded).
void packElements(ElementType type, const float *from, size_t count, void *to);
/// The inverse: \p count elements of \p type at \p from widened to f32.
void unpackElements(ElementType type, const void *from, size_t count,
                    float *to);

} // namespace attn

#endif // ATTN_SUPPORT_ELEMENTTYPE_H
