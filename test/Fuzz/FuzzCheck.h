//===- FuzzCheck.h - Invariant checks for the libFuzzer targets -*- C++ -*-===//
//
// FUZZ_CHECK(cond, what) reports a broken invariant and aborts, so that
// libFuzzer records the input as a crash. Unlike assert() it stays active
// under -DNDEBUG (CMAKE_BUILD_TYPE=Release adds it to every compile).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_FUZZ_FUZZCHECK_H
#define ATTN_TEST_FUZZ_FUZZCHECK_H

#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn {
namespace fuzz {

[[noreturn]] inline void checkFailed(const char *file, int line,
                                     const char *cond, const std::string &what) {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n  %s\n", file, line,
               cond, what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Renders arbitrary bytes for a message: printable ASCII as is, the rest as
/// \xNN.
inline std::string escape(const std::string &text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

/// True if \p text is one line of printable ASCII (what a diagnostic must be).
inline bool isOnePrintableLine(const std::string &text) {
  for (unsigned char c : text)
    if (c < 0x20 || c >= 0x7f)
      return false;
  return true;
}

} // namespace fuzz
} // namespace attn

#define FUZZ_CHECK(cond, what)                                                 \
  do {                                                                         \
    if (!(cond))                                                               \
      ::attn::fuzz::checkFailed(__FILE__, __LINE__, #cond, (what));            \
  } while (false)

#endif // ATTN_TEST_FUZZ_FUZZCHECK_H
