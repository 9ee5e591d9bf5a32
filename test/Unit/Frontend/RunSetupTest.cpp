//===- RunSetupTest.cpp - Unit tests for RunSetup.h -----------------------===//
//
// attnc and attn-gpu-runner both take their inputs from generateInputs, so
// a seed must mean exactly the streams that docs/language.md §10 documents:
// these tests pin each kind of input to the InputGenerator call it must be
// (whose own values are pinned in Support/InputGeneratorTest.cpp), and
// test/GpuRunner/inputs.test compares the two programs' files byte by byte.
//
//===----------------------------------------------------------------------===//

#include "attn/Frontend/RunSetup.h"
#include "attn/Support/InputGenerator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace attn;
using namespace attn::frontend;

namespace {

/// Parses and checks \p text; fails the test on any error.
Spec parse(const std::string &text) {
  SourceFile source("test.attn", text);
  Diagnostic diag;
  std::optional<Spec> spec = parseSpec(source, diag);
  EXPECT_TRUE(spec.has_value()) << diag.message;
  if (!spec)
    return Spec();
  EXPECT_TRUE(checkSpec(*spec, diag)) << diag.message;
  return *spec;
}

const char *const kPerformer = R"(
attention performer {
  dim N
  dim m = 8
  input q: [1, 2, N, 4]
  input k: [1, 2, N, 4]
  input v: [1, 2, N, 3]
  input omega: [m, 4]
  term {
    score = kernel favor+
    omega = omega
  }
}
)";

const char *const kLinformer = R"(
attention linformer {
  dim N = 16
  dim k = 4
  input q: [1, 2, N, 4]
  input k: [1, 2, N, 4]
  input v: [1, 2, N, 4]
  input E: [k, N]
  input F: [k, N]
  term {
    score = softmax
    project = E, F
  }
}
)";

const char *const kGated = R"(
attention gated {
  dim B = 2
  dim N
  dim M
  input q: [B, 3, N, 4]
  input k: [B, 3, M, 4]
  input v: [B, 3, M, 5]
  input g: [B, 3, N, 5]
  term local {
    score = relu2
  }
  term global {
    score = kernel identity
    normalizer = length
  }
  gate = g
}
)";

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(RunSetup, GeneratesEveryInputWithItsConcreteShape) {
  Spec spec = parse(kPerformer);
  InputArrays arrays;
  std::string error;
  ASSERT_TRUE(generateInputs(spec, {{"N", 5}, {"m", 8}}, 0, arrays, error))
      << error;
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays["q"].shape, (std::vector<int64_t>{1, 2, 5, 4}));
  EXPECT_EQ(arrays["v"].shape, (std::vector<int64_t>{1, 2, 5, 3}));
  EXPECT_EQ(arrays["omega"].shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(arrays["q"].data.size(), 40u);
  EXPECT_EQ(arrays["v"].data.size(), 30u);
  EXPECT_EQ(arrays["omega"].data.size(), 32u);
}

TEST(RunSetup, IsDeterministic) {
  Spec spec = parse(kPerformer);
  InputArrays first, second, other;
  std::string error;
  ASSERT_TRUE(generateInputs(spec, {{"N", 7}, {"m", 8}}, 42, first, error));
  ASSERT_TRUE(generateInputs(spec, {{"N", 7}, {"m", 8}}, 42, second, error));
  ASSERT_TRUE(generateInputs(spec, {{"N", 7}, {"m", 8}}, 43, other, error));
  for (const char *name : {"q", "k", "v", "omega"}) {
    EXPECT_TRUE(sameBits(first[name].data, second[name].data)) << name;
    EXPECT_FALSE(sameBits(first[name].data, other[name].data)) << name;
  }
}

