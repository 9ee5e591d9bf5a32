//===- CostModelTest.cpp - Unit tests for the order/chunk cost model ------===//
//
// The cost model decides association orders, so its counts are checked here
// against numbers that do not come from it: small shapes worked out by hand
// (the arithmetic sits in a comment next to each literal) and, for the mask
// pair counts, a naive double loop over (i, j) written in the test. The
// formulas are those of docs/CostModel.md. The only expectations obtained by
// calling the code under test are the crossover checks, whose definition is
// "the smallest N at which estimateKvFirst beats estimateQkFirst".
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/CostModel.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using namespace attn::cost;

namespace {

/// Counts agree to rounding only (they are doubles built from products).
void expectNear(double actual, double expected, const char *what = "") {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::fabs(expected)))
      << what;
}

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

TermShape kernelShape(FeatureMap map, int64_t n, int64_t m, int64_t d,
                      int64_t e, int64_t batch = 1, int64_t heads = 1) {
  TermShape shape;
  shape.score = Score::Kernel;
  shape.featureMap = map;
  shape.batch = batch;
  shape.heads = heads;
  shape.queries = n;
  shape.keys = m;
  shape.featureDim = d;
  shape.valueDim = e;
  return shape;
}

/// A target with round numbers, so that times are easy to work out by hand.
Target simpleTarget() {
  Target target;
  target.name = "simple";
  target.peakFlops = 1e6;
  target.memoryBandwidth = 1e5;
  target.cores = 2;
  target.elementBytes = 4;
  target.expFlops = 8;
  target.qkEfficiency = 0.5;
  target.kvEfficiency = 0.5;
  target.chunkedEfficiency = 0.25;
  target.featureEfficiency = 0.25;
  target.chunkHalfEfficiency = 32;
  target.queryTile = 64;
  target.keyTile = 64;
  target.launchOverhead = 1e-3;
  return target;
}

//===----------------------------------------------------------------------===//
// Unmasked pairs
//===----------------------------------------------------------------------===//

/// The DESIGN §1 mask predicates, straight.
bool visible(MaskKind mask, int64_t c, int64_t i, int64_t j) {
  switch (mask) {
  case MaskKind::None:
    return true;
  case MaskKind::Causal:
    return j <= i;
  case MaskKind::Block:
    return i / c == j / c;
  case MaskKind::BlockCausal:
    return i / c == j / c && j <= i;
  case MaskKind::PriorBlocks:
    return j / c < i / c;
  case MaskKind::Window:
    return false; // windowPairs below
  }
  return false;
}

double bruteForcePairs(MaskKind mask, int64_t c, int64_t n, int64_t m) {
  double count = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      // Causal reads the query's position M - N + i (DESIGN §1.3).
      int64_t p = mask == MaskKind::Causal ? i + m - n : i;
      count += visible(mask, c, p, j) ? 1 : 0;
    }
  return count;
}

/// window(l, r) over N queries at positions M - N + i: p - l <= j <= p + r.
double bruteForceWindowPairs(int64_t l, int64_t r, int64_t n, int64_t m) {
  double count = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      int64_t p = i + m - n;
      count += p - l <= j && j <= p + r ? 1 : 0;
    }
  return count;
}

TEST(UnmaskedPairs, WindowMatchesBruteForce) {
  for (int64_t n = 1; n <= 19; ++n)
    for (int64_t m = 1; m <= 19; ++m)
      for (int64_t l = 0; l <= 21; l += 3)
        for (int64_t r = 0; r <= 7; r += 2)
          ASSERT_EQ(unmaskedPairs(MaskKind::Window, 0, n, m, l, r),
                    bruteForceWindowPairs(l, r, n, m))
              << "window(" << l << ", " << r << ") N " << n << " M " << m;
}

TEST(UnmaskedPairs, WindowIsAFractionOfCausal) {
  // window(256) at N = 16384: 256 keys per row but the first 255 rows'
  // 1 + ... + 255: 16384·256 − 255·256/2 = 4161664 pairs, 3.1% of causal's.
  double window = unmaskedPairs(MaskKind::Window, 0, 16384, 16384, 255, 0);
  EXPECT_EQ(window, 16384.0 * 256 - 255.0 * 256 / 2);
  EXPECT_LT(window / unmaskedPairs(MaskKind::Causal, 0, 16384, 16384), 0.05);
  // Sizes near 2^62 neither overflow nor hang.
  double huge = unmaskedPairs(MaskKind::Window, 0, int64_t(1) << 62,
                              int64_t(1) << 62, 4095, 0);
  EXPECT_GT(huge, 0.0);
  EXPECT_TRUE(std::isfinite(huge));
}

TEST(UnmaskedPairs, HandComputed) {
  // none: N·M = 7·5 = 35.
  EXPECT_EQ(unmaskedPairs(MaskKind::None, 0, 7, 5), 35);
  // causal, N = M = 10: 10·11/2 = 55.
  EXPECT_EQ(unmaskedPairs(MaskKind::Causal, 0, 10, 10), 55);
  // causal, N = 4 < M = 9 (bottom-right, positions 5..8): rows see 6, 7,
  // 8, 9 keys = 30.
  EXPECT_EQ(unmaskedPairs(MaskKind::Causal, 0, 4, 9), 30);
  // causal, N = 9 > M = 4: positions -5..3, rows see 0 (five times), 1, 2,
  // 3, 4 keys = 10.
  EXPECT_EQ(unmaskedPairs(MaskKind::Causal, 0, 9, 4), 10);
  // block(4), N = M = 10: two full 4×4 blocks (32) plus a 2×2 partial (4) = 36.
  EXPECT_EQ(unmaskedPairs(MaskKind::Block, 4, 10, 10), 36);
  // block(4), N = 10, M = 6: block 0 16, block 1 rows 4..7 × keys 4,5 = 8,
  // block 2 rows 8,9 × no keys: 24.
  EXPECT_EQ(unmaskedPairs(MaskKind::Block, 4, 10, 6), 24);
  // block(4), N = 3, M = 10: block 0 rows 0..2 × keys 0..3 = 12.
  EXPECT_EQ(unmaskedPairs(MaskKind::Block, 4, 3, 10), 12);
  // block(16) with N = M = 10 < c: one partial block, 10·10 = 100.
  EXPECT_EQ(unmaskedPairs(MaskKind::Block, 16, 10, 10), 100);
  // block_causal(4), N = M = 10: 2 full blocks of 4·5/2 = 10, plus the
  // partial 2·3/2 = 3: 23.
  EXPECT_EQ(unmaskedPairs(MaskKind::BlockCausal, 4, 10, 10), 23);
  // block_causal(3), N = M = 7: 2·(3·4/2) + 1·2/2 = 12 + 1 = 13.
  EXPECT_EQ(unmaskedPairs(MaskKind::BlockCausal, 3, 7, 7), 13);
  // prior_blocks(4), N = M = 10: rows 0..3 see 0, rows 4..7 see 4 (16),
  // rows 8,9 see 8 (16): 32.
  EXPECT_EQ(unmaskedPairs(MaskKind::PriorBlocks, 4, 10, 10), 32);
  // prior_blocks(4), N = 12 > M = 6: rows 4..7 see 4 (16), rows 8..11 see
  // min(8, 6) = 6 (24): 40.
  EXPECT_EQ(unmaskedPairs(MaskKind::PriorBlocks, 4, 12, 6), 40);
  // block_causal(4), N = 10 > M = 6: block 0 10; block 1 rows 4..7 see keys
  // 4..min(i, 5): 1, 2, 2, 2 = 7; block 2 none: 17.
  EXPECT_EQ(unmaskedPairs(MaskKind::BlockCausal, 4, 10, 6), 17);
  // Large: causal N = M = 2^20: 2^20·(2^20+1)/2 = 549756338176.
  EXPECT_EQ(unmaskedPairs(MaskKind::Causal, 0, 1 << 20, 1 << 20),
            549756338176.0);
}

TEST(UnmaskedPairs, MatchesBruteForce) {
  const MaskKind masks[] = {MaskKind::None, MaskKind::Causal, MaskKind::Block,
                            MaskKind::BlockCausal, MaskKind::PriorBlocks};
  for (MaskKind mask : masks)
    for (int64_t n = 1; n <= 23; ++n)
      for (int64_t m = 1; m <= 23; ++m)
        for (int64_t c = 1; c <= 9; ++c) {
          bool hasBlock = mask == MaskKind::Block ||
                          mask == MaskKind::BlockCausal ||
                          mask == MaskKind::PriorBlocks;
          int64_t block = hasBlock ? c : 0;
          if (!hasBlock && c > 1)
            continue;
          double expected = bruteForcePairs(mask, c, n, m);
          ASSERT_EQ(unmaskedPairs(mask, block, n, m), expected)
              << "mask " << static_cast<int>(mask) << " c " << c << " N " << n
              << " M " << m;
        }
}

