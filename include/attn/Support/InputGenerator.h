//===- InputGenerator.h - Deterministic test inputs ------------*- C++ -*-===//
//
// Random inputs for tests and for the driver (FAVOR+'s ω when the caller
// gives none, DESIGN §1) that are the same on every platform and compiler for
// a given seed, so that a failure seen on one machine can be replayed on
// another, and a seed written in a test or a log means one thing.
//
// The generator is spelled out here rather than taken from <random>: the
// engines there are portable but the distributions are not (libstdc++ and
// libc++ implement std::normal_distribution differently).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_INPUTGENERATOR_H
#define ATTN_SUPPORT_INPUTGENERATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace inputs {

/// xoshiro256** 1.0 (Blackman and Vigna, 2018) whose 256-bit state is filled
/// by four successive outputs of splitmix64 started at `seed`, as the
/// authors recommend. next() is bit-identical everywhere, and so is
/// uniform(), which only scales an integer. normal() goes through std::log,
/// std::sqrt and std::cos; sqrt is exact in IEEE arithmetic and mainstream
/// libms give log and cos to within an ulp, so normals agree across platforms
/// to the last bit or so of a double, which rounding to float almost always
/// hides.
class Random {
public:
  explicit Random(uint64_t seed);

  /// The next 64 random bits.
  uint64_t next();

  /// A double uniform in [0, 1): the top 53 bits of next() times 2^-53.
  double uniform();

  /// A standard normal by the Box-Muller transform: with u1 = 1 - uniform()
  /// (in (0, 1], so the log is finite) and u2 = uniform(), drawn in that
  /// order, returns sqrt(-2 ln u1) cos(2π u2). The sine half is discarded so
  /// that every call consumes exactly two outputs of next() and the sequence
  /// does not depend on how calls to uniform() and normal() interleave.
  double normal();

private:
  uint64_t state[4];
};

/// Derives the seed of one named input from the run's seed:
/// splitmix64's finaliser of (mix(seed) XOR FNV-1a-64(name)), where mix is
/// that same finaliser. Each input gets its own stream, so adding, removing
/// or reordering inputs does not change the values of the others.
uint64_t seedFor(uint64_t seed, const std::string &name);

/// `count` values drawn by Random(seed).normal(), each times `stddev`,
/// rounded to float.
std::vector<float> gaussian(uint64_t seed, size_t count, double stddev = 1.0);

/// `count` values lo + (hi - lo) u, u drawn by Random(seed).uniform(),
/// rounded to float: decay gates and key weights, which must lie in a range.
std::vector<float> uniform(uint64_t seed, size_t count, double lo, double hi);

/// RetNet's per-head decay γ_h = 1 - 2^(-5-h), h = 0..heads-1 (Sun et al.,
/// 2023, "Retentive network"), rounded to float.
std::vector<float> retentionDecay(int64_t heads);

/// Performer's orthogonal random features (FAVOR+, Choromanski et al. 2021):
/// an [m, d] row-major matrix whose rows come in blocks of d. For each block,
/// drawn from one Random(seed) in this order:
///   1. a d×d matrix G of normals, row-major;
///   2. d vectors of d normals each, whose norms (chi(d)-distributed) are the
///      lengths of the block's rows.
/// The rows of G are orthonormalised by Gram-Schmidt in double (each
/// projection done twice, which keeps them orthogonal to working precision),
/// then row i is scaled to the norm of vector i. A last partial block still
/// draws a full block and keeps its first rows, so the first rows of a
/// matrix do not depend on m. Returns an empty vector if m or d is not
/// positive, or if m·d floats could not be addressed.
std::vector<float> orthogonalGaussian(uint64_t seed, int64_t m, int64_t d);

} // namespace inputs
} // namespace attn

#endif // ATTN_SUPPORT_INPUTGENERATOR_H
