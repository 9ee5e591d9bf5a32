//===- NpyTest.cpp - Unit tests for .npy reading and writing --------------===//
//
// The expected bytes below were produced by numpy 1.24 (np.save, or
// numpy.lib.format.write_array for versions 2.0 and 3.0) and pasted as
// literals, so that reading is checked against files this code did not make
// and writing is checked byte for byte against what numpy makes. Expected
// float values are numpy's own (for float64 files, numpy's astype(float32)),
// written as hex literals so that they are exact.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

using namespace attn::npy;

namespace {

//===----------------------------------------------------------------------===//
// Files written by numpy
//===----------------------------------------------------------------------===//

/// np.save(np.array([[1.5, -2.0, 0.25], [3.0, -0.0, 1e-3]], '<f4')) (152 bytes)
const char kV1F4[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (2, 3), }                                               "
    "           \012"
    "\000\000\300\077\000\000\000\300\000\000\200>\000\000@@\000\000\000"
    "\200o\022\203:";

/// np.save(np.array([0.1, -1e300, 3.5e38, FLT_MAX + 2**102, 1/3, -0.0,
///                   1e-50, FLT_MAX + 2**103], '<f8').reshape(2, 4))
/// (192 bytes)
const char kV1F8[] =
    "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, '"
    "shape': (2, 4), }                                               "
    "           \012"
    "\232\231\231\231\231\231\271\077\234u\000\210<\3447\376{\315\323"
    "\304\370t\360G\000\000\000\350\377\377\357GUUUUUU\325\077\000\000"
    "\000\000\000\000\000\200\037\270\324Jz\356\2155\000\000\000\360\377"
    "\377\357G";

/// numpy.lib.format.write_array(f, np.array([1, 2, 3], '<f4'),
///                              version=(2, 0)) (140 bytes)
const char kV2[] =
    "\223NUMPY\002\000t\000\000\000{'descr': '<f4', 'fortran_order': "
    "False, 'shape': (3,), }                                         "
    "                 \012"
    "\000\000\200\077\000\000\000@\000\000@@";

/// numpy.lib.format.write_array(f, np.array([[-7.25, 1e10]], '<f8'),
///                              version=(3, 0)) (144 bytes)
const char kV3[] =
    "\223NUMPY\003\000t\000\000\000{'descr': '<f8', 'fortran_order': "
    "False, 'shape': (1, 2), }                                       "
    "                 \012"
    "\000\000\000\000\000\000\035\300\000\000\000 _\240\002B";

/// np.save(np.array(3.5, '<f4')) (132 bytes)
const char k0d[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (), }                                                   "
    "           \012"
    "\000\000`@";

/// np.save(np.arange(5, dtype='<f4')) (148 bytes)
const char k1d[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (5,), }                                                 "
    "           \012"
    "\000\000\000\000\000\000\200\077\000\000\000@\000\000@@\000\000\200"
    "@";

/// np.save(np.zeros((0,), '<f4')) (128 bytes)
const char kEmpty[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (0,), }                                                 "
    "           \012";

/// np.save(np.zeros((2, 0), '<f4')) (128 bytes)
const char kEmpty2d[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (2, 0), }                                               "
    "           \012";

/// np.save(np.arange(6, dtype='<f4').reshape(2, 1, 3) - 2.5) (152 bytes)
const char k3d[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, '"
    "shape': (2, 1, 3), }                                            "
    "           \012"
    "\000\000 \300\000\000\300\277\000\000\000\277\000\000\000\077\000"
    "\000\300\077\000\000 @";

/// np.save(np.zeros((1,) * 9 + (10**11, 0), '<f4')) (192 bytes): a header
/// whose alignment padding is a full 64 spaces, numpy's other edge case.
const char kFullPad[] =
    "\223NUMPY\001\000\266\000{'descr': '<f4', 'fortran_order': False"
    ", 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 100000000000, 0), }      "
    "                                                                "
    "              \012";

/// np.save(np.asfortranarray(<kV1F4's array>)) (152 bytes)
const char kFortran[] =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': True, 's"
    "hape': (2, 3), }                                                "
    "           \012"
    "\000\000\300\077\000\000@@\000\000\000\300\000\000\000\200\000\000"
    "\200>o\022\203:";

/// np.save(np.array([1, 2], '>f4')) (136 bytes)
const char kBigEndian[] =
    "\223NUMPY\001\000v\000{'descr': '>f4', 'fortran_order': False, '"
    "shape': (2,), }                                                 "
    "           \012"
    "\077\200\000\000@\000\000\000";

/// np.save(np.array([1, 2], '>f8')) (144 bytes)
const char kBigEndianF8[] =
    "\223NUMPY\001\000v\000{'descr': '>f8', 'fortran_order': False, '"
    "shape': (2,), }                                                 "
    "           \012"
    "\077\360\000\000\000\000\000\000@\000\000\000\000\000\000\000";

/// np.save(np.array([1, 2, 3], '<i4')) (140 bytes)
const char kInt32[] =
    "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': False, '"
    "shape': (3,), }                                                 "
    "           \012"
    "\001\000\000\000\002\000\000\000\003\000\000\000";

/// np.save(np.array([1, 2], '<f2')) (132 bytes)
const char kFloat16[] =
    "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, '"
    "shape': (2,), }                                                 "
    "           \012"
    "\000<\000@";

/// np.save(np.array([1j], '<c8')) (136 bytes)
const char kComplex[] =
    "\223NUMPY\001\000v\000{'descr': '<c8', 'fortran_order': False, '"
    "shape': (1,), }                                                 "
    "           \012"
    "\000\000\000\000\000\000\200\077";

/// np.save(np.zeros(1, dtype=[('a', '<f4')])) (132 bytes)
const char kStructured[] =
    "\223NUMPY\001\000v\000{'descr': [('a', '<f4')], 'fortran_order':"
    " False, 'shape': (1,), }                                        "
    "           \012"
    "\000\000\000\000";

/// The first 12 bytes numpy writes for a shape of 22000 ones, and the size of
/// its whole header: numpy.lib.format._wrap_header_guess_version applied to
/// the header text numpy's _write_array_header builds (no numpy array can
/// have that rank). Too long for version 1.0, so numpy picks 2.0.
const char kHugeRankPrefix[] = "\223NUMPY\002\0004\002\001\000";

const size_t kHugeRankHeaderSize = 66112;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The bytes of a literal, embedded NULs included.
template <size_t N> std::string bytesOf(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

const float kInf = std::numeric_limits<float>::infinity();

/// Float comparison by bits, so that -0.0 and NaN payloads count.
uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

void expectSameFloats(const std::vector<float> &actual,
                      const std::vector<float> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(bitsOf(actual[i]), bitsOf(expected[i]))
        << "element " << i << ": " << actual[i] << " vs " << expected[i];
}

/// Parses `bytes`, which must succeed.
Array parseOk(const std::string &bytes) {
  Array array;
  std::string err = parse(bytes, array);
  EXPECT_EQ(err, "");
  return array;
}

/// Parses `bytes`, which must fail; returns the message.
std::string parseError(const std::string &bytes) {
  Array array;
  std::string err = parse(bytes, array);
  EXPECT_NE(err, "") << "parsed although it should not";
  EXPECT_EQ(err.find('\n'), std::string::npos) << "not one line: " << err;
  return err;
}

/// A version 1.0 file (or 2.0/3.0 with `major`) around a hand-written header
/// dict, laid out by the format's rules but without numpy's padding, so that
/// header syntax can be tested without numpy.
std::string withHeader(const std::string &dict, const std::string &data = "",
                       int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return out + dict + data;
}

/// Little-endian float32 bytes of `values`, for hand-made files.
std::string f4Data(const std::vector<float> &values) {
  std::string out;
  for (float value : values) {
    uint32_t bits = bitsOf(value);
    for (int i = 0; i < 4; ++i)
      out += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  return out;
}

/// A fresh directory under the system temp dir, removed with its contents
/// when the test ends.
class TempDir {
public:
  TempDir() {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec)
      base = "/tmp";
    std::string pattern = base + "/attn-npytest-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char *made = ::mkdtemp(buffer.data());
    EXPECT_NE(made, nullptr);
    if (made)
      path = made;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty())
      std::filesystem::remove_all(path, ec);
  }
  /// The names in the directory, so that tests can see leftover temporaries.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(path, ec), end;
         !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    return names;
  }
  std::string path;
};

std::string readFile(const std::string &path) {
  std::string bytes;
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return bytes;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.append(buffer, got);
  std::fclose(file);
  return bytes;
}

void writeFile(const std::string &path, const std::string &bytes) {
  FILE *file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  ASSERT_EQ(std::fclose(file), 0);
}

/// Every numpy-made file that parse() must accept.
std::vector<std::string> validFiles() {
  return {bytesOf(kV1F4), bytesOf(kV1F8),   bytesOf(kV2),    bytesOf(kV3),
          bytesOf(k0d),   bytesOf(k1d),     bytesOf(kEmpty), bytesOf(kEmpty2d),
          bytesOf(k3d),   bytesOf(kFullPad)};
}

//===----------------------------------------------------------------------===//
// Reading numpy's files
//===----------------------------------------------------------------------===//

TEST(NpyParse, Version1Float32) {
  Array array = parseOk(bytesOf(kV1F4));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  expectSameFloats(array.data,
                   {1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 0x1.0624dep-10f});
}

TEST(NpyParse, Version1Float64RoundsLikeNumpy) {
  Array array = parseOk(bytesOf(kV1F8));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 4}));
  // numpy's astype(np.float32) of the same doubles: overflow goes to ±inf,
  // FLT_MAX + 2^102 (below the rounding midpoint) stays FLT_MAX, the
  // midpoint FLT_MAX + 2^103 ties to even (inf), 1e-50 underflows to 0.
  expectSameFloats(array.data, {0x1.99999ap-4f, -kInf, kInf, 0x1.fffffep+127f,
                                0x1.555556p-2f, -0.0f, 0.0f, kInf});
}