TEST(UnmaskedPairs, MatchesBruteForceForLongerRows) {
  // Block sizes that do and do not divide N, with N = M and N != M.
  for (int64_t n : {64, 100, 129})
    for (int64_t m : {64, 100, 129})
      for (int64_t c : {16, 17, 64, 200}) {
        for (MaskKind mask : {MaskKind::Block, MaskKind::BlockCausal,
                              MaskKind::PriorBlocks})
          ASSERT_EQ(unmaskedPairs(mask, c, n, m), bruteForcePairs(mask, c, n, m))
              << "mask " << static_cast<int>(mask) << " c " << c << " N "
              << n << " M " << m;
        ASSERT_EQ(unmaskedPairs(MaskKind::Causal, 0, n, m),
                  bruteForcePairs(MaskKind::Causal, 0, n, m));
      }
}

//===----------------------------------------------------------------------===//
// Shapes and feature maps
//===----------------------------------------------------------------------===//

TEST(TermShape, ScoreWidthAndAttendedKeys) {
  TermShape shape = kernelShape(FeatureMap::Elu1, 10, 10, 8, 4);
  EXPECT_EQ(shape.scoreWidth(), 8);
  shape.featureMap = FeatureMap::CosFormer;
  EXPECT_EQ(shape.scoreWidth(), 16); // 2D
  shape.featureMap = FeatureMap::FavorPlus;
  shape.numFeatures = 32;
  EXPECT_EQ(shape.scoreWidth(), 32); // m
  shape.score = Score::Softmax;
  shape.featureMap = FeatureMap::None;
  EXPECT_EQ(shape.scoreWidth(), 8); // D
  EXPECT_EQ(shape.attendedKeys(), 10);
  shape.projectedLength = 3;
  EXPECT_EQ(shape.attendedKeys(), 3);
  EXPECT_FALSE(shape.hasProductForm());
  shape.mask = MaskKind::BlockCausal;
  EXPECT_TRUE(shape.isCausal());
  shape.mask = MaskKind::PriorBlocks;
  EXPECT_FALSE(shape.isCausal());
}

TEST(FeatureMapFlops, EveryMap) {
  Target cpu = cpuTarget(); // expFlops 8
  // N = 10 and M = 20 rows, D = 8, B·H = 2·3 = 6.
  TermShape shape = kernelShape(FeatureMap::Identity, 10, 20, 8, 4, 2, 3);
  EXPECT_EQ(featureMapFlops(shape, cpu), 0);
  shape.featureMap = FeatureMap::Relu; // 30 rows · 8 · 6 = 1440
  EXPECT_EQ(featureMapFlops(shape, cpu), 1440);
  shape.featureMap = FeatureMap::Elu1; // 30 · 8·(8+1) · 6 = 12960
  EXPECT_EQ(featureMapFlops(shape, cpu), 12960);
  shape.featureMap = FeatureMap::CosFormer; // 30 · (3·8 + 2·8) · 6 = 7200
  EXPECT_EQ(featureMapFlops(shape, cpu), 7200);
  shape.featureMap = FeatureMap::FavorPlus;
  shape.numFeatures = 32;
  // 30 · (2·32·8 + 2·8 + 32·(8+2)) · 6 = 30 · (512 + 16 + 320) · 6
  //   = 30 · 848 · 6 = 152640
  EXPECT_EQ(featureMapFlops(shape, cpu), 152640);
  // The target's exp cost enters: exp 4 → 30 · (512 + 16 + 192) · 6 = 129600.
  EXPECT_EQ(featureMapFlops(shape, nvptxTarget()), 129600);
  // A Linformer projection applies φ to k projected rows: 10 + 5 = 15 rows,
  // elu1 15 · 72 · 6 = 6480.
  shape.featureMap = FeatureMap::Elu1;
  shape.projectedLength = 5;
  EXPECT_EQ(featureMapFlops(shape, cpu), 6480);
  // softmax and relu2 have no feature map.
  shape.score = Score::Softmax;
  EXPECT_EQ(featureMapFlops(shape, cpu), 0);
}

//===----------------------------------------------------------------------===//
// FLOPs and bytes
//===----------------------------------------------------------------------===//

// The shape of the next three tests: B = 2, H = 3 (6 heads), N = 100,
// M = 130, D = 16, E = 8; CPU target (exp 8, 64×64 tiles, 4-byte elements).
// Pairs 100·130 = 13000. qk-first bytes: ⌈100/64⌉ = 2 query tiles,
// (100·16 + 2·130·24 + 100·8)·6·4 = (1600 + 6240 + 800)·24 = 207360.
TermShape crossShape(Score score, FeatureMap map) {
  TermShape shape = kernelShape(map, 100, 130, 16, 8, 2, 3);
  shape.score = score;
  return shape;
}

TEST(QkFirst, Softmax) {
  Strategy s = estimateQkFirst(crossShape(Score::Softmax, FeatureMap::None),
                               cpuTarget());
  EXPECT_EQ(s.order, Order::QkFirst);
  ASSERT_TRUE(s.chunk.has_value());
  EXPECT_EQ(*s.chunk, 64); // the key tile
  // pairs 13000 · (2·16 + 2·8 + 8 + 2 = 58) · 6 = 4524000
  // rescale 100 · ⌈130/64⌉ = 3 · 2·8 · 6 = 28800
  // divide 100 · 8 · 6 = 4800
  // total 4524000 + 28800 + 4800 = 4557600
  expectNear(s.flops, 4557600);
  expectNear(s.bytes, 207360);
  // one 64×64 tile of 4 bytes per core, min(6 heads, 2 cores) = 2: 32768
  expectNear(s.peakBytes, 32768);
}

TEST(QkFirst, RowCostPerOutputElement) {
  // 100 query rows × 8 value columns × 6 (batch, head) = 4800 elements at
  // qk_row_cost each, on top of the rest.
  TermShape shape = crossShape(Score::Softmax, FeatureMap::None);
  Target rowCost = cpuTarget();
  rowCost.qkRowCost = 1e-6;
  Strategy without = estimateQkFirst(shape, cpuTarget());
  Strategy with = estimateQkFirst(shape, rowCost);
  expectNear(with.work.qkRowElements, 4800);
  expectNear(with.seconds - without.seconds, 4800e-6);
}

TEST(QkFirst, Relu2) {
  Strategy s = estimateQkFirst(crossShape(Score::Relu2, FeatureMap::None),
                               cpuTarget());
  // pairs 13000 · (48 + 3 = 51) · 6 = 3978000, divide 4800, no rescale:
  // 3982800
  expectNear(s.flops, 3982800);
  expectNear(s.bytes, 207360);
}

TEST(QkFirst, Elu1) {
  Strategy s = estimateQkFirst(crossShape(Score::Kernel, FeatureMap::Elu1),
                               cpuTarget());
  // pairs 13000 · (48 + 1 = 49) · 6 = 3822000, divide 4800,
  // features (100 + 130) · 16·9 · 6 = 198720: 4025520
  expectNear(s.flops, 4025520);
  expectNear(s.bytes, 207360);
}

TEST(QkFirst, TilesComeFromTheTarget) {
  // The same softmax shape with 128-row query tiles and 32-key tiles (N
  // dynamic: static, the 100 rows would be one tile of 100).
  Target t = cpuTarget();
  t.queryTile = 128;
  t.keyTile = 32;
  t.cores = 4;
  TermShape shape = crossShape(Score::Softmax, FeatureMap::None);
  shape.staticQueries = false;
  Strategy s = estimateQkFirst(shape, t);
  ASSERT_TRUE(s.chunk.has_value());
  EXPECT_EQ(*s.chunk, 32);
  // rescale 100 · ⌈130/32⌉ = 5 · 16 · 6 = 48000:
  // 4524000 + 48000 + 4800 = 4576800
  expectNear(s.flops, 4576800);
  // one query tile: (1600 + 1·130·24 + 800) · 24 = 5520 · 24 = 132480
  expectNear(s.bytes, 132480);
  // a 128×32 tile of 4 bytes on min(6, 4) = 4 cores: 4096 · 4 · 4 = 65536
  expectNear(s.peakBytes, 65536);
  // N = 100 static: one tile of 104 rows (100 rounded up to 8) a column.
  shape.staticQueries = true;
  expectNear(estimateQkFirst(shape, t).peakBytes, 104 * 32 * 4 * 4);
}

