//===- WarpInstructions.h - PTX warp instructions on the host ---*- C++ -*-===//
//
// The semantics of the warp-level PTX instructions that tensor-core attention
// kernels use (issue 15): mma.sync on bf16 / f16 (m16n8k16) and tf32
// (m16n8k8) with f32 accumulators, ldmatrix, shfl.sync and cp.async, as
// functions of one warp's registers. The fragment layouts are written from
// the PTX ISA's tables ("Matrix Fragments for mma.m16n8k16 / m16n8k8 with
// floating point type", "Warp-level matrix load instruction: ldmatrix",
// "shfl.sync"), in code that shares nothing with attn's code generator, so
// that running generated kernels through these functions (attn-emulate-gpu)
// checks the generator's layouts instead of repeating them. Plain C++.
//
// Registers are given lane-major, as the warp holds them: `a[lane][i]` is
// register i of lane `lane`. A 32-bit register of a bf16x2 / f16x2 operand
// holds its even-numbered element in the low 16 bits.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EMULATION_WARPINSTRUCTIONS_H
#define ATTN_EMULATION_WARPINSTRUCTIONS_H

#include <cstdint>

namespace attn {
namespace ptx {

constexpr int kWarpSize = 32;

/// The element type of an mma.sync's A and B operands.
enum class MmaInput { F16, BF16 };

/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32:
/// D = A B + C with A 16x16 (4 registers of 2 elements per lane), B 16x8
/// (2 registers), C and D 16x8 f32 (4 registers). Lane l (group g = l / 4,
/// t = l % 4) holds A rows g and g + 8, columns 2t, 2t + 1 and 2t + 8,
/// 2t + 9; B rows (k) 2t, 2t + 1, 2t + 8, 2t + 9 of column g; C/D rows g
/// and g + 8, columns 2t, 2t + 1. Products are exact; each D element is the
/// exact sum rounded once to f32 (the ISA leaves the order and internal
/// precision of the hardware's sum unspecified: compare with a tolerance).
/// \p d may alias \p c.
void mmaM16N8K16(MmaInput type, const uint32_t a[kWarpSize][4],
                 const uint32_t b[kWarpSize][2], const float c[kWarpSize][4],
                 float d[kWarpSize][4]);

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: D = A B + C with A
/// 16x8 (4 registers, one tf32 each), B 8x8 (2), C, D 16x8 f32. Lane l
/// holds A (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) in registers 0..3,
/// B (t, g) and (t + 4, g). The tensor cores read 19 bits of each operand
/// (sign, exponent, 10 mantissa bits): the low 13 bits are ignored here,
/// so operands must be rounded to tf32 (cvt.rna.tf32.f32) first.
void mmaM16N8K8Tf32(const uint32_t a[kWarpSize][4],
                    const uint32_t b[kWarpSize][2], const float c[kWarpSize][4],
                    float d[kWarpSize][4]);

/// cvt.rna.tf32.f32: the f32 \p bits rounded to tf32 (10 mantissa bits) to
/// the nearest, ties away from zero, as the f32 pattern whose low 13 bits
/// are 0; infinities stay, a finite value past the largest tf32 becomes
/// infinite, NaN becomes the canonical NaN 0x7fffffff.
uint32_t cvtRnaTf32(uint32_t bits);

/// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: \p count (1, 2
/// or 4) 8x8 matrices of 16-bit elements; the 8 rows of matrix m start at
/// the byte offsets in \p shared given by lanes 8m .. 8m + 7 of
/// \p rowAddress (16 contiguous bytes each). Register m of lane l receives
/// row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of matrix m, or with
/// \p transpose those of its transpose: (2 (l % 4), l / 4) and
/// (2 (l % 4) + 1, l / 4). Registers m >= count are left untouched.
void ldmatrix(int count, bool transpose, const uint8_t *shared,
              const uint32_t rowAddress[kWarpSize], uint32_t d[kWarpSize][4]);

enum class ShuffleMode { Up, Down, Butterfly, Index };

/// shfl.sync.{up,down,bfly,idx}.b32 d|p, a, b, c, membermask: lane l reads
/// lane j of \p value, with c = \p clampAndMask (clamp value in bits 0-4,
/// segment mask in bits 8-12), minLane = l & segmask, maxLane = minLane |
/// (clamp & ~segmask), and j = l - b (up; valid when j >= maxLane), l + b
/// (down; j <= maxLane), l ^ b (bfly; j <= maxLane) or minLane |
/// (b & ~segmask) (idx; j <= maxLane); an invalid j reads lane l itself.
/// \p valid (optional) receives the predicate p. Lanes outside
/// \p memberMask keep their \p d.
void shuffle(ShuffleMode mode, const uint32_t value[kWarpSize],
             const uint32_t b[kWarpSize], uint32_t clampAndMask,
             uint32_t memberMask, uint32_t d[kWarpSize],
             bool valid[kWarpSize] = nullptr);

/// cp.async.{ca,cg}.shared.global [dst], [src], cpSize, srcSize: copies the
/// first \p srcSize of \p cpSize bytes (4, 8 or 16) and writes zeros to the
/// rest; the copy is complete at the matching cp.async.wait_group, which an
/// in-order host execution has already reached.
void cpAsync(uint8_t *sharedDst, const uint8_t *globalSrc, unsigned cpSize,
             unsigned srcSize);

} // namespace ptx
} // namespace attn

#endif // ATTN_EMULATION_WARPINSTRUCTIONS_H