TEST(NpyParse, Version2) {
  Array array = parseOk(bytesOf(kV2));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3}));
  expectSameFloats(array.data, {1.0f, 2.0f, 3.0f});
}

TEST(NpyParse, Version3Float64) {
  Array array = parseOk(bytesOf(kV3));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1, 2}));
  expectSameFloats(array.data, {-7.25f, 0x1.2a05f2p+33f});
}

TEST(NpyParse, ZeroDimensional) {
  Array array = parseOk(bytesOf(k0d));
  EXPECT_TRUE(array.shape.empty());
  expectSameFloats(array.data, {3.5f});
}

TEST(NpyParse, OneDimensional) {
  Array array = parseOk(bytesOf(k1d));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{5}));
  expectSameFloats(array.data, {0.0f, 1.0f, 2.0f, 3.0f, 4.0f});
}

TEST(NpyParse, EmptyArrays) {
  Array empty = parseOk(bytesOf(kEmpty));
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0}));
  EXPECT_TRUE(empty.data.empty());
  Array empty2d = parseOk(bytesOf(kEmpty2d));
  EXPECT_EQ(empty2d.shape, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(empty2d.data.empty());
  Array fullPad = parseOk(bytesOf(kFullPad));
  EXPECT_EQ(fullPad.shape,
            (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 100000000000, 0}));
  EXPECT_TRUE(fullPad.data.empty());
}