TEST(KvFirst, Elu1) {
  Strategy s = estimateKvFirst(crossShape(Score::Kernel, FeatureMap::Elu1),
                               cpuTarget(), std::nullopt);
  EXPECT_EQ(s.order, Order::KvFirst);
  EXPECT_FALSE(s.chunk.has_value());
  // state (2·130·16·8 + 130·16) · 6 = (33280 + 2080) · 6 = 212160
  // query pass (2·100·16·8 + 2·100·16 + 100·8) · 6 = 29600 · 6 = 177600
  // features 198720: total 588480
  expectNear(s.flops, 588480);
  // (100·16 + 130·24 + 100·8) · 6 · 4 = 5520 · 24 = 132480
  expectNear(s.bytes, 132480);
  // 16×(8+1) state per head: 144 · 6 · 4 = 3456
  expectNear(s.peakBytes, 3456);
  // A chunk is ignored without a causal mask.
  Strategy withChunk = estimateKvFirst(
      crossShape(Score::Kernel, FeatureMap::Elu1), cpuTarget(), 32);
  EXPECT_FALSE(withChunk.chunk.has_value());
  expectNear(withChunk.flops, 588480);
}

TEST(KvFirst, Relu) {
  // N = M = 10, D = 8, E = 4, one head. features 20 · 8 = 160.
  TermShape shape = kernelShape(FeatureMap::Relu, 10, 10, 8, 4);
  // qk: 100 · (16 + 8 + 1) + 10·4 + 160 = 2500 + 40 + 160 = 2700
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 2700);
  // kv: state 2·10·8·4 + 10·8 = 720; query 640 + 160 + 40 = 840;
  // + 160 = 1720
  expectNear(estimateKvFirst(shape, cpuTarget(), std::nullopt).flops, 1720);
}

TEST(KvFirst, CausalChunked) {
  // elu1, N = M = 100, D = E = 8, one head, chunk 32.
  TermShape shape = kernelShape(FeatureMap::Elu1, 100, 100, 8, 8);
  shape.mask = MaskKind::Causal;
  Strategy s = estimateKvFirst(shape, cpuTarget(), 32);
  ASSERT_TRUE(s.chunk.has_value());
  EXPECT_EQ(*s.chunk, 32);
  // intra pairs = block_causal(32) over 100: 3 · 32·33/2 + 4·5/2 = 1584 + 10
  //   = 1594, times (2·8 + 2·8 + 1 = 33) = 52602
  // state 2·100·8·8 + 100·8 = 13600; query 12800 + 1600 + 800 = 15200
  // features 200 · 8·9 = 14400
  // total 52602 + 13600 + 15200 + 14400 = 95802
  expectNear(s.flops, 95802);
  // (100·8 + 100·16 + 100·8) · 4 = 12800
  expectNear(s.bytes, 12800);
  // state 8·9 = 72 plus one 32×32 block: (72 + 1024) · 4 = 4384
  expectNear(s.peakBytes, 4384);
  EXPECT_NE(s.description.find("causal chunks of 32"), std::string::npos)
      << s.description;

  // Time on the simple target (peak 1e6, bandwidth 1e5, launch 1e-3):
  // state contractions at 0.5 · 32/(32 + 32) = 0.25 of peak:
  //   (13600 + 15200) / 250000 = 0.1152
  // intra at 0.25: 52602 / 250000 = 0.210408
  // features at 0.25: 14400 / 250000 = 0.0576
  // compute 0.383208 > memory 12800 / 1e5 = 0.128; two launches: 0.385208
  expectNear(estimateKvFirst(shape, simpleTarget(), 32).seconds, 0.385208);
  // chunk_overhead: ⌈100/32⌉ = 4 chunks of one head, 0.01 s each.
  Target perChunk = simpleTarget();
  perChunk.chunkOverhead = 0.01;
  expectNear(estimateKvFirst(shape, perChunk, 32).seconds, 0.425208);

  // The default chunk is the key tile (64): intra pairs
  //   64·65/2 + 36·37/2 = 2080 + 666 = 2746 → 2746 · 33 = 90618
  //   total 90618 + 13600 + 15200 + 14400 = 133818
  Strategy byDefault = estimateKvFirst(shape, cpuTarget(), std::nullopt);
  ASSERT_TRUE(byDefault.chunk.has_value());
  EXPECT_EQ(*byDefault.chunk, 64);
  expectNear(byDefault.flops, 133818);
}

TEST(KvFirst, BlockCausalChunkCappedByBlock) {
  // kernel identity, block_causal(4), N = M = 10, D = E = 2: the chunk is at
  // most the mask block, so chunk 64 → 4.
  TermShape shape = kernelShape(FeatureMap::Identity, 10, 10, 2, 2);
  shape.mask = MaskKind::BlockCausal;
  shape.maskBlock = 4;
  Strategy kv = estimateKvFirst(shape, cpuTarget(), 64);
  ASSERT_TRUE(kv.chunk.has_value());
  EXPECT_EQ(*kv.chunk, 4);
  // intra 23 pairs · (4 + 4 + 1) = 207; state 2·10·2·2 + 10·2 = 100;
  // query 80 + 40 + 20 = 140: 447
  expectNear(kv.flops, 447);
  // qk: 23 · 9 + 10·2 = 227
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 227);
}

TEST(KvFirst, BlockAndPriorBlocks) {
  // kernel identity, N = M = 10, D = E = 2, block(4) / prior_blocks(4).
  TermShape shape = kernelShape(FeatureMap::Identity, 10, 10, 2, 2);
  shape.mask = MaskKind::Block;
  shape.maskBlock = 4;
  // qk: 36 pairs · 9 + 20 = 344
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 344);
  Strategy kv = estimateKvFirst(shape, cpuTarget(), std::nullopt);
  // Same totals as plain kv-first: 100 + 140 = 240; chunk = the block.
  expectNear(kv.flops, 240);
  ASSERT_TRUE(kv.chunk.has_value());
  EXPECT_EQ(*kv.chunk, 4);

  shape.mask = MaskKind::PriorBlocks;
  // qk: 32 pairs · 9 + 20 = 308
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 308);
  kv = estimateKvFirst(shape, cpuTarget(), std::nullopt);
  expectNear(kv.flops, 240);
  EXPECT_NE(kv.description.find("running"), std::string::npos)
      << kv.description;
}

TEST(FavorPlus, WidthIsM) {
  // m = 32 ≠ D = 8, E = 4, N = M = 10, one head, CPU (exp 8).
  TermShape shape = kernelShape(FeatureMap::FavorPlus, 10, 10, 8, 4);
  shape.numFeatures = 32;
  // features 20 rows · (2·32·8 + 2·8 + 32·10 = 848) = 16960
  // qk: 100 pairs · (2·32 + 2·4 + 1 = 73) + 10·4 + 16960 = 7300 + 40 + 16960
  //   = 24300
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 24300);
  // kv: state 2·10·32·4 + 10·32 = 2880; query 2560 + 640 + 40 = 3240;
  //   + 16960 = 23080
  Strategy kv = estimateKvFirst(shape, cpuTarget(), std::nullopt);
  expectNear(kv.flops, 23080);
  // Bytes read the raw D-wide q and k: (80 + 10·12 + 40) · 4 = 960.
  expectNear(kv.bytes, 960);
  // The state is m × (E+1): 32 · 5 · 4 = 640.
  expectNear(kv.peakBytes, 640);
}

TEST(CosFormer, DoubledWidth) {
  // D = 8 → width 16, E = 4, N = M = 10, one head, CPU.
  TermShape shape = kernelShape(FeatureMap::CosFormer, 10, 10, 8, 4);
  // features 20 · (3·8 + 2·8) = 800
  // qk: 100 · (32 + 8 + 1) + 40 + 800 = 4940
  expectNear(estimateQkFirst(shape, cpuTarget()).flops, 4940);
  // kv: state 2·10·16·4 + 160 = 1440; query 1280 + 320 + 40 = 1640; + 800
  //   = 3880
  expectNear(estimateKvFirst(shape, cpuTarget(), std::nullopt).flops, 3880);
}

