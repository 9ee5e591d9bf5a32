//===- MemoryTest.cpp - Byte counts, estimates and the memory check -------===//

#include "attn/Support/Memory.h"

#include <gtest/gtest.h>

using namespace attn;

TEST(Memory, ParsesByteCounts) {
  uint64_t bytes = 0;
  EXPECT_TRUE(parseByteSize("512", bytes));
  EXPECT_EQ(bytes, 512u);
  EXPECT_TRUE(parseByteSize("512B", bytes));
  EXPECT_EQ(bytes, 512u);
  EXPECT_TRUE(parseByteSize("4k", bytes));
  EXPECT_EQ(bytes, 4096u);
  EXPECT_TRUE(parseByteSize("100M", bytes));
  EXPECT_EQ(bytes, 100u << 20);
  EXPECT_TRUE(parseByteSize("8GiB", bytes));
  EXPECT_EQ(bytes, uint64_t(8) << 30);
  EXPECT_TRUE(parseByteSize("2TB", bytes));
  EXPECT_EQ(bytes, uint64_t(2) << 40);
  for (const char *bad : {"", "M", "-1", "1.5G", "12parsecs", "1 G", "1GG",
                          "18446744073709551616", "17179869184G"})
    EXPECT_FALSE(parseByteSize(bad, bytes)) << bad;
}

TEST(Memory, FormatsBytes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(uint64_t(96) << 30), "96.0 GiB");
}

TEST(Memory, NeedSaturatesInsteadOfWrapping) {
  MemoryNeed need;
  need.add("a", UINT64_MAX - 1);
  need.add("b", 10);
  need.add("empty", 0);
  EXPECT_EQ(need.total(), UINT64_MAX);
  EXPECT_EQ(need.parts().size(), 2u);
  EXPECT_EQ(saturatingMul(uint64_t(1) << 40, uint64_t(1) << 40), UINT64_MAX);
  EXPECT_EQ(saturatingMul(0, UINT64_MAX), 0u);
}

TEST(Memory, ChecksAgainstALimit) {
  MemoryNeed need;
  need.add("inputs", 3u << 20);
  need.add("output", 1u << 20);
  EXPECT_EQ(checkMemory(need, 4u << 20), "");
  EXPECT_EQ(checkMemory(need, 2u << 20),
            "this run needs about 4.00 MiB (inputs 3.00 MiB, output 1.00 "
            "MiB), more than the 2.00 MiB limit of --max-memory");
  EXPECT_EQ(checkMemory(need, 1, "option 'max-memory'"),
            "this run needs about 4.00 MiB (inputs 3.00 MiB, output 1.00 "
            "MiB), more than the 1 B limit of option 'max-memory'");
}

TEST(Memory, KernelWorkspaceEstimate) {
  EXPECT_EQ(estimateKernelWorkspace(0), uint64_t(16) << 20);
  EXPECT_EQ(estimateKernelWorkspace(UINT64_MAX - 1), UINT64_MAX);
}

TEST(Memory, AvailableMemoryIsPositiveHere) {
  std::optional<AvailableMemory> available = availableMemory();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(available->bytes, 0u);
  EXPECT_FALSE(available->source.empty());
}

// A run's check reuses a reading younger than a second only for needs of
// at most half of it: a large need right after a small one is still
// refused.
TEST(Memory, RecentReadingDoesNotHideALargeNeed) {
  MemoryNeed small;
  small.add("inputs", 1u << 20);
  EXPECT_EQ(checkMemory(small, 0), "");
  MemoryNeed large;
  large.add("inputs", UINT64_MAX / 2);
  EXPECT_NE(checkMemory(large, 0), "");
  EXPECT_EQ(checkMemory(small, 0), "");
}