TEST(NpyParse, ThreeDimensional) {
  Array array = parseOk(bytesOf(k3d));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 1, 3}));
  expectSameFloats(array.data, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f});
}

//===----------------------------------------------------------------------===//
// Rejecting what is not a C-order little-endian float array
//===----------------------------------------------------------------------===//

TEST(NpyParse, Int32AsFloatsMarked) {
  Array array = parseOk(bytesOf(kInt32));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(array.data, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(array.integerDtype, "<i4");
}

TEST(NpyParse, RejectsFortranOrder) {
  EXPECT_EQ(parseError(bytesOf(kFortran)),
            "Fortran-order arrays are not supported");
}

TEST(NpyParse, RejectsBigEndian) {
  EXPECT_EQ(parseError(bytesOf(kBigEndian)),
            "unsupported dtype '>f4': big-endian data is not supported, only "
            "little-endian");
  EXPECT_NE(parseError(bytesOf(kBigEndianF8)).find("big-endian"),
            std::string::npos);
}

TEST(NpyParse, Float16IsWidenedExactly) {
  Array array;
  ASSERT_EQ(parse(bytesOf(kFloat16), array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2}));
  expectSameFloats(array.data, {1.0f, 2.0f});
  EXPECT_EQ(array.integerDtype, "");
}