TEST(Linformer, ProjectionFlopsAndBytes) {
  // softmax, B = 1, H = 2, N = M = 100, D = E = 8, projected to k = 16.
  TermShape shape;
  shape.score = Score::Softmax;
  shape.heads = 2;
  shape.queries = 100;
  shape.keys = 100;
  shape.featureDim = 8;
  shape.valueDim = 8;
  shape.projectedLength = 16;
  // The mask is ignored under a projection (it is a verifier error anyway).
  shape.mask = MaskKind::Causal;
  Strategy qk = estimateQkFirst(shape, cpuTarget());
  // pairs 100·16 = 1600 · (16 + 16 + 10 = 42) · 2 = 134400
  // rescale 100 · ⌈16/64⌉ = 1 · 16 · 2 = 3200; divide 100 · 8 · 2 = 1600
  // projection 2 · 16 · 100 · (8 + 8) · 2 = 102400
  // total 134400 + 3200 + 1600 + 102400 = 241600
  expectNear(qk.flops, 241600);
  // attention bytes (100·8 + 2 tiles · 16·16 + 100·8) · 2 · 4 = 2112 · 8
  //   = 16896; projection bytes ((100 + 16)·16·2 + 2·16·100) · 4
  //   = (3712 + 3200) · 4 = 27648: 44544
  expectNear(qk.bytes, 44544);

  // elu1 kv-first with a projection: keys = k = 16, one head.
  TermShape kernel = kernelShape(FeatureMap::Elu1, 100, 100, 8, 8);
  kernel.projectedLength = 16;
  kernel.mask = MaskKind::Causal; // not chunked under a projection
  Strategy kv = estimateKvFirst(kernel, cpuTarget(), 32);
  EXPECT_FALSE(kv.chunk.has_value());
  // state 2·16·8·8 + 16·8 = 2176; query 12800 + 1600 + 800 = 15200;
  // features (100 + 16) · 72 = 8352; projection 2·16·100·16 = 51200
  // total 2176 + 15200 + 8352 + 51200 = 76928
  expectNear(kv.flops, 76928);
  // bytes (100·8 + 16·16 + 100·8) · 4 = 7424; projection
  //   (116·16 + 3200) · 4 = (1856 + 3200) · 4 = 20224: 27648
  expectNear(kv.bytes, 27648);
}

//===----------------------------------------------------------------------===//
// Time on a target
//===----------------------------------------------------------------------===//

TEST(Time, RooflinePlusLaunches) {
  Target t = simpleTarget();
  // elu1, N = M = 10, D = E = 4, one head.
  TermShape shape = kernelShape(FeatureMap::Elu1, 10, 10, 4, 4);
  // qk: pairs 100 · (8 + 8 + 1) = 1700, divide 40 → 1740 at 0.5·1e6:
  //   0.00348; features 20 · 4·9 = 720 at 0.25·1e6: 0.00288; compute
  //   0.00636. Bytes (40 + 1 tile · 10·8 + 40) · 4 = 640 → 640/1e5 = 0.0064.
  // Memory-bound: 0.0064 + 1 launch 0.001 = 0.0074
  Strategy qk = estimateQkFirst(shape, t);
  expectNear(qk.flops, 2460);
  expectNear(qk.bytes, 640);
  expectNear(qk.seconds, 0.0074);
  // kv: state 2·10·16 + 40 = 360; query 320 + 80 + 40 = 440 → 800 at 0.5e6:
  //   0.0016; features 0.00288; compute 0.00448 < memory 0.0064;
  //   two launches: 0.0084
  Strategy kv = estimateKvFirst(shape, t, std::nullopt);
  expectNear(kv.seconds, 0.0084);

  // With a fast memory, compute-bound: qk 0.00636 + 0.001 = 0.00736,
  // kv 0.00448 + 0.002 = 0.00648.
  t.memoryBandwidth = 1e9;
  expectNear(estimateQkFirst(shape, t).seconds, 0.00736);
  expectNear(estimateKvFirst(shape, t, std::nullopt).seconds, 0.00648);

  // A projection adds one launch to each order and runs at kv efficiency:
  // softmax, N = M = 10, D = E = 4, k = 2: pairs 20 · (8 + 8 + 10) = 520,
  // rescale 10·1·8 = 80, divide 40 → 640 at 0.5e6 = 0.00128; projection
  // 2·2·10·8 = 320 at 0.5e6 = 0.00064; 0.00192 + 2 launches = 0.00392.
  TermShape lin;
  lin.score = Score::Softmax;
  lin.queries = 10;
  lin.keys = 10;
  lin.featureDim = 4;
  lin.valueDim = 4;
  lin.projectedLength = 2;
  expectNear(estimateQkFirst(lin, t).seconds, 0.00392);
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

TEST(Targets, BuiltIn) {
  Target cpu = cpuTarget();
  EXPECT_EQ(cpu.name, "cpu");
  EXPECT_EQ(cpu.peakFlops, 210e9);
  EXPECT_EQ(cpu.memoryBandwidth, 31e9);
  Target gpu = nvptxTarget();
  EXPECT_EQ(gpu.name, "nvptx");
  EXPECT_EQ(gpu.peakFlops, 67e12);
  EXPECT_EQ(gpu.memoryBandwidth, 4.3e12);
  EXPECT_EQ(gpu.queryTile, 128);
  EXPECT_STREQ(toString(Order::QkFirst), "qk_first");
  EXPECT_STREQ(toString(Order::KvFirst), "kv_first");
}

TEST(Targets, KeyValueLines) {
  Target t = cpuTarget();
  std::string error = parseTarget("# calibrated\n"
                                  "peak_flops = 1e12   # measured\n"
                                  "\n"
                                  "  memory_bandwidth=2.5e11\n"
                                  "cores = 8\n"
                                  "qk_efficiency = 1\n"
                                  "key_tile = 128\n"
                                  "launch_overhead = 3e-6\n"
                                  "name = mybox\n",
                                  t);
  EXPECT_EQ(error, "");
  EXPECT_EQ(t.peakFlops, 1e12);
  EXPECT_EQ(t.memoryBandwidth, 2.5e11);
  EXPECT_EQ(t.cores, 8);
  EXPECT_EQ(t.qkEfficiency, 1.0);
  EXPECT_EQ(t.keyTile, 128);
  EXPECT_EQ(t.launchOverhead, 3e-6);
  EXPECT_EQ(t.name, "mybox");
  // Untouched fields keep the CPU defaults.
  EXPECT_EQ(t.kvEfficiency, 0.7);
  EXPECT_EQ(t.queryTile, 64);
}

TEST(Targets, BaseNvptx) {
  Target t = cpuTarget();
  EXPECT_EQ(parseTarget("base = nvptx\nkv_efficiency = 0.6\n", t), "");
  EXPECT_EQ(t.name, "nvptx");
  EXPECT_EQ(t.peakFlops, 67e12);
  EXPECT_EQ(t.expFlops, 4);
  EXPECT_EQ(t.kvEfficiency, 0.6);
}

TEST(Targets, Json) {
  Target t = cpuTarget();
  EXPECT_EQ(parseTarget("{\n  \"base\": \"nvptx\",\n  \"peak_flops\": 1.5e13,"
                        " \"query_tile\": 32 }\n",
                        t),
            "");
  EXPECT_EQ(t.name, "nvptx");
  EXPECT_EQ(t.peakFlops, 1.5e13);
  EXPECT_EQ(t.queryTile, 32);
  EXPECT_EQ(t.memoryBandwidth, 4.3e12);
}

TEST(Targets, Errors) {
  Target t = cpuTarget();
  EXPECT_EQ(parseTarget("peak_flops = 1e12\nbogus_key = 3\n", t),
            "line 2: unknown target key 'bogus_key'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("peak_flops = fast\n", t),
            "line 1: 'peak_flops' needs a positive number, got 'fast'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("memory_bandwidth = -3\n", t),
            "line 1: 'memory_bandwidth' needs a positive number, got '-3'");
  // `base` applies first wherever it stands, so later keys are kept.
  t = cpuTarget();
  EXPECT_EQ(parseTarget("{\"peak_flops\": 1e13, \"base\": \"nvptx\"}", t), "");
  EXPECT_EQ(t.peakFlops, 1e13);
  EXPECT_EQ(t.memoryBandwidth, 4.3e12);
  t = cpuTarget();
  EXPECT_EQ(parseTarget("launch_overhead = 0\n", t), "");
  EXPECT_EQ(t.launchOverhead, 0.0);
  t = cpuTarget();
  EXPECT_EQ(parseTarget("cores = 1e30\n", t),
            "line 1: 'cores' needs an integer up to 2^30, got '1e30'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("cores = 2.5\n", t),
            "line 1: 'cores' needs an integer up to 2^30, got '2.5'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("# header\npeak_flops 12\n", t),
            "line 2: expected 'key = value', got 'peak_flops 12'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("base = tpu\n", t),
            "line 1: unknown base target 'tpu'; expected cpu or nvptx");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("kv_efficiency = 1.5\n", t),
            "line 1: 'kv_efficiency' is a fraction of the peak and must be "
            "at most 1, got '1.5'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("{\"feature_efficiency\": 2}", t),
            "'feature_efficiency' is a fraction of the peak and must be at "
            "most 1, got '2'");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("version = 0\n", t),
            "line 1: target file version '0' is not the version this attn "
            "reads (" +
                std::to_string(kTargetFormatVersion) +
                "): the file is stale; run `attnc calibrate` again");
  t = cpuTarget();
  EXPECT_EQ(parseTarget("{\"nope\": 2}", t), "unknown target key 'nope'");
}