TEST(RunSetup, OrdinaryInputsAreStandardNormalStreamsPerName) {
  Spec spec = parse(kGated);
  InputArrays arrays;
  std::string error;
  SizeBindings sizes{{"B", 2}, {"N", 3}, {"M", 6}};
  ASSERT_TRUE(generateInputs(spec, sizes, 9, arrays, error)) << error;
  EXPECT_TRUE(
      sameBits(arrays["q"].data,
               inputs::gaussian(inputs::seedFor(9, "q"), 2 * 3 * 3 * 4)));
  EXPECT_TRUE(
      sameBits(arrays["k"].data,
               inputs::gaussian(inputs::seedFor(9, "k"), 2 * 3 * 6 * 4)));
  EXPECT_TRUE(
      sameBits(arrays["v"].data,
               inputs::gaussian(inputs::seedFor(9, "v"), 2 * 3 * 6 * 5)));
  EXPECT_TRUE(
      sameBits(arrays["g"].data,
               inputs::gaussian(inputs::seedFor(9, "g"), 2 * 3 * 3 * 5)));
}

TEST(RunSetup, OmegaIsOrthogonalGaussian) {
  Spec spec = parse(kPerformer);
  InputArrays arrays;
  std::string error;
  ASSERT_TRUE(generateInputs(spec, {{"N", 5}, {"m", 8}}, 3, arrays, error));
  EXPECT_TRUE(
      sameBits(arrays["omega"].data,
               inputs::orthogonalGaussian(inputs::seedFor(3, "omega"), 8, 4)));
}

TEST(RunSetup, ProjectionsAreNormalWithVarianceOneOverK) {
  Spec spec = parse(kLinformer);
  InputArrays arrays;
  std::string error;
  ASSERT_TRUE(generateInputs(spec, {{"N", 16}, {"k", 4}}, 5, arrays, error));
  for (const char *name : {"E", "F"})
    EXPECT_TRUE(sameBits(arrays[name].data,
                         inputs::gaussian(inputs::seedFor(5, name), 4 * 16,
                                          1.0 / std::sqrt(4.0))))
        << name;
  EXPECT_TRUE(sameBits(arrays["q"].data,
                       inputs::gaussian(inputs::seedFor(5, "q"), 2 * 16 * 4)));
}

TEST(RunSetup, KeepsInputsReadFromFiles) {
  Spec spec = parse(kPerformer);
  InputArrays all, some;
  std::string error;
  SizeBindings sizes{{"N", 5}, {"m", 8}};
  ASSERT_TRUE(generateInputs(spec, sizes, 1, all, error));
  some["k"].shape = {1, 2, 5, 4};
  some["k"].data.assign(40, 0.5f);
  ASSERT_TRUE(generateInputs(spec, sizes, 1, some, error));
  EXPECT_EQ(some["k"].data, std::vector<float>(40, 0.5f));
  // The others do not depend on which inputs were given.
  for (const char *name : {"q", "v", "omega"})
    EXPECT_TRUE(sameBits(some[name].data, all[name].data)) << name;
}

TEST(RunSetup, RefusesHugeAndUnboundInputs) {
  Spec spec = parse(kPerformer);
  InputArrays arrays;
  std::string error;
  EXPECT_FALSE(generateInputs(spec, {{"N", int64_t(1) << 30}, {"m", 8}}, 0,
                              arrays, error));
  EXPECT_EQ(error, "input 'q' of shape [1, 2, 1073741824, 4] is too large to "
                   "generate");
  arrays.clear();
  EXPECT_FALSE(generateInputs(spec, {{"m", 8}}, 0, arrays, error));
  EXPECT_EQ(error, "input 'q' of shape [1, 2, -1, 4] has an unbound size");
}