TEST(NpyParse, RejectsOtherDtypes) {
  EXPECT_EQ(parseError(bytesOf(kComplex)),
            "unsupported dtype '<c8': only float16, float32, float64, int32 "
            "and int64 are accepted");
  EXPECT_EQ(parseError(bytesOf(kStructured)),
            "unsupported structured dtype: only float32 and float64 are "
            "accepted");
  const char *others[] = {"|f4", "|u1", "<f16", "<O", "", "<f4 ", "f"};
  for (const char *descr : others) {
    SCOPED_TRACE(descr);
    parseError(withHeader(std::string("{'descr': '") + descr +
                              "', 'fortran_order': False, 'shape': (1,)}",
                          f4Data({1.0f})));
  }
  EXPECT_EQ(parseError(withHeader("{'descr': '|f4', 'fortran_order': False, "
                                  "'shape': (1,)}",
                                  f4Data({1.0f}))),
            "invalid dtype '|f4': a float needs a byte order ('<'), not '|'");
}

TEST(NpyParse, NativeOrderIsLittleEndianHere) {
  // '=' is native order; these tests run on little-endian hosts (x86-64,
  // AArch64), where it is accepted.
  Array array = parseOk(
      withHeader("{'descr': '=f4', 'fortran_order': False, 'shape': (2,)}",
                 f4Data({1.0f, -2.0f})));
  expectSameFloats(array.data, {1.0f, -2.0f});
}

TEST(NpyParse, RejectsTruncatedData) {
  std::string bytes = bytesOf(kV1F4);
  EXPECT_EQ(parseError(bytes.substr(0, bytes.size() - 1)),
            "file is truncated: expected 24 data bytes, found 23");
  EXPECT_EQ(parseError(bytes.substr(0, 128)),
            "file is truncated: expected 24 data bytes, found 0");
  EXPECT_EQ(parseError(bytes.substr(0, 100)),
            "file is truncated: expected 118 header bytes, found 90");
}

TEST(NpyParse, EveryProperPrefixIsRejected) {
  for (const std::string &file : validFiles())
    for (size_t length = 0; length < file.size(); ++length) {
      Array array;
      EXPECT_NE(parse(file.substr(0, length), array), "")
          << "prefix of length " << length;
    }
}

TEST(NpyParse, RejectsTrailingBytes) {
  EXPECT_EQ(parseError(bytesOf(kV1F4) + "x"),
            "unexpected trailing bytes: expected 24 data bytes, found 25");
  EXPECT_EQ(parseError(bytesOf(kEmpty) + std::string(4, '\0')),
            "unexpected trailing bytes: expected 0 data bytes, found 4");
}

TEST(NpyParse, RejectsBadMagic) {
  std::string bytes = bytesOf(kV1F4);
  bytes[1] = 'n';
  EXPECT_EQ(parseError(bytes),
            "not a .npy file: the magic string \\x93NUMPY is missing");
  EXPECT_EQ(parseError(""),
            "not a .npy file: the magic string \\x93NUMPY is missing");
  EXPECT_EQ(parseError("PK\x03\x04"),
            "not a .npy file: the magic string \\x93NUMPY is missing");
}

TEST(NpyParse, RejectsUnknownVersions) {
  std::string bytes = bytesOf(kV1F4);
  bytes[6] = 4;
  EXPECT_EQ(parseError(bytes), "unsupported .npy format version 4.0: only "
                               "1.0, 2.0 and 3.0 are accepted");
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_NE(parseError(bytes).find("version 1.1"), std::string::npos);
  bytes[6] = 0;
  bytes[7] = 0;
  EXPECT_NE(parseError(bytes).find("version 0.0"), std::string::npos);
}