TEST(Targets, LoadFile) {
  std::string path = ::testing::TempDir() + "attn-cost-target.txt";
  {
    std::ofstream file(path);
    file << "base = cpu\npeak_flops = 4e11\n";
  }
  Target t = nvptxTarget();
  EXPECT_EQ(loadTarget(path, t), "");
  EXPECT_EQ(t.name, "cpu");
  EXPECT_EQ(t.peakFlops, 4e11);
  {
    std::ofstream file(path);
    file << "peak_flops = 4e11\nwhat = 1\n";
  }
  EXPECT_EQ(loadTarget(path, t), "target file '" + path +
                                     "': line 2: unknown target key 'what'");
  std::remove(path.c_str());
  EXPECT_EQ(loadTarget("/nonexistent/attn.target", t),
            "cannot read target file '/nonexistent/attn.target'");
}

//===----------------------------------------------------------------------===//
// Crossover, chunk, decision
//===----------------------------------------------------------------------===//

/// B = 1, H = 8, N = M, D = E = 64: the shape of examples/linear_elu1.attn.
TermShape selfAttention(FeatureMap map, int64_t n, int64_t features = 0) {
  TermShape shape = kernelShape(map, n, n, 64, 64, 1, 8);
  shape.numFeatures = features;
  return shape;
}

bool kvWinsAt(TermShape shape, const Target &target, int64_t n) {
  shape.queries = n;
  shape.keys = n;
  std::optional<int64_t> chunk;
  if (shape.isCausal())
    chunk = bestChunk(shape, target);
  return estimateKvFirst(shape, target, chunk).seconds <
         estimateQkFirst(shape, target).seconds;
}

void expectCrossover(const TermShape &shape, const Target &target,
                     int64_t crossover) {
  ASSERT_GT(crossover, 1);
  EXPECT_FALSE(kvWinsAt(shape, target, crossover - 1));
  EXPECT_TRUE(kvWinsAt(shape, target, crossover));
  // And it stays won well past it.
  EXPECT_TRUE(kvWinsAt(shape, target, 4 * crossover));
  EXPECT_TRUE(kvWinsAt(shape, target, 64 * crossover));
}

TEST(Crossover, Elu1IsSmall) {
  for (Target target : {cpuTarget(), nvptxTarget()}) {
    TermShape shape = selfAttention(FeatureMap::Elu1, 1);
    std::optional<int64_t> crossover = crossoverLength(shape, target, true);
    ASSERT_TRUE(crossover.has_value()) << target.name;
    EXPECT_LT(*crossover, target.name == "cpu" ? 256 : 1024) << target.name;
    expectCrossover(shape, target, *crossover);
  }
}

TEST(Crossover, CausalAndCosFormerAndFavor) {
  Target cpu = cpuTarget();
  TermShape causal = selfAttention(FeatureMap::Elu1, 1);
  causal.mask = MaskKind::Causal;
  std::optional<int64_t> crossover = crossoverLength(causal, cpu, true);
  ASSERT_TRUE(crossover.has_value());
  expectCrossover(causal, cpu, *crossover);
  // Causal qk-first does half the pairs: its crossover is later.
  EXPECT_GT(*crossover,
            *crossoverLength(selfAttention(FeatureMap::Elu1, 1), cpu, true));

  TermShape cos = selfAttention(FeatureMap::CosFormer, 1);
  crossover = crossoverLength(cos, cpu, true);
  ASSERT_TRUE(crossover.has_value());
  expectCrossover(cos, cpu, *crossover);
}

// switchLength on ratios kv-first / other made up to have one crossing or
// the alternations padded tiles make.
TEST(Crossover, SwitchAtTheOneCrossing) {
  auto at = [](int64_t from) {
    return [from](int64_t n) { return n < from ? 1.2 : 0.8; };
  };
  EXPECT_EQ(switchLength(at(100)), 100);
  EXPECT_EQ(switchLength(at(65)), 65);
  // Beyond 128 evenly spaced samples an octave: the crossing is bisected.
  EXPECT_EQ(switchLength(at(3000001)), 3000001);
  EXPECT_EQ(switchLength(at(1)), 1);
  EXPECT_FALSE(switchLength([](int64_t) { return 1.5; }).has_value());
}

TEST(Crossover, SwitchLosesTheLeastWhereOrdersAlternate) {
  // kv-first wins from 129 but for a few percent at 192 (whole tiles of
  // the other order): a switch at 193 would lose 15% at every N between.
  EXPECT_EQ(switchLength([](int64_t n) {
              return n <= 128 ? 1.2 : n == 192 ? 1.04 : 0.85;
            }),
            129);
  // It wins from 52 on but loses at 64, the last power of two where it
  // loses: the switch goes below it.
  EXPECT_EQ(switchLength([](int64_t n) {
              return n == 64 ? 1.02 : n >= 52 ? 0.9 : 1.1;
            }),
            52);
  // A long stretch of large wins (65-112) before a short one of small
  // losses (113-128): switching at 65 loses the least.
  EXPECT_EQ(switchLength([](int64_t n) {
              return n <= 64 ? 1.3 : n <= 112 ? 0.7 : n <= 128 ? 1.05 : 0.7;
            }),
            65);
  // The other way round, losses outweigh: the switch waits for 129.
  EXPECT_EQ(switchLength([](int64_t n) {
              return n <= 64 ? 1.3 : n <= 70 ? 0.98 : n <= 128 ? 1.3 : 0.7;
            }),
            129);
  // An infinite time (a shape a strategy cannot run) is the largest loss.
  EXPECT_EQ(switchLength([](int64_t n) {
              return n <= 64 ? INFINITY : n <= 100 ? 0.0 : 0.5;
            }),
            65);
}

TEST(Crossover, MonotoneInWidth) {
  Target cpu = cpuTarget();
  int64_t elu1 = *crossoverLength(selfAttention(FeatureMap::Elu1, 1), cpu,
                                  true);
  std::optional<int64_t> favor256 =
      crossoverLength(selfAttention(FeatureMap::FavorPlus, 1, 256), cpu, true);
  ASSERT_TRUE(favor256.has_value());
  EXPECT_GT(*favor256, elu1);
  expectCrossover(selfAttention(FeatureMap::FavorPlus, 1, 256), cpu,
                  *favor256);
  // Wider feature maps move the crossover out (never in).
  int64_t previous = 0;
  for (int64_t m : {16, 64, 256, 1024, 4096}) {
    std::optional<int64_t> crossover =
        crossoverLength(selfAttention(FeatureMap::FavorPlus, 1, m), cpu, true);
    ASSERT_TRUE(crossover.has_value()) << "m " << m;
    EXPECT_GE(*crossover, previous) << "m " << m;
    previous = *crossover;
  }
  // As m grows the feature maps cancel (both orders apply them) and the
  // crossover tends to where N pairs of 2m FLOPs at qk_efficiency cost as
  // much as the 2·2mE of the state and query passes at kv_efficiency:
  // N = 2E · 0.5/0.7 = 128 · 0.714 = 91.4. So it grows with m but stays
  // below ~100 on the CPU target.
  EXPECT_GT(previous, *favor256);
  EXPECT_LT(previous, 100);
}

