//===- RunSetup.h - Inputs, reference and tolerance of a run ----*- C++ -*-===//
//
// What every program that runs a spec needs besides the compiled code: the
// generated inputs, the reference evaluator's problem over them, and the
// tolerance a result is held to. attnc (`attnc run`) and the GPU runner
// (tools/attn-gpu-runner) both call these functions, so that a seed means
// bit-identical inputs in both and a check passes or fails by one rule.
//
// Plain C++ (no LLVM/MLIR): the GPU device check builds this file on a
// machine without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_RUNSETUP_H
#define ATTN_FRONTEND_RUNSETUP_H

#include "attn/Frontend/Parser.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/Memory.h"
#include "attn/Support/Npy.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {
namespace frontend {

/// The arrays of one run by input name.
using InputArrays = std::map<std::string, npy::Array>;

/// "[1, 8, 4096, 64]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Generates every input of \p spec that \p arrays does not hold yet, with
/// its concrete shape under \p sizes (every dim bound), as docs/language.md
/// §10 describes: the input named X draws from
/// inputs::seedFor(\p seed, X); FAVOR+'s ω is inputs::orthogonalGaussian,
/// Linformer's E and F are N(0, 1/k) (they average over the sequence), every
/// other input is N(0, 1). Inputs already in \p arrays (read from files) are
/// left as they are, so generated ones do not depend on which were read.
/// Returns false with \p error set when an input would have more than 2^32
/// elements (`input 'q' of shape [...] is too large to generate`).
bool generateInputs(const Spec &spec, const SizeBindings &sizes, uint64_t seed,
                    InputArrays &arrays, std::string &error);

/// Rounds every f16 or bf16 input of \p spec in \p arrays to its element
/// type (nearest, ties to even), so that the arrays hold exactly what the
/// compiled code receives and the reference evaluator widens them exactly.
void roundInputs(const Spec &spec, InputArrays &arrays);
/// The bytes a compiled entry point takes for the values \p data of an
/// array of element type \p type: \p storage holds them (packed) unless
/// \p type is f32, when \p data itself is passed. Returns the pointer to
/// pass (for an output, unpack \p storage after the call when it is used).
const void *packedArray(ElementType type, const std::vector<float> &data,
                        std::vector<uint16_t> &storage);
/// The reference evaluator's problem over \p arrays, which must hold every
/// input of \p spec with shapes that passed checkShapes. The problem points
/// into \p arrays: keep them alive and unchanged while it is used.
reference::Problem buildProblem(const Spec &spec, const InputArrays &arrays);

/// What a run of \p spec under \p sizes (every dim bound) will allocate:
/// the inputs not in \p loaded yet, the output, with \p reference the
/// reference evaluator's output and workspace, with \p compiled the compiled
/// code's workspace (estimateKernelWorkspace). Sizes saturate, never wrap.
MemoryNeed runMemoryNeed(const Spec &spec, const SizeBindings &sizes,
                         const InputArrays &loaded, bool reference,
                         bool compiled);

/// "" when every element of every input is finite; else which input holds
/// a NaN or an infinity first, and where: `input 'v' holds NaN at [0, 0, 103,
/// 32]`.
std::string findNonFinite(const Spec &spec, const InputArrays &arrays);

/// "" when every decay input of every term (DESIGN §1.2: g in [0, 1]) lies
/// in [0, 1] and every lengths input (§1.3) holds whole numbers >= 0; else
/// which one does not, and where: `input 'g' is the decay of term 't0' and
/// must lie in [0, 1], but holds 1.5 at [0, 1, 3]`.
std::string findBadValues(const Spec &spec, const InputArrays &arrays);

/// "" unless an input other than lengths was read from integers
/// (npy::Array::integerDtype): then which, and its dtype.
std::string findIntegerInputs(const Spec &spec, const InputArrays &arrays);

/// The terms of \p problem whose f32 arithmetic can overflow on these
/// inputs, one message each (an upper bound from the rows' norms, so it may
/// warn where no value actually overflows): softmax scores beyond f32
/// (max|q| max|k| s > 3.4e38; the compiled code then no longer picks the
/// largest score), relu2 squares and their row sums, and products of
/// elementwise features with the values. FAVOR+ is stabilised and never
/// reported. The reference evaluator computes in double and is unaffected.
std::vector<std::string> overflowWarnings(const reference::Problem &problem);

/// The shape of the output O, [B, H, N, E], of \p problem.
std::vector<int64_t> outputShape(const reference::Problem &problem);

/// The tolerance on max|out − ref| / max|ref| that a run of \p spec is held
/// to. f32 accumulation over long rows keeps the plain error near 1e-6;
/// FAVOR+ (exps of large features) and kernels whose features can be negative
/// under the `rows` normaliser (identity: Σ_j w_ij may nearly cancel,
/// amplifying rounding) are ill-conditioned and get 1e-3; the rest get 1e-4.
/// f16 and bf16 inputs add nothing (both sides see the same rounded inputs
/// and compute in f32 and double); a narrow output adds its rounding, at
/// most the unit roundoff times max|ref|: 2^-11 (4.9e-4, f16) or 2^-8
/// (3.9e-3, bf16), so 5e-4 or 4e-3 is added.
///
/// With \p tensorCores (code for --target=nvptx), softmax terms over f16 or
/// bf16 inputs run on mma.sync with P rounded to the input type before
/// P V (FlashAttention's choice): each weight carries a relative error of
/// up to the unit roundoff, 2^-9 (bf16) or 2^-12 (f16), which measured on
/// random inputs gives max rel errors of ~1.5e-3 (bf16) and ~1.5e-4 (f16);
/// such specs are held to 1e-2 (bf16) or 2e-3 (f16). With \p tf32 (GPU
/// precision tf32) f32 inputs of softmax terms are rounded to tf32 (10
/// mantissa bits, as f16) and so is P: 2e-3 as for f16. With tensor cores
/// and bf16/f16 inputs or \p tf32, the tile products of kernel terms round
/// their f32 operands (features, weights, states) to tf32: also at least
/// 2e-3 (measured ~2-4e-4 at N = 300).
double checkTolerance(const Spec &spec, bool tensorCores = false,
                      bool tf32 = false);

/// How far an output is from the reference.
struct Comparison {
  /// max |out − ref|
  double maxAbsError = 0.0;
  /// maxAbsError / max |ref|, or maxAbsError when the reference is all 0.
  double maxRelError = 0.0;
  /// No NaN or infinity in out or in the reference.
  bool finite = true;
  /// finite and maxRelError <= the tolerance it was compared under.
  bool ok = false;
};

/// Compares \p out with \p expected (the same size) under \p tolerance.
Comparison compareWithReference(const std::vector<float> &out,
                                const std::vector<float> &expected,
                                double tolerance);

/// compareWithReference for log-sum-exps (DESIGN §1.3): -inf (a row with no
/// visible key) must match -inf; the finite ones agree within \p tolerance
/// of max(1, max |expected|), the scale of a logarithm's rounding.
Comparison compareLogSumExp(const std::vector<float> &out,
                            const std::vector<float> &expected,
                            double tolerance);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_RUNSETUP_H