TEST(NpyParse, RejectsOverflowingShapes) {
  const std::string tail = "'descr': '<f4', 'fortran_order': False}";
  // 2^32 · 2^32 = 2^64 elements.
  EXPECT_EQ(
      parseError(withHeader("{'shape': (4294967296, 4294967296), " + tail)),
      "the element count of shape (4294967296, 4294967296) overflows");
  // The product of the non-zero dimensions must fit even when one is 0.
  EXPECT_NE(
      parseError(withHeader("{'shape': (4294967296, 0, 4294967296), " + tail))
          .find("overflows"),
      std::string::npos);
  // 2^62 elements fit in int64, but not 2^62 · 4 bytes in a 64-bit size_t.
  if (sizeof(size_t) == 8) {
    EXPECT_EQ(
        parseError(withHeader("{'shape': (4611686018427387904,), " + tail)),
        "the data size of shape (4611686018427387904,) overflows");
  }
  // 2^63 does not fit in int64 at all.
  EXPECT_EQ(parseError(withHeader("{'shape': (9223372036854775808,), " + tail)),
            "shape has a dimension that does not fit in 64 bits");
  // A huge but representable size must not be allocated before the length
  // check: 2^60 float32 elements, no data.
  EXPECT_EQ(parseError(withHeader("{'shape': (1152921504606846976,), " + tail)),
            "file is truncated: expected 4611686018427387904 data bytes, "
            "found 0");
}

TEST(NpyParse, RejectsHeaderLongerThanFile) {
  std::string bytes = bytesOf(kV1F4).substr(0, 10);
  bytes[8] = '\xff';
  bytes[9] = '\xff';
  EXPECT_EQ(parseError(bytes + "{}"),
            "file is truncated: expected 65535 header bytes, found 2");
  std::string v2 = bytesOf(kV2).substr(0, 12);
  v2[8] = v2[9] = v2[10] = v2[11] = '\xff';
  EXPECT_EQ(parseError(v2),
            "file is truncated: expected 4294967295 header bytes, found 0");
}

//===----------------------------------------------------------------------===//
// Header syntax
//===----------------------------------------------------------------------===//