TEST(Crossover, NeverForSoftmaxOrFewKeys) {
  Target cpu = cpuTarget();
  TermShape softmax = selfAttention(FeatureMap::None, 1);
  softmax.score = Score::Softmax;
  EXPECT_FALSE(crossoverLength(softmax, cpu, true).has_value());
  softmax.score = Score::Relu2;
  EXPECT_FALSE(crossoverLength(softmax, cpu, true).has_value());
  // Cross attention over M = 16 fixed keys: per query, qk-first costs
  // 16·(2·64 + 2·64 + 1) = 4112 FLOPs and kv-first's query pass alone
  // 2·64·64 + 2·64 + 64 = 8384, so kv-first never wins as N grows.
  TermShape cross = kernelShape(FeatureMap::Elu1, 1, 16, 64, 64, 1, 8);
  EXPECT_FALSE(crossoverLength(cross, cpu, false).has_value());
  // With the keys following N it does.
  EXPECT_TRUE(crossoverLength(cross, cpu, true).has_value());
}

TEST(BestChunk, PowerOfTwoInRange) {
  for (Target target : {cpuTarget(), nvptxTarget(), simpleTarget()})
    for (FeatureMap map : {FeatureMap::Elu1, FeatureMap::Relu,
                           FeatureMap::FavorPlus, FeatureMap::CosFormer})
      for (int64_t n : {16, 17, 40, 64, 100, 512, 1000, 4096, 65536}) {
        TermShape shape = selfAttention(map, n, 256);
        shape.mask = MaskKind::Causal;
        int64_t c = bestChunk(shape, target);
        EXPECT_TRUE(isPowerOfTwo(c)) << c;
        EXPECT_GE(c, 16);
        EXPECT_LE(c, 1024);
        EXPECT_LE(c, n) << "n " << n;
      }
  // N = 16 leaves only chunk 16.
  TermShape shape = selfAttention(FeatureMap::Elu1, 16);
  shape.mask = MaskKind::Causal;
  EXPECT_EQ(bestChunk(shape, cpuTarget()), 16);
}

TEST(BestChunk, IsTheFastest) {
  TermShape shape = selfAttention(FeatureMap::Elu1, 8192);
  shape.mask = MaskKind::Causal;
  Target cpu = cpuTarget();
  // State contractions at half speed for chunks of 32 (the built-in 4 makes
  // the smallest chunk the fastest for D = 64, as measured).
  cpu.chunkHalfEfficiency = 32;
  int64_t best = bestChunk(shape, cpu);
  double bestSeconds = estimateKvFirst(shape, cpu, best).seconds;
  for (int64_t c = 16; c <= 1024; c *= 2)
    EXPECT_LE(bestSeconds, estimateKvFirst(shape, cpu, c).seconds) << c;
  // An interior optimum: neither the smallest nor the largest chunk.
  EXPECT_GT(best, 16);
  EXPECT_LT(best, 1024);
}

TEST(AnalyzeTerm, Elu1LongAndShort) {
  Target cpu = cpuTarget();
  TermCost lengthy = analyzeTerm(selfAttention(FeatureMap::Elu1, 8192), cpu);
  ASSERT_EQ(lengthy.strategies.size(), 2u);
  EXPECT_EQ(lengthy.strategies[0].order, Order::QkFirst);
  EXPECT_EQ(lengthy.strategies[1].order, Order::KvFirst);
  EXPECT_EQ(lengthy.chosen.order, Order::KvFirst);
  ASSERT_TRUE(lengthy.crossoverN.has_value());
  EXPECT_LT(*lengthy.crossoverN, 8192);
  EXPECT_NE(lengthy.reason.find("kv-first beats qk-first from N = " +
                                std::to_string(*lengthy.crossoverN)),
            std::string::npos)
      << lengthy.reason;
  EXPECT_NE(lengthy.reason.find("above"), std::string::npos);

  TermCost shortish = analyzeTerm(selfAttention(FeatureMap::Elu1, 32), cpu);
  ASSERT_EQ(shortish.strategies.size(), 2u);
  EXPECT_EQ(shortish.chosen.order, Order::QkFirst);
  ASSERT_TRUE(shortish.chosen.chunk.has_value());
  EXPECT_EQ(*shortish.chosen.chunk, 64);
  EXPECT_EQ(shortish.crossoverN, lengthy.crossoverN);
  EXPECT_NE(shortish.reason.find("below"), std::string::npos);

  // Causal: the kv-first strategy carries its best chunk.
  TermShape causal = selfAttention(FeatureMap::Elu1, 8192);
  causal.mask = MaskKind::Causal;
  TermCost decision = analyzeTerm(causal, cpu);
  EXPECT_EQ(decision.chosen.order, Order::KvFirst);
  ASSERT_TRUE(decision.chosen.chunk.has_value());
  EXPECT_EQ(*decision.chosen.chunk, bestChunk(causal, cpu));
}

TEST(AnalyzeTerm, NoProductForm) {
  for (Score score : {Score::Softmax, Score::Relu2})
    for (int64_t n : {1, 32, 8192, 1 << 20}) {
      TermShape shape = selfAttention(FeatureMap::None, n);
      shape.score = score;
      TermCost decision = analyzeTerm(shape, cpuTarget());
      ASSERT_EQ(decision.strategies.size(), 1u);
      EXPECT_EQ(decision.chosen.order, Order::QkFirst);
      EXPECT_FALSE(decision.crossoverN.has_value());
      EXPECT_NE(decision.reason.find("no product form"), std::string::npos)
          << decision.reason;
    }
}

//===----------------------------------------------------------------------===//
// The seed analysis's layer view
//===----------------------------------------------------------------------===//

TEST(LayerView, SaturatesInsteadOfOverflowing) {
  const int64_t most = std::numeric_limits<int64_t>::max();
  LayerView view = layerView(most, most);
  EXPECT_EQ(view.attentionExceedsFfnN, most);
  EXPECT_EQ(view.quadraticDominatesN, most);
  EXPECT_EQ(view.linearBeatsSoftmaxN, most);
  EXPECT_EQ(saturatingMul(most / 2, 2), most - 1);
  EXPECT_EQ(saturatingMul(most / 2 + 1, 2), most);
  EXPECT_EQ(saturatingMul(0, most), 0);
}

//===----------------------------------------------------------------------===//
// Calibration: the fit and the file
//===----------------------------------------------------------------------===//

/// Work of one family: qk-first loops, or kv-first (chunked when chunk > 0).
Work qkWork(double flops, bool exp, bool masked) {
  Work work;
  work.qkFlops = flops;
  work.qkExp = exp;
  work.qkMasked = masked;
  work.qkCutFlops = masked ? flops : 0;
  work.launches = 1;
  return work;
}

Work kvWork(double state, double chunk, double intra, double features) {
  Work work;
  work.stateFlops = state;
  work.chunk = chunk;
  work.intraFlops = intra;
  work.featureFlops = features;
  work.launches = 2;
  return work;
}

