//===- MlirMutator.h - Structure-aware mutations of MLIR text ---*- C++ -*-===//
//
// The mutation engine of attn-mlir-fuzzer: plain text in, plain text out,
// but every mutation knows MLIR's syntax (shaped types and their dimensions,
// SSA values, op lines, attn.term clauses, the generic form's properties and
// operandSegmentSizes, regions, function signatures), so that most mutants
// still parse and many still verify, and reach the passes behind the
// verifier. Mutant `index` of fuzz seed `seed` depends on nothing else: the
// same pair gives the same text on every machine.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_FUZZ_MLIRMUTATOR_H
#define ATTN_TEST_FUZZ_MLIRMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace fuzz {

/// A small, fast, portable generator (SplitMix64): std::mt19937 and the
/// standard distributions are not specified to give the same numbers
/// everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); 0 when n is 0.
  size_t below(size_t n) { return n == 0 ? 0 : next() % n; }
  /// True with probability num/den.
  bool chance(unsigned num, unsigned den) { return below(den) < num; }
  template <typename T> const T &pick(const std::vector<T> &values) {
    return values[below(values.size())];
  }

private:
  uint64_t state;
};

/// One seed: a module (or one `// -----` chunk of a test file) as written,
/// and in MLIR's generic form where it parses (else empty).
struct Seed {
  std::string name;
  std::string custom;
  std::string generic;
  /// How often it is drawn relative to the others (seeds that verify are
  /// worth more than the chunks of invalid.mlir).
  unsigned weight = 1;
};

struct Mutant {
  std::string text;
  /// Index into the seeds.
  size_t seed = 0;
  /// The mutations applied, in order.
  std::vector<std::string> mutations;
};

/// Mutant \p index of the run with fuzz seed \p fuzzSeed.
Mutant makeMutant(const std::vector<Seed> &seeds, uint64_t fuzzSeed,
                  uint64_t index);

/// The names of all mutation kinds (for --list-mutations).
std::vector<std::string> mutationKinds();

} // namespace fuzz
} // namespace attn

#endif // ATTN_TEST_FUZZ_MLIRMUTATOR_H