TEST(NpyHeader, AcceptsPythonLiteralVariants) {
  const std::string two = f4Data({1.0f, 2.0f});
  const std::string six = f4Data({1, 2, 3, 4, 5, 6});
  struct Case {
    const char *dict;
    std::vector<int64_t> shape;
    std::string data;
  } cases[] = {
      // Keys in any order, no trailing comma.
      {"{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}", {2}, two},
      {"{'fortran_order': False, 'descr': '<f4', 'shape': (2, 3)}",
       {2, 3},
       six},
      // Double quotes, odd spacing, tabs and newlines inside the braces.
      {"{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,)}", {2}, two},
      {"  {\n 'descr' :\t'<f4' ,\r\n 'fortran_order' : False ,"
       " 'shape' : ( 2 , 3 , ) , }  \n",
       {2, 3},
       six},
      // A trailing comma in a multi-dimensional shape.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,3,),}",
       {2, 3},
       six},
      // Python 2's long suffix, which numpy still reads.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
       {2, 3},
       six},
      // No newline at the end, no padding.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", {2}, two},
      // A zero-size dimension next to a non-zero one, in a float64 file.
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 7)}",
       {0, 7},
       std::string()},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dict);
    Array array = parseOk(withHeader(c.dict, c.data));
    EXPECT_EQ(array.shape, c.shape);
  }
  // Versions 2.0 and 3.0 use a 4-byte length.
  for (int major : {2, 3}) {
    Array array = parseOk(withHeader(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", two, major));
    expectSameFloats(array.data, {1.0f, 2.0f});
  }
}

TEST(NpyHeader, RejectsMalformedDicts) {
  const std::string f = "'fortran_order': False";
  const std::string d = "'descr': '<f4'";
  struct Case {
    std::string dict;
    const char *message; // a substring of the expected message
  } cases[] = {
      {"", "expected '{'"},
      {"   \n", "expected '{'"},
      {"{", "expected a string"},
      {"[" + d + "]", "expected '{'"},
      {"{}", "missing key 'descr'"},
      {"{" + d + ", " + f + "}", "missing key 'shape'"},
      {"{" + d + ", 'shape': (1,)}", "missing key 'fortran_order'"},
      {"{" + f + ", 'shape': (1,)}", "missing key 'descr'"},
      {"{" + d + ", " + f + ", 'shape': (1,), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{" + d + ", " + d + ", " + f + ", 'shape': (1,)}",
       "duplicate key 'descr'"},
      {"{" + d + ", " + f + ", 'shape': (1,), 'shape': (1,)}",
       "duplicate key 'shape'"},
      {"{,}", "expected a string"},
      {"{" + d + ",, " + f + ", 'shape': (1,)}", "expected a string"},
      {"{" + d + " " + f + ", 'shape': (1,)}", "expected ',' or '}'"},
      {"{'descr' '<f4', " + f + ", 'shape': (1,)}", "expected ':'"},
      {"{descr: '<f4', " + f + ", 'shape': (1,)}", "expected a string"},
      {"{'descr: '<f4', " + f + ", 'shape': (1,)}", "expected ':'"},
      {"{'descr': '<f4, " + f + ", 'shape': (1,)}", "expected ',' or '}'"},
      {"{'descr': '<f4\n', " + f + ", 'shape': (1,)}", "unterminated string"},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '\\x3cf4', " + f + ", 'shape': (1,)}", "escape sequences"},
      {"{" + d + ", 'fortran_order': 0, 'shape': (1,)}", "True or False"},
      {"{" + d + ", 'fortran_order': false, 'shape': (1,)}", "True or False"},
      {"{" + d + ", 'fortran_order': Falsey, 'shape': (1,)}", "True or False"},
      {"{" + d + ", 'fortran_order': Fals", "True or False"},
      {"{" + d + ", " + f + ", 'shape': (1)}", "must be a tuple"},
      {"{" + d + ", " + f + ", 'shape': [1]}", "must be a tuple"},
      {"{" + d + ", " + f + ", 'shape': 1}", "must be a tuple"},
      {"{" + d + ", " + f + ", 'shape': (,)}", "non-negative integer"},
      {"{" + d + ", " + f + ", 'shape': (1,,)}", "non-negative integer"},
      {"{" + d + ", " + f + ", 'shape': (1 2)}", "expected ',' or ')'"},
      {"{" + d + ", " + f + ", 'shape': (1.0,)}", "plain decimal integers"},
      {"{" + d + ", " + f + ", 'shape': (0x1,)}", "plain decimal integers"},
      {"{" + d + ", " + f + ", 'shape': (1_0,)}", "plain decimal integers"},
      {"{" + d + ", " + f + ", 'shape': (1e3,)}", "plain decimal integers"},
      {"{" + d + ", " + f + ", 'shape': (+1,)}", "non-negative integer"},
      {"{" + d + ", " + f + ", 'shape': (-1,)}",
       "shape has a negative dimension -1"},
      {"{" + d + ", " + f + ", 'shape': (2, - 3)}",
       "shape has a negative dimension -3"},
      {"{" + d + ", " + f + ", 'shape': (-x,)}", "non-negative integer"},
      {"{" + d + ", " + f + ", 'shape': (1,", "non-negative integer"},
      {"{" + d + ", " + f + ", 'shape': (1", "expected ',' or ')'"},
      {"{" + d + ", " + f + ", 'shape': (1,)", "expected ',' or '}'"},
      {"{" + d + ", " + f + ", 'shape': (1,)} x", "unexpected text after"},
      {"{" + d + ", " + f + ", 'shape': (1,)}}", "unexpected text after"},
      {"{" + d + ", " + f + ", 'shape': (1,)}" + std::string(1, '\0'),
       "unexpected text after"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dict);
    std::string message = parseError(withHeader(c.dict, f4Data({1.0f})));
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
}

TEST(NpyHeader, MessagesShowHostileBytesSafely) {
  // Control bytes, high bytes and a long tail in an unsupported dtype.
  std::string bytesDescr = "<\x01\xff" + std::string(100, 'a');
  std::string message = parseError(withHeader(
      "{'descr': '" + bytesDescr + "', 'fortran_order': False, 'shape': (1,)}",
      f4Data({1.0f})));
  EXPECT_EQ(message.find("unsupported dtype '<\\x01\\xffaaaa"), 0u) << message;
  EXPECT_LT(message.size(), 130u) << message;
}

/// Mutates numpy's files byte by byte and at random: parse() must either
/// fail with a one-line message or return an array whose data matches its
/// shape. Run under AddressSanitizer this also checks every read is in
/// bounds.
TEST(NpyHeader, SurvivesMutations) {
  const unsigned char replacements[] = {
      0,   0xff, 0x80, ' ', '\n', '\t', '(', ')', ',', ':', '{', '}', '\'',
      '"', '-',  '0',  '9', 'L',  'T',  'F', '[', ']', '<', '>', '='};
  size_t accepted = 0, rejected = 0;
  auto check = [&](const std::string &bytes) {
    Array array;
    std::string err = parse(bytes, array);
    if (!err.empty()) {
      ++rejected;
      EXPECT_EQ(err.find('\n'), std::string::npos) << err;
      return;
    }
    ++accepted;
    size_t count = 1;
    for (int64_t dim : array.shape) {
      ASSERT_GE(dim, 0);
      count *= static_cast<size_t>(dim);
    }
    EXPECT_EQ(array.data.size(), count);
  };
  for (const std::string &file : validFiles()) {
    for (size_t i = 0; i < file.size(); ++i)
      for (unsigned char r : replacements) {
        std::string mutated = file;
        mutated[i] = static_cast<char>(r);
        check(mutated);
        // Deleting and inserting a byte shift everything after it.
        check(file.substr(0, i) + file.substr(i + 1));
        check(file.substr(0, i) + static_cast<char>(r) + file.substr(i));
      }
  }
  // Random multi-byte damage, from a fixed LCG so failures replay.
  uint64_t state = 0x1234567;
  auto nextRandom = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<std::string> files = validFiles();
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = files[nextRandom() % files.size()];
    int edits = 1 + nextRandom() % 6;
    for (int e = 0; e < edits; ++e)
      mutated[nextRandom() % mutated.size()] =
          static_cast<char>(nextRandom() & 0xff);
    mutated.resize(nextRandom() % (mutated.size() + 8), ' ');
    check(mutated);
  }
  // Both outcomes must have happened, or the mutations tested nothing.
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(rejected, 0u);
}