TEST(Fit, RecoversTheRatesThatMadeTheTimes) {
  // A machine of 100 GFLOP/s whose families run at known fractions of it;
  // the times are written out from those numbers, not from the model.
  const double peak = 1e11, launch = 5e-6;
  const double qkSoftmax = 0.3, qkSoftmaxMasked = 0.2, qkKernel = 0.4,
               qkKernelMasked = 0.25, kv = 0.6, half = 48, intra = 0.15,
               feature = 0.1, perChunk = 2e-7, perRow = 3e-10, widthHalf = 40;
  std::vector<Measurement> samples;
  for (double flops : {1e6, 1e8, 3e9}) {
    samples.push_back({qkWork(flops, true, false),
                       flops / (peak * qkSoftmax) + launch});
    samples.push_back({qkWork(flops, true, true),
                       flops / (peak * qkSoftmaxMasked) + launch});
    samples.push_back({qkWork(flops, false, false),
                       flops / (peak * qkKernel) + launch});
    // The same loops with output rows of their own cost (qk_row_cost): a
    // count that does not follow the FLOPs.
    Work rows = qkWork(flops, false, false);
    rows.qkRowElements = 4096 + flops / 1e4;
    samples.push_back({rows, flops / (peak * qkKernel) +
                                 rows.qkRowElements * perRow + launch});
    samples.push_back({qkWork(flops, false, true),
                       flops / (peak * qkKernelMasked) + launch});
    // A causal term whose diagonal tiles are a quarter of its FLOPs: they
    // run at the masked rate, the rest at the unmasked one.
    Work causal = qkWork(flops, true, true);
    causal.qkCutFlops = flops / 4;
    samples.push_back({causal, flops / 4 / (peak * qkSoftmaxMasked) +
                                   3 * flops / 4 / (peak * qkSoftmax) +
                                   launch});
    // Plain kv-first with a feature map of a tenth of its FLOPs.
    samples.push_back({kvWork(flops, 0, 0, flops / 10),
                       flops / (peak * kv) + flops / 10 / (peak * feature) +
                           2 * launch});
    // The same with states 64 and 128 wide, which run at
    // kv / (1 + widthHalf / w).
    for (double width : {64.0, 128.0}) {
      Work wide = kvWork(flops, 0, 0, 0);
      wide.stateWidth = width;
      samples.push_back(
          {wide, flops * (1 + widthHalf / width) / (peak * kv) + 2 * launch});
    }
    for (double chunk : {16.0, 64.0, 256.0}) {
      // The state runs at kv·c/(c + half); the intra-chunk part is c/64 of
      // the state's FLOPs.
      // Each chunk costs perChunk besides (a count that does not follow
      // the FLOPs: a loop step, not the state's size).
      double intraFlops = flops * chunk / 64;
      Work work = kvWork(flops, chunk, intraFlops, 0);
      work.chunks = 8192 / chunk;
      samples.push_back({work, flops / (peak * kv * chunk / (chunk + half)) +
                                   intraFlops / (peak * intra) +
                                   work.chunks * perChunk + 2 * launch});
    }
  }
  Target target = cpuTarget();
  target.peakFlops = peak;
  target.expFlops = 3; // not fitted: must stay
  fitTarget(samples, target);
  EXPECT_NEAR(target.qkEfficiency, qkSoftmax, 1e-3);
  EXPECT_NEAR(target.qkMaskedEfficiency, qkSoftmaxMasked, 1e-3);
  EXPECT_NEAR(target.qkKernelEfficiency, qkKernel, 1e-3);
  EXPECT_NEAR(target.qkKernelMaskedEfficiency, qkKernelMasked, 1e-3);
  EXPECT_NEAR(target.kvEfficiency, kv, 1e-3);
  EXPECT_NEAR(target.chunkHalfEfficiency, half, 0.1);
  EXPECT_NEAR(target.chunkOverhead, perChunk, 1e-10);
  EXPECT_NEAR(target.qkRowCost, perRow, 1e-13);
  EXPECT_NEAR(target.kvWidthHalfEfficiency, widthHalf, 0.1);
  EXPECT_NEAR(target.chunkedEfficiency, intra, 1e-3);
  EXPECT_NEAR(target.featureEfficiency, feature, 1e-3);
  // Fixed costs are fitted per call of each kind: 1 launch for qk-first,
  // 2 for kv-first.
  EXPECT_EQ(target.launchOverhead, 0);
  EXPECT_NEAR(target.qkCallOverhead, launch, 1e-8);
  EXPECT_NEAR(target.qkMaskedCallOverhead, launch, 1e-8);
  EXPECT_NEAR(target.kvCallOverhead, 2 * launch, 1e-8);
  EXPECT_NEAR(target.chunkedCallOverhead, 2 * launch, 1e-8);
  for (int i : {0, 2, 4}) // 16, 64, 256: the formula fits them exactly
    EXPECT_NEAR(target.chunkScale[i], 1.0, 1e-3);
  EXPECT_EQ(target.expFlops, 3);
  EXPECT_EQ(target.peakFlops, peak);
}

TEST(Fit, PerHeadOverheadsAndChunkScales) {
  // Fixed costs: 2 us per call and launch, plus 10 us per head for
  // qk-first, 4 us for chunked kv-first; chunk 32 runs at 0.8x the chunk
  // formula's time and chunk 64 at 1.5x (its code is slower).
  const double peak = 1e11, launch = 2e-6, qkHead = 1e-5, chunkedHead = 4e-6;
  const double qk = 0.5, kv = 0.5, half = 32, intra = 0.25;
  std::vector<Measurement> samples;
  for (double heads : {1.0, 8.0}) {
    for (double flops : {1e5, 1e7, 1e9}) {
      Work q = qkWork(flops, false, false);
      q.heads = heads;
      samples.push_back({q, flops / (peak * qk) + launch + heads * qkHead});
      for (double chunk : {16.0, 32.0, 64.0}) {
        double scale = chunk == 32 ? 0.8 : chunk == 64 ? 1.5 : 1.0;
        Work c = kvWork(flops, chunk, flops * chunk / 64, 0);
        c.heads = heads;
        double compute = flops / (peak * kv * chunk / (chunk + half)) +
                         flops * chunk / 64 / (peak * intra);
        samples.push_back(
            {c, scale * compute + 2 * launch + heads * chunkedHead});
      }
    }
  }
  Target target = cpuTarget();
  target.peakFlops = peak;
  fitTarget(samples, target);
  EXPECT_NEAR(target.qkHeadOverhead, qkHead, 2e-7);
  EXPECT_NEAR(target.chunkedHeadOverhead, chunkedHead, 2e-7);
  EXPECT_NEAR(target.qkCallOverhead, launch, 2e-7);
  EXPECT_NEAR(target.chunkedCallOverhead, 2 * launch, 4e-7);
  // Never measured: kv-first keeps its 2 launches of the built-in 2 us.
  EXPECT_EQ(target.kvHeadOverhead, 0);
  EXPECT_NEAR(target.kvCallOverhead, 2 * cpuTarget().launchOverhead, 1e-12);
  // The scales and the chunk formula share the chunk dependence (three
  // chunks, more parameters), so only the predictions are pinned: every
  // sample within 3%, where the formula alone cannot bend to 0.8x and 1.5x.
  EXPECT_GT(target.chunkScale[0], 0);
  EXPECT_GT(target.chunkScale[2], 0);
  EXPECT_LT(target.chunkScale[3], 0); // 128 not measured
  for (const Measurement &sample : samples)
    EXPECT_NEAR(predictSeconds(sample.work, target) / sample.seconds, 1.0,
                0.03);
}

TEST(Fit, FamiliesWithoutSamplesKeepTheirNumbers) {
  Target target = cpuTarget();
  std::vector<Measurement> samples = {
      {qkWork(1e9, true, false), 1e9 / (target.peakFlops * 0.25)},
      {qkWork(1e7, true, false), 1e7 / (target.peakFlops * 0.25)}};
  fitTarget(samples, target);
  EXPECT_NEAR(target.qkEfficiency, 0.25, 1e-3);
  EXPECT_EQ(target.kvEfficiency, cpuTarget().kvEfficiency);
  EXPECT_EQ(target.qkKernelEfficiency, -1); // still "as qk_efficiency"
  EXPECT_EQ(target.featureEfficiency, cpuTarget().featureEfficiency);
}

TEST(Targets, PrintParsesBack) {
  Target target = nvptxTarget();
  target.qkKernelMaskedEfficiency = 0.125;
  target.chunkScale[2] = 1.25;
  target.kvHeadOverhead = 3e-6;
  target.machine = "Some GPU; 132 SMs";
  target.calibrated = "2026-12-01";
  std::string text = printTarget(target, "first line\nsecond line");
  EXPECT_EQ(text.rfind("# first line\n# second line\nversion = " +
                           std::to_string(kTargetFormatVersion) +
                           "\nbase = nvptx\n",
                       0),
            0u)
      << text;
  Target back = cpuTarget();
  ASSERT_EQ(parseTarget(text, back), "");
  EXPECT_EQ(back.name, "nvptx");
  EXPECT_EQ(back.machine, "Some GPU; 132 SMs");
  EXPECT_EQ(back.calibrated, "2026-12-01");
  EXPECT_EQ(back.qkKernelMaskedEfficiency, 0.125);
  EXPECT_EQ(back.qkKernelEfficiency, -1); // unset stays unset
  EXPECT_EQ(back.chunkScale[2], 1.25);
  EXPECT_EQ(back.chunkScaleFor(64), 1.25);
  EXPECT_EQ(back.chunkScaleFor(128), 1.0);
  EXPECT_EQ(back.kvHeadOverhead, 3e-6);
  EXPECT_EQ(back.peakFlops, target.peakFlops);
  EXPECT_EQ(back.chunkHalfEfficiency, target.chunkHalfEfficiency);
  EXPECT_EQ(back.launchOverhead, target.launchOverhead);
}