TEST(RunSetup, BuildProblemReadsSizesAndPointers) {
  Spec spec = parse(kGated);
  InputArrays arrays;
  std::string error;
  ASSERT_TRUE(
      generateInputs(spec, {{"B", 2}, {"N", 3}, {"M", 6}}, 0, arrays, error));
  reference::Problem problem = buildProblem(spec, arrays);
  EXPECT_EQ(problem.batch, 2);
  EXPECT_EQ(problem.heads, 3);
  EXPECT_EQ(problem.queries, 3);
  EXPECT_EQ(problem.keys, 6);
  EXPECT_EQ(problem.valueDim, 5);
  EXPECT_EQ(problem.v, arrays["v"].data.data());
  EXPECT_EQ(problem.gate, arrays["g"].data.data());
  ASSERT_EQ(problem.terms.size(), 2u);
  EXPECT_EQ(problem.terms[0].score, reference::Score::Relu2);
  EXPECT_EQ(problem.terms[1].score, reference::Score::Kernel);
  EXPECT_EQ(problem.terms[1].featureMap, reference::FeatureMap::Identity);
  EXPECT_EQ(problem.terms[1].normalizer, reference::Normalizer::Length);
  EXPECT_EQ(problem.terms[0].featureDim, 4);
  EXPECT_EQ(problem.terms[0].q, arrays["q"].data.data());
  EXPECT_EQ(problem.terms[0].k, arrays["k"].data.data());
  EXPECT_EQ(reference::validate(problem), "");
  EXPECT_EQ(outputShape(problem), (std::vector<int64_t>{2, 3, 3, 5}));

  Spec performer = parse(kPerformer);
  InputArrays performerArrays;
  ASSERT_TRUE(generateInputs(performer, {{"N", 5}, {"m", 8}}, 0,
                             performerArrays, error));
  reference::Problem favor = buildProblem(performer, performerArrays);
  EXPECT_EQ(favor.gate, nullptr);
  EXPECT_EQ(favor.terms[0].numFeatures, 8);
  EXPECT_EQ(favor.terms[0].omega, performerArrays["omega"].data.data());

  Spec linformer = parse(kLinformer);
  InputArrays linformerArrays;
  ASSERT_TRUE(generateInputs(linformer, {{"N", 16}, {"k", 4}}, 0,
                             linformerArrays, error));
  reference::Problem projected = buildProblem(linformer, linformerArrays);
  EXPECT_EQ(projected.terms[0].projectedLength, 4);
  EXPECT_EQ(projected.terms[0].projectKeys, linformerArrays["E"].data.data());
  EXPECT_EQ(projected.terms[0].projectValues, linformerArrays["F"].data.data());
}

TEST(RunSetup, CheckTolerance) {
  EXPECT_EQ(checkTolerance(parse(kLinformer)), 1e-4);
  EXPECT_EQ(checkTolerance(parse(kPerformer)), 1e-3);
  // identity features under `length` are well conditioned...
  EXPECT_EQ(checkTolerance(parse(kGated)), 1e-4);
  // ...under the default (rows) normaliser they are not.
  EXPECT_EQ(checkTolerance(parse(R"(
attention identity_rows {
  dim N
  input q: [1, 1, N, 4]
  input k: [1, 1, N, 4]
  input v: [1, 1, N, 4]
  term {
    score = kernel identity
  }
}
)")),
            1e-3);
}

TEST(RunSetup, CompareWithReference) {
  Comparison same = compareWithReference({1, -2, 4}, {1, -2, 4}, 1e-4);
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.maxAbsError, 0.0);

  // Relative to max|ref| = 4, not elementwise.
  Comparison off = compareWithReference({1, -2, 4.002f}, {1, -2, 4}, 1e-4);
  EXPECT_NEAR(off.maxAbsError, 0.002, 1e-6);
  EXPECT_NEAR(off.maxRelError, 0.0005, 1e-6);
  EXPECT_FALSE(off.ok);
  EXPECT_TRUE(compareWithReference({1, -2, 4.002f}, {1, -2, 4}, 1e-3).ok);

  // A NaN or an infinity fails whatever the tolerance.
  float nan = std::numeric_limits<float>::quiet_NaN();
  Comparison notFinite = compareWithReference({1, nan}, {1, 2}, 1.0);
  EXPECT_FALSE(notFinite.finite);
  EXPECT_FALSE(notFinite.ok);
  // On either side: a NaN reference proves nothing about the output.
  Comparison nanReference = compareWithReference({1, 2}, {1, nan}, 1.0);
  EXPECT_FALSE(nanReference.finite);
  EXPECT_FALSE(nanReference.ok);
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compareWithReference({1, 2}, {inf, 2}, 1.0).ok);

  // An all-zero reference: the absolute error.
  Comparison zero = compareWithReference({0, 1e-7f}, {0, 0}, 1e-4);
  EXPECT_NEAR(zero.maxRelError, 1e-7, 1e-12);
  EXPECT_TRUE(zero.ok);

  EXPECT_FALSE(compareWithReference({1, 2}, {1, 2, 3}, 1.0).ok);
}

} // namespace