TEST(NpyParse, FailureLeavesOutputUnchanged) {
  Array array;
  array.shape = {1};
  array.data = {42.0f};
  EXPECT_NE(parse(bytesOf(kComplex), array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1}));
  expectSameFloats(array.data, {42.0f});
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST(NpySerialize, MatchesNumpyByteForByte) {
  EXPECT_EQ(serialize({{2, 3}, {1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 1e-3f}}),
            bytesOf(kV1F4));
  EXPECT_EQ(serialize({{}, {3.5f}}), bytesOf(k0d));
  EXPECT_EQ(serialize({{5}, {0, 1, 2, 3, 4}}), bytesOf(k1d));
  EXPECT_EQ(serialize({{0}, {}}), bytesOf(kEmpty));
  EXPECT_EQ(serialize({{2, 0}, {}}), bytesOf(kEmpty2d));
  EXPECT_EQ(serialize({{2, 1, 3}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}}),
            bytesOf(k3d));
  EXPECT_EQ(serialize({{1, 1, 1, 1, 1, 1, 1, 1, 1, 100000000000, 0}, {}}),
            bytesOf(kFullPad));
}

TEST(NpySerialize, HugeHeadersUseVersion2LikeNumpy) {
  // numpy cannot make an array of rank 22000, so the expected prefix comes
  // from numpy's header wrapper applied to the header text of such a shape.
  Array array{std::vector<int64_t>(22000, 1), {7.0f}};
  std::string bytes = serialize(array);
  EXPECT_EQ(bytes.substr(0, 12), bytesOf(kHugeRankPrefix));
  EXPECT_EQ(bytes.size(), kHugeRankHeaderSize + 4);
  EXPECT_EQ(bytes[kHugeRankHeaderSize - 1], '\n');
  Array back = parseOk(bytes);
  EXPECT_EQ(back.shape, array.shape);
  expectSameFloats(back.data, {7.0f});
}

