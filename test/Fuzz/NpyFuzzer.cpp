//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ---------------===//
//
// Feeds arbitrary bytes to attn::npy::parse and checks what Npy.h promises:
//
//  * an error is a non-empty, one-line, printable message and leaves the
//    output array unchanged;
//  * an accepted array has data.size() equal to the product of its
//    non-negative shape;
//  * serialize() of an accepted array is aligned as np.save writes it
//    (magic, version 1.0 or 2.0, the data at a multiple of 64 bytes, the
//    header ended by '\n'), parses back to the same shape and bit-identical
//    data, and serializing that again gives the same bytes.
//
// Built with -fsanitize=fuzzer,address by test/Fuzz/CMakeLists.txt; run by
// test/Fuzz/npy-fuzzer.test with test/Fuzz/corpus-npy as the seed corpus.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "attn/Support/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

using attn::fuzz::escape;
using attn::fuzz::isOnePrintableLine;
namespace npy = attn::npy;

namespace {

std::string showShape(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size() && i < 8; ++i)
    out += std::to_string(shape[i]) + ",";
  if (shape.size() > 8)
    out += "... " + std::to_string(shape.size()) + " dims";
  return out + ")";
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         (a.empty() ||
          std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

/// A recognisable array that parse() must not touch when it fails.
npy::Array sentinel() {
  npy::Array array;
  array.shape = {3, 1};
  array.data = {1.5f, -2.0f, 42.0f};
  return array;
}

void checkSerialized(const std::string &bytes, const npy::Array &array) {
  FUZZ_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0,
             "serialize() wrote no magic string");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  FUZZ_CHECK((major == 1 || major == 2) && minor == 0,
             "serialize() wrote version " + std::to_string(major) + "." +
                 std::to_string(minor));
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t headerSize = 0;
  for (size_t i = 0; i < lengthSize; ++i)
    headerSize |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
                  << (8 * i);
  size_t dataStart = 8 + lengthSize + headerSize;
  FUZZ_CHECK(dataStart % 64 == 0,
             "serialize() put the data at offset " + std::to_string(dataStart));
  FUZZ_CHECK(dataStart <= bytes.size() && bytes[dataStart - 1] == '\n',
             "serialize() did not end the header with a newline");
  FUZZ_CHECK(bytes.size() - dataStart == 4 * array.data.size(),
             "serialize() wrote " + std::to_string(bytes.size() - dataStart) +
                 " data bytes for " + std::to_string(array.data.size()) +
                 " elements");
  FUZZ_CHECK(major == 1 || headerSize > 0xffff - 64,
             "serialize() used version 2.0 for a header that fits 1.0");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  npy::Array array = sentinel();
  std::string err = npy::parse(bytes, array);
  if (!err.empty()) {
    FUZZ_CHECK(isOnePrintableLine(err),
               "error is not one line of printable ASCII: '" + escape(err) +
                   "'");
    npy::Array untouched = sentinel();
    FUZZ_CHECK(array.shape == untouched.shape &&
                   sameBits(array.data, untouched.data),
               "a failed parse changed its output ('" + err + "')");
    return 0;
  }

  // An accepted array is consistent.
  uint64_t count = 1;
  bool hasZero = false;
  for (int64_t dim : array.shape) {
    FUZZ_CHECK(dim >= 0, "accepted shape " + showShape(array.shape));
    if (dim == 0)
      hasZero = true;
    else
      count *= static_cast<uint64_t>(dim); // cannot overflow: parse checked it
  }
  if (hasZero)
    count = 0;
  FUZZ_CHECK(array.data.size() == count,
             "shape " + showShape(array.shape) + " with " +
                 std::to_string(array.data.size()) + " elements");

  // serialize -> parse round trip.
  std::string written = npy::serialize(array);
  checkSerialized(written, array);
  npy::Array back = sentinel();
  std::string backErr = npy::parse(written, back);
  FUZZ_CHECK(backErr.empty(),
             "parse rejected serialize()'s output: " + escape(backErr));
  FUZZ_CHECK(back.shape == array.shape,
             "round trip changed the shape " + showShape(array.shape) +
                 " to " + showShape(back.shape));
  FUZZ_CHECK(sameBits(back.data, array.data),
             "round trip changed the data of shape " + showShape(array.shape));
  FUZZ_CHECK(npy::serialize(back) == written,
             "serialize() is not stable across a round trip");
  return 0;
}
