//===- CpuTarget.h - What attn's CPU code generation knows of a CPU -*- C++ -*-===//
//
// The CPU a kernel is compiled for, taken from the host (`native`) or named
// as llc's -mcpu/-mattr name it (`x86-64-v3`, `x86-64-v4`, `znver3`,
// `skylake-avx512`, ... plus `+feature,-feature`). Register tiles, vector
// widths and the target machine all come from here, never from constants.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_CPUTARGET_H
#define ATTN_CODEGEN_CPU_CPUTARGET_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace attn {

/// The register tile of a rows×cols contraction tile product, lowered as
/// outer products: rows·cols/lanes accumulators, cols/lanes vectors of the
/// right operand and one broadcast of the left one live at once.
struct RegisterTile {
  int64_t rows = 1;
  int64_t cols = 1;
};

struct CpuTarget {
  /// The target triple, the LLVM CPU name and the features given to the
  /// target machine (`+avx2,+fma,...`; the CPU's own features are implied).
  std::string triple;
  std::string cpu;
  std::string features;

  /// Width of one vector register and how many there are.
  unsigned vectorBits = 128;
  unsigned vectorRegisters = 16;
  /// Fused multiply-add.
  bool fma = false;
  /// Data cache sizes per core (read from the host for `native`; typical
  /// values of the named CPU otherwise).
  int64_t l1dBytes = 32 * 1024;
  int64_t l2Bytes = 1024 * 1024;

  /// f32 elements in one vector register.
  int64_t lanes() const { return vectorBits / 32; }

  /// The rows×cols tile whose outer products keep the FMA pipes busiest:
  /// its accumulators, right-operand vectors and broadcast fit in the vector
  /// registers, and its FMAs outlast its loads and the FMA latency by a
  /// margin (6x16 on AVX2's 16 registers of 8 floats, 8x32 on AVX-512's 32
  /// of 16). Rows need not be a power of two.
  RegisterTile registerTile() const;

  /// Reduction steps of a tile product unrolled into one loop iteration: 4
  /// on every CPU measured. With 16, LLVM's scheduler hoists every step's
  /// loads to the top of the block and spills (an 8x32 AVX-512 tile: 64% of
  /// the FMA peak on a Sapphire Rapids core, 72% with 4); 2 steps ran slower
  /// than 4 on AVX2 (6x16: 58% against 95-98%; 4x16: 79% against 86%), and
  /// 8 no faster.
  int64_t reductionSteps() const;
};

/// The CPU \p name (`native`, empty = native, or an LLVM CPU name of the
/// host's architecture) with the extra \p features (`+a,-b`). Returns
/// std::nullopt and sets \p error for an unknown CPU or feature.
std::optional<CpuTarget> resolveCpuTarget(const std::string &name,
                                          const std::string &features,
                                          std::string &error);

/// The features \p target's code may use that the host lacks (empty when
/// the host runs it), for a clear error before a kernel is run in process.
std::string featuresMissingOnHost(const CpuTarget &target);

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_CPU_CPUTARGET_H