TEST(NpySerialize, RoundTripsSpecialValuesExactly) {
  std::vector<float> values = {
      0.0f,
      -0.0f,
      kInf,
      -kInf,
      std::numeric_limits<float>::quiet_NaN(),
      std::numeric_limits<float>::denorm_min(),
      -std::numeric_limits<float>::max(),
      std::numeric_limits<float>::min(),
  };
  Array array = parseOk(serialize({{2, 4}, values}));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 4}));
  expectSameFloats(array.data, values);
}

TEST(NpyWrite, RoundTripsThroughAFile) {
  TempDir dir;
  std::string path = dir.path + "/x.npy";
  Array array{{3, 2}, {1, -2, 3.25f, 4e-20f, 5e20f, -6}};
  ASSERT_EQ(write(path, array), "");
  EXPECT_EQ(readFile(path), serialize(array));
  Array back;
  ASSERT_EQ(read(path, back), "");
  EXPECT_EQ(back.shape, array.shape);
  expectSameFloats(back.data, array.data);
  // No temporary is left next to the file.
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"x.npy"}));
}

TEST(NpyWrite, ReplacesAnExistingFile) {
  TempDir dir;
  std::string path = dir.path + "/x.npy";
  writeFile(path, "old contents that are not an array");
  ASSERT_EQ(write(path, {{1}, {9.0f}}), "");
  Array back;
  ASSERT_EQ(read(path, back), "");
  expectSameFloats(back.data, {9.0f});
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"x.npy"}));
}

TEST(NpyWrite, MissingDirectoryFailsCleanly) {
  TempDir dir;
  std::string path = dir.path + "/no/such/dir/x.npy";
  EXPECT_EQ(write(path, {{1}, {1.0f}}),
            "cannot write '" + path + "': No such file or directory");
  EXPECT_TRUE(dir.entries().empty());
}

TEST(NpyWrite, InconsistentArrayLeavesOldFile) {
  TempDir dir;
  std::string path = dir.path + "/x.npy";
  ASSERT_EQ(write(path, {{2}, {1.0f, 2.0f}}), "");
  std::string before = readFile(path);
  EXPECT_EQ(write(path, {{2, 3}, {1.0f}}),
            "cannot write '" + path +
                "': shape (2, 3) holds 6 elements but the data has 1");
  EXPECT_EQ(write(path, {{-1}, {}}),
            "cannot write '" + path + "': invalid shape (-1,)");
  EXPECT_EQ(readFile(path), before);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"x.npy"}));
}

TEST(NpyWrite, DirectoryAsTargetFailsAndCleansUp) {
  TempDir dir;
  std::string path = dir.path + "/sub";
  ASSERT_TRUE(std::filesystem::create_directory(path));
  std::string err = write(path, {{1}, {1.0f}});
  EXPECT_EQ(err.find("cannot write '" + path + "': "), 0u) << err;
  // Only the directory itself: the temporary was removed.
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"sub"}));
}

//===----------------------------------------------------------------------===//
// Reading files
//===----------------------------------------------------------------------===//

TEST(NpyRead, MissingFileNamesPath) {
  TempDir dir;
  std::string path = dir.path + "/missing.npy";
  Array array;
  EXPECT_EQ(read(path, array),
            "cannot open '" + path + "': No such file or directory");
}

TEST(NpyRead, DirectoryNamesPath) {
  TempDir dir;
  Array array;
  EXPECT_EQ(read(dir.path, array),
            "cannot read '" + dir.path + "': Is a directory");
}

TEST(NpyRead, InvalidFileNamesPath) {
  TempDir dir;
  std::string path = dir.path + "/complex.npy";
  writeFile(path, bytesOf(kComplex));
  Array array;
  EXPECT_EQ(read(path, array),
            "invalid .npy file '" + path +
                "': unsupported dtype '<c8': only float16, float32, float64, "
                "int32 and int64 are accepted");
}

TEST(NpyRead, ReadsNumpyFile) {
  TempDir dir;
  std::string path = dir.path + "/f8.npy";
  writeFile(path, bytesOf(kV3));
  Array array;
  ASSERT_EQ(read(path, array), "");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{1, 2}));
  expectSameFloats(array.data, {-7.25f, 0x1.2a05f2p+33f});
}

} // namespace
