//===- CHeaderTest.cpp - The C header writer and the host size checks -----===//

#include "attn/Target/CHeader/CHeader.h"
#include "attn/Target/CHeader/EntryAbi.h"

#include <gtest/gtest.h>

using namespace attn;

namespace {

Extent fixed(int64_t value) {
  Extent extent;
  extent.value = value;
  return extent;
}

Extent dynamic(int index, const std::string &name) {
  Extent extent;
  extent.dynamic = index;
  extent.name = name;
  return extent;
}

/// q [2, N, 4], out [2, N, 4] with one dynamic size N, tied to M = N.
EntryAbi smallAbi() {
  EntryAbi abi;
  abi.specName = "tiny";
  abi.entryName = "attn_tiny";
  abi.sourcePath = "dir/tiny.attn";
  abi.dynamicSizes = {"N", "M"};
  abi.dynamicCNames = {"N", "M"};
  abi.staticSizes = {{"D", 4}};
  AbiArray q{"q", "q", {fixed(2), dynamic(0, "N"), fixed(4)}, false};
  AbiArray out{"out", "out", {fixed(2), dynamic(0, "N"), fixed(4)}, true};
  abi.arrays = {q, out};
  abi.equalities = {{dynamic(0, "N"), dynamic(1, "M")}};
  abi.products = {q.shape, out.shape};
  return abi;
}

TEST(CHeader, DeclaresTheEntryWithEveryShape) {
  HeaderTarget target;
  target.llvmLibraryDir = "/opt/llvm/lib";
  std::string header = generateHeader(smallAbi(), target);
  EXPECT_NE(header.find("#ifndef ATTN_GENERATED_TINY_H"), std::string::npos);
  EXPECT_NE(header.find("from tiny.attn. Do not edit."), std::string::npos);
  EXPECT_NE(header.find("-L/opt/llvm/lib -lomp -lm"), std::string::npos);
  EXPECT_NE(header.find(" *   q    [2, N, 4]\n"), std::string::npos);
  EXPECT_NE(header.find(" *   out  [2, N, 4]  (output)\n"), std::string::npos);
  EXPECT_NE(header.find(" *   N    the size N (dynamic), >= 1\n"),
            std::string::npos);
  EXPECT_NE(header.find("Fixed in the object: D = 4."), std::string::npos);
  EXPECT_NE(header.find("int attn_tiny(const float *q, float *out, int64_t N, "
                        "int64_t M);"),
            std::string::npos);
  EXPECT_NE(header.find("#define ATTN_TINY_NUM_ARRAYS 2"), std::string::npos);
  EXPECT_NE(header.find("#define ATTN_TINY_NUM_SIZES 2"), std::string::npos);
  EXPECT_NE(header.find("return attn_tiny((const float *)arrays[0], (float "
                        "*)arrays[1], sizes[0], sizes[1]);"),
            std::string::npos);
}

TEST(CHeader, NarrowArraysAreTheirBits) {
  EntryAbi abi = smallAbi();
  abi.arrays[0].elementType = ElementType::BF16;
  abi.arrays[1].elementType = ElementType::F16;
  std::string header = generateHeader(abi, HeaderTarget());
  EXPECT_NE(header.find("int attn_tiny(const uint16_t *q, uint16_t *out, "
                        "int64_t N, int64_t M);"),
            std::string::npos);
  EXPECT_NE(header.find(" *   q    [2, N, 4]  bf16\n"), std::string::npos);
  EXPECT_NE(header.find(" *   out  [2, N, 4]  f16  (output)\n"),
            std::string::npos);
  EXPECT_NE(header.find("16-bit patterns of IEEE binary16"), std::string::npos);
  EXPECT_NE(header.find("return attn_tiny((const uint16_t *)arrays[0], "
                        "(uint16_t *)arrays[1], sizes[0], sizes[1]);"),
            std::string::npos);
  // The f32 header says nothing about narrow types.
  EXPECT_EQ(generateHeader(smallAbi(), HeaderTarget()).find("binary16"),
            std::string::npos);
}

TEST(CHeader, GpuObjectsTakeDevicePointers) {
  HeaderTarget target;
  target.gpu = true;
  target.chip = "sm_80";
  std::string header = generateHeader(smallAbi(), target);
  EXPECT_NE(header.find("-lattn_gpu_runtime -ldl"), std::string::npos);
  EXPECT_NE(header.find("embedded as sm_80 PTX"), std::string::npos);
  EXPECT_NE(header.find("EVERY ARRAY POINTER IS A DEVICE POINTER"),
            std::string::npos);
  EXPECT_EQ(header.find("-lomp"), std::string::npos);
}

TEST(EntryAbi, HostChecksMatchTheEntryPoint) {
  EntryAbi abi = smallAbi();
  int64_t good[] = {7, 7};
  int64_t tied[] = {7, 8};
  int64_t zero[] = {0, 0};
  int64_t huge[] = {int64_t(1) << 61, int64_t(1) << 61};
  EXPECT_EQ(checkSizes(abi, good), kStatusOk);
  EXPECT_EQ(checkSizes(abi, tied), kStatusBadSize);
  EXPECT_EQ(checkSizes(abi, zero), kStatusBadSize);
  EXPECT_EQ(checkSizes(abi, huge), kStatusBadSize);
}

TEST(EntryAbi, StaticProductsBeyond2To62AreRejected) {
  EntryAbi abi = smallAbi();
  EXPECT_EQ(checkStaticProducts(abi), "");
  abi.products.push_back({fixed(int64_t(1) << 40), fixed(int64_t(1) << 40)});
  EXPECT_NE(checkStaticProducts(abi).find("too large"), std::string::npos);
}

TEST(EntryAbi, ReservedNames) {
  EXPECT_TRUE(isReservedCName("int"));
  EXPECT_TRUE(isReservedCName("__x"));
  EXPECT_TRUE(isReservedCName("_X"));
  EXPECT_FALSE(isReservedCName("q"));
  EXPECT_FALSE(isReservedCName("_x"));
}

} // namespace