TEST(QkFirst, WholeTilesCountPaddedAndDiagonalTiles) {
  // elu1, D = E = 64, one head: 2·64 + 2·64 + 1 = 257 FLOPs per pair.
  TermShape shape;
  shape.score = Score::Kernel;
  shape.featureMap = FeatureMap::Elu1;
  shape.queries = shape.keys = 16;
  shape.featureDim = shape.valueDim = 64;
  Target plain = cpuTarget(), tiles = cpuTarget();
  tiles.qkWholeTiles = 1;
  // A dynamic N = 16 pads to one 64×64 tile: 4096 pairs instead of 256; the
  // divide is N·E = 1024 either way.
  shape.staticQueries = shape.staticKeys = false;
  expectNear(estimateQkFirst(shape, plain).work.qkFlops, 256 * 257 + 1024);
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops, 4096 * 257 + 1024);
  // The FLOPs reported stay the useful ones.
  expectNear(estimateQkFirst(shape, tiles).flops,
             estimateQkFirst(shape, plain).flops);
  // A static one gets a 16×16 tile; 20 keys a 16×24 one (keys rounded up
  // to 8).
  shape.staticQueries = shape.staticKeys = true;
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops, 256 * 257 + 1024);
  shape.keys = 20;
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops, 16 * 24 * 257 + 1024);
  // N = M = 45: a 48×48 tile (rows from 8 on rounded up to 8 too).
  shape.queries = shape.keys = 45;
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops,
             48 * 48 * 257 + 45 * 64);
  // Causal N = 40 static: one 40×40 tile; N = 100: query tiles of 64 rows
  // see one key tile, then two: 3·4096 pairs.
  shape.mask = MaskKind::Causal;
  shape.queries = shape.keys = 40;
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops,
             40 * 40 * 257 + 40 * 64);
  Target wide = tiles;
  wide.queryTile = 32;
  shape.queries = shape.keys = 100;
  // 32-row tiles ending at rows 32, 64, 96, 100 see 1, 1, 2, 2 key tiles.
  expectNear(estimateQkFirst(shape, wide).work.qkFlops,
             6 * 32 * 64 * 257.0 + 100 * 64);
  shape.mask = MaskKind::None;
  // Causal N = 128: 2 tiles a side, 3 on or below the diagonal: 3·4096
  // pairs against 128·129/2 = 8256.
  shape.queries = shape.keys = 128;
  shape.mask = MaskKind::Causal;
  expectNear(estimateQkFirst(shape, plain).work.qkFlops,
             8256.0 * 257 + 128 * 64);
  expectNear(estimateQkFirst(shape, tiles).work.qkFlops,
             3 * 4096.0 * 257 + 128 * 64);
  // The two diagonal tiles run the masked loop, the one below it the
  // unmasked one; counted by pairs, all of a causal term is masked.
  expectNear(estimateQkFirst(shape, tiles).work.qkCutFlops, 2 * 4096.0 * 257);
  expectNear(estimateQkFirst(shape, plain).work.qkCutFlops,
             estimateQkFirst(shape, plain).work.qkFlops);
  // No mask, N = 100: the second key tile, past M, is cut.
  shape.mask = MaskKind::None;
  shape.queries = shape.keys = 100;
  expectNear(estimateQkFirst(shape, tiles).work.qkCutFlops, 128 * 64 * 257.0);
  expectNear(estimateQkFirst(shape, plain).work.qkCutFlops, 0);
  shape.mask = MaskKind::Causal;
  Target t = cpuTarget();
  EXPECT_EQ(parseTarget("qk_whole_tiles = 2\n", t),
            "line 1: 'qk_whole_tiles' is 0 or 1, got '2'");
}

TEST(Targets, MaskedAndKernelEfficienciesFallBack) {
  Target target = cpuTarget();
  EXPECT_EQ(target.qk(true, true), target.qkEfficiency);
  EXPECT_EQ(target.qk(false, true), target.qkEfficiency);
  target.qkKernelEfficiency = 0.4;
  EXPECT_EQ(target.qk(false, false), 0.4);
  EXPECT_EQ(target.qk(false, true), 0.4);
  target.qkKernelMaskedEfficiency = 0.2;
  EXPECT_EQ(target.qk(false, true), 0.2);
  EXPECT_EQ(target.qk(true, true), target.qkEfficiency);
}

TEST(LayerView, BertBase) {
  // h = 12, d = 64: hidden 768; 2·768 = 1536, 6·768 = 4608, 4²·64 = 1024.
  LayerView view = layerView(12, 64);
  EXPECT_EQ(view.attentionExceedsFfnN, 1536);
  EXPECT_EQ(view.quadraticDominatesN, 4608);
  EXPECT_EQ(view.linearBeatsSoftmaxN, 1024);
}

TEST(LayerView, Wider) {
  // h = 16, d = 128: hidden 2048; 4096, 12288, 16·128 = 2048.
  LayerView view = layerView(16, 128);
  EXPECT_EQ(view.attentionExceedsFfnN, 4096);
  EXPECT_EQ(view.quadraticDominatesN, 12288);
  EXPECT_EQ(view.linearBeatsSoftmaxN, 2048);
  // With 2d features: 2²·128 = 512.
  EXPECT_EQ(layerView(16, 128, 2).linearBeatsSoftmaxN, 512);
}

} // namespace

//===----------------------------------------------------------------------===//
// The recurrent order
//===----------------------------------------------------------------------===//

// Per token S = g S + φ(k) vᵀ and z = g z + φ(k), then φ(q)ᵀ S / φ(q)·z:
// 4we + 4w + e FLOPs (w = 64 features, e = 32 values), per (batch, head).
TEST(Recurrent, FlopsPerToken) {
  TermShape shape = kernelShape(FeatureMap::Elu1, 10, 10, 64, 32);
  shape.mask = MaskKind::Causal;
  shape.heads = 2;
  Strategy recurrent = estimateRecurrent(shape, cpuTarget());
  EXPECT_EQ(recurrent.order, Order::Recurrent);
  EXPECT_FALSE(recurrent.chunk.has_value());
  double perToken = 4.0 * 64 * 32 + 4 * 64 + 32;
  EXPECT_DOUBLE_EQ(recurrent.work.recurrentFlops, 2 * 10 * perToken);
  // The state, once per (batch, head), is the extra memory.
  EXPECT_DOUBLE_EQ(recurrent.peakBytes, 2.0 * 64 * 33 * 4);
}

// Only causal kernel terms have the recurrent form; analyzeTerm lists it
// third and gives its crossover against kv-first.
TEST(Recurrent, LegalForCausalKernelTermsOnly) {
  TermShape causal = kernelShape(FeatureMap::Elu1, 4096, 4096, 64, 64);
  causal.mask = MaskKind::Causal;
  EXPECT_TRUE(causal.hasRecurrentForm());
  TermCost cost = analyzeTerm(causal, cpuTarget());
  ASSERT_EQ(cost.strategies.size(), 3u);
  EXPECT_EQ(cost.strategies[2].order, Order::Recurrent);
  ASSERT_TRUE(cost.recurrentCrossoverN.has_value());
  EXPECT_NE(cost.reason.find("kv-first beats recurrent from N = " +
                             std::to_string(*cost.recurrentCrossoverN)),
            std::string::npos);
  // A long prefill: chunked kv-first reuses the state across a chunk.
  EXPECT_EQ(cost.chosen.order, Order::KvFirst);

  TermShape blocks = causal;
  blocks.mask = MaskKind::BlockCausal;
  blocks.maskBlock = 64;
  EXPECT_FALSE(blocks.hasRecurrentForm());
  EXPECT_EQ(analyzeTerm(blocks, cpuTarget()).strategies.size(), 2u);
  TermShape plain = causal;
  plain.mask = MaskKind::None;
  EXPECT_FALSE(plain.hasRecurrentForm());
  EXPECT_FALSE(analyzeTerm(plain, cpuTarget()).recurrentCrossoverN);
}

// A recurrent efficiency far above the state products' makes it win.
TEST(Recurrent, ChosenWhenItsRateWins) {
  TermShape causal = kernelShape(FeatureMap::Elu1, 64, 64, 64, 64);
  causal.mask = MaskKind::Causal;
  Target fast = cpuTarget();
  fast.recurrentEfficiency = 1.0;
  fast.qkKernelMaskedEfficiency = 0.01;
  EXPECT_EQ(analyzeTerm(causal, fast).chosen.order, Order::Recurrent);
}

TEST(Targets, RecurrentKeysParse) {
  Target target;
  EXPECT_EQ(parseTarget("recurrent_efficiency = 0.3\n"
                        "recurrent_head_overhead = 1e-6\n"
                        "recurrent_call_overhead = 0\n",
                        target),
            "");
  EXPECT_DOUBLE_EQ(target.recurrentEfficiency, 0.3);
  EXPECT_DOUBLE_EQ(target.recurrentHeadOverhead, 1e-6);
  EXPECT_NE(parseTarget("recurrent_efficiency = 2\n", target), "");
}
