//===- Npy.cpp - NumPy .npy reading and writing ---------------------------===//
//
// The .npy format (NEP 1) is a 6-byte magic string, a 2-byte version, a
// little-endian header length (2 bytes in version 1.0, 4 in 2.0 and 3.0), a
// header holding a Python dict literal, and the raw array data.
//
// The header is read by a small recursive-descent parser for the subset of
// Python literal syntax that numpy writes and that we can use: single- or
// double-quoted strings without escapes, True/False, and tuples of
// non-negative integers. Every read is bounds-checked against the end of the
// header, so arbitrary bytes produce an error message, never an
// out-of-bounds access.
//
// Data is decoded and encoded byte by byte in little-endian order instead of
// by memcpy of the whole buffer, so that the code is right on a big-endian
// host as well and never depends on the alignment of the input.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"
#include "attn/Support/AtomicFile.h"
#include "attn/Support/ElementType.h"

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn;
using namespace attn::npy;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
/// numpy pads the header so that the data starts at a multiple of this.
constexpr size_t kArrayAlign = 64;
/// numpy leaves room after the dict for the growing axis to reach this many
/// digits, so that appending to the file can rewrite the header in place; we
/// copy it to stay byte-identical with np.save.
constexpr size_t kGrowthAxisMaxDigits = 21;

std::string errnoMessage(int err) {
  return std::generic_category().message(err);
}

/// Renders untrusted header text for a message: printable ASCII as is,
/// anything else as \xNN, and long text cut, so that the message stays one
/// readable line whatever bytes the file holds.
std::string quoteForMessage(const std::string &text) {
  constexpr size_t kMaxShown = 32;
  std::string result;
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      result += static_cast<char>(c);
      continue;
    }
    static const char kHex[] = "0123456789abcdef";
    result += "\\x";
    result += kHex[c >> 4];
    result += kHex[c & 0xf];
  }
  if (text.size() > kMaxShown)
    result += "...";
  return result;
}

/// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)". Used both in the
/// header we write (where it must match numpy exactly) and in messages.
std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string result = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0)
      result += ", ";
    result += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    result += ",";
  result += ")";
  return result;
}

/// Shapes in messages are cut so that a hostile header with thousands of
/// dimensions still gives a short message.
std::string shapeForMessage(const std::vector<int64_t> &shape) {
  constexpr size_t kMaxShown = 8;
  if (shape.size() <= kMaxShown)
    return shapeRepr(shape);
  std::string result = "(";
  for (size_t i = 0; i < kMaxShown; ++i)
    result += std::to_string(shape[i]) + ", ";
  return result + "... (" + std::to_string(shape.size()) + " dimensions))";
}

/// Computes the element count of `shape`, or returns false if a dimension is
/// negative or the product of the non-zero dimensions overflows int64. The
/// non-zero product is checked even when some dimension is zero, so that the
/// answer does not depend on the order of the dimensions and a caller who
/// multiplies a prefix of them can never overflow.
bool elementCount(const std::vector<int64_t> &shape, uint64_t &count) {
  uint64_t product = 1;
  bool hasZero = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    if (dim == 0) {
      hasZero = true;
      continue;
    }
    if (product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) /
                      static_cast<uint64_t>(dim))
      return false;
    product *= static_cast<uint64_t>(dim);
  }
  count = hasZero ? 0 : product;
  return true;
}

bool hostIsLittleEndian() {
  const uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

uint64_t loadLittleEndian(const unsigned char *p, size_t size) {
  uint64_t value = 0;
  for (size_t i = size; i-- > 0;)
    value = (value << 8) | p[i];
  return value;
}

void storeLittleEndian(std::string &out, uint64_t value, size_t size) {
  for (size_t i = 0; i < size; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

/// The three entries of a .npy header dict, and which of them were seen.
struct Header {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  bool hasDescr = false, hasFortranOrder = false, hasShape = false;
};

/// Parses a header dict. Every member function that consumes input returns
/// "" or an error message, and checks `atEnd()` before each `peek()`.
class HeaderParser {
public:
  HeaderParser(const char *begin, const char *end)
      : begin(begin), pos(begin), end(end) {}

  std::string parse(Header &header);

private:
  bool atEnd() const { return pos == end; }
  char peek() const { return *pos; }
  bool consumeIf(char c) {
    if (atEnd() || peek() != c)
      return false;
    ++pos;
    return true;
  }
  /// Whitespace as Python's tokenizer sees it inside brackets.
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r' || peek() == '\f'))
      ++pos;
  }
  /// True if the next character would continue a Python name or number, so
  /// that "Truex", "2x" or "2.0" are not taken for True or 2.
  bool atWordCharacter() const {
    if (atEnd())
      return false;
    char c = peek();
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.';
  }
  std::string error(const std::string &what) const {
    return "malformed .npy header: " + what + " at header byte " +
           std::to_string(pos - begin);
  }

  std::string parseString(std::string &value);
  std::string parseBool(bool &value);
  std::string parseShape(std::vector<int64_t> &shape);
  std::string parseDimension(int64_t &value);
  std::string parseEntry(Header &header);

  const char *begin;
  const char *pos;
  const char *end;
};

} // namespace

std::string HeaderParser::parseString(std::string &value) {
  if (atEnd() || (peek() != '\'' && peek() != '"'))
    return error("expected a string");
  char quote = *pos++;
  const char *start = pos;
  while (!atEnd() && peek() != quote) {
    // numpy never escapes anything in the strings it writes, and the strings
    // we accept ('descr' values and keys) cannot need escapes.
    if (peek() == '\\')
      return error("escape sequences in strings are not supported");
    if (peek() == '\n')
      return error("unterminated string");
    ++pos;
  }
  if (atEnd())
    return error("unterminated string");
  value.assign(start, pos);
  ++pos;
  return "";
}

std::string HeaderParser::parseBool(bool &value) {
  auto match = [&](const char *word) {
    size_t length = std::strlen(word);
    if (static_cast<size_t>(end - pos) < length ||
        std::memcmp(pos, word, length) != 0)
      return false;
    const char *saved = pos;
    pos += length;
    if (atWordCharacter()) {
      pos = saved;
      return false;
    }
    return true;
  };
  if (match("True")) {
    value = true;
    return "";
  }
  if (match("False")) {
    value = false;
    return "";
  }
  return error("'fortran_order' must be True or False");
}

std::string HeaderParser::parseDimension(int64_t &value) {
  if (!atEnd() && peek() == '-') {
    const char *minus = pos++;
    skipSpace();
    if (!atEnd() && peek() >= '0' && peek() <= '9') {
      const char *digits = pos;
      while (!atEnd() && peek() >= '0' && peek() <= '9')
        ++pos;
      return "shape has a negative dimension -" +
             quoteForMessage(std::string(digits, pos));
    }
    pos = minus;
  }
  if (atEnd() || peek() < '0' || peek() > '9')
    return error("expected a non-negative integer in 'shape'");
  uint64_t result = 0;
  const uint64_t limit = std::numeric_limits<int64_t>::max();
  while (!atEnd() && peek() >= '0' && peek() <= '9') {
    uint64_t digit = static_cast<uint64_t>(peek() - '0');
    if (result > (limit - digit) / 10)
      return "shape has a dimension that does not fit in 64 bits";
    result = result * 10 + digit;
    ++pos;
  }
  // Python 2 wrote longs as "3L"; numpy strips the suffix when reading 1.0
  // and 2.0 files, and accepting it everywhere costs nothing.
  if (!atEnd() && (peek() == 'L' || peek() == 'l'))
    ++pos;
  if (atWordCharacter())
    return error("'shape' entries must be plain decimal integers");
  value = static_cast<int64_t>(result);
  return "";
}

std::string HeaderParser::parseShape(std::vector<int64_t> &shape) {
  if (!consumeIf('('))
    return error("'shape' must be a tuple");
  shape.clear();
  skipSpace();
  if (consumeIf(')'))
    return "";
  bool sawComma = false;
  while (true) {
    int64_t dim = 0;
    if (std::string err = parseDimension(dim); !err.empty())
      return err;
    shape.push_back(dim);
    skipSpace();
    if (consumeIf(',')) {
      sawComma = true;
      skipSpace();
      if (consumeIf(')'))
        return "";
      continue;
    }
    if (atEnd() || peek() != ')')
      return error("expected ',' or ')' in 'shape'");
    // "(5)" is the integer 5 in Python, not a tuple, and numpy rejects it.
    if (!sawComma)
      return error("'shape' must be a tuple; a 1-d shape is written (n,)");
    ++pos;
    return "";
  }
}

std::string HeaderParser::parseEntry(Header &header) {
  std::string key;
  if (std::string err = parseString(key); !err.empty())
    return err;
  skipSpace();
  if (!consumeIf(':'))
    return error("expected ':' after a key");
  skipSpace();
  auto duplicate = [&](bool &seen) {
    bool was = seen;
    seen = true;
    return was;
  };
  if (key == "descr") {
    if (duplicate(header.hasDescr))
      return error("duplicate key 'descr'");
    // A list here is a structured dtype; say so rather than "expected a
    // string", which would suggest the file is corrupt.
    if (!atEnd() && peek() == '[')
      return "unsupported structured dtype: only float32 and float64 are "
             "accepted";
    return parseString(header.descr);
  }
  if (key == "fortran_order") {
    if (duplicate(header.hasFortranOrder))
      return error("duplicate key 'fortran_order'");
    return parseBool(header.fortranOrder);
  }
  if (key == "shape") {
    if (duplicate(header.hasShape))
      return error("duplicate key 'shape'");
    return parseShape(header.shape);
  }
  return error("unexpected key '" + quoteForMessage(key) + "'");
}

std::string HeaderParser::parse(Header &header) {
  skipSpace();
  if (!consumeIf('{'))
    return error("expected '{'");
  while (true) {
    skipSpace();
    if (consumeIf('}'))
      break;
    if (std::string err = parseEntry(header); !err.empty())
      return err;
    skipSpace();
    if (consumeIf(','))
      continue;
    if (consumeIf('}'))
      break;
    return error("expected ',' or '}'");
  }
  // numpy pads with spaces and ends with '\n'; anything else is not ours.
  skipSpace();
  if (!atEnd())
    return error("unexpected text after the dictionary");
  if (!header.hasDescr)
    return "malformed .npy header: missing key 'descr'";
  if (!header.hasFortranOrder)
    return "malformed .npy header: missing key 'fortran_order'";
  if (!header.hasShape)
    return "malformed .npy header: missing key 'shape'";
  return "";
}

/// Checks a 'descr' value and returns the element size (4 or 8) in
/// `elementSize`, or an error message.
static std::string checkDescr(const std::string &descr, size_t &elementSize,
                              bool &integral) {
  std::string shown = "'" + quoteForMessage(descr) + "'";
  std::string kind = descr;
  char order = '\0';
  if (!kind.empty() &&
      (kind[0] == '<' || kind[0] == '>' || kind[0] == '=' || kind[0] == '|')) {
    order = kind[0];
    kind.erase(0, 1);
  }
  if (kind != "f2" && kind != "f4" && kind != "f8" && kind != "i4" &&
      kind != "i8")
    return "unsupported dtype " + shown +
           ": only float16, float32, float64, int32 and int64 are accepted";
  elementSize = kind == "f2" ? 2 : kind == "f4" || kind == "i4" ? 4 : 8;
  integral = kind[0] == 'i';
  if (order == '>')
    return "unsupported dtype " + shown +
           ": big-endian data is not supported, only little-endian";
  if (order == '|')
    return "invalid dtype " + shown +
           ": a float needs a byte order ('<'), not '|'";
  // '=' (or no prefix) means native order, which is only what we decode if
  // the host is little-endian.
  if (order != '<' && !hostIsLittleEndian())
    return "unsupported dtype " + shown +
           ": native order is big-endian on this host, only little-endian "
           "data is supported";
  return "";
}

std::string npy::parse(const std::string &bytes, Array &out) {
  const unsigned char *data =
      reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < kMagicLen || std::memcmp(data, kMagic, kMagicLen) != 0)
    return "not a .npy file: the magic string \\x93NUMPY is missing";
  if (bytes.size() < kMagicLen + 2)
    return "file is truncated: it ends inside the format version";
  unsigned major = data[6], minor = data[7];
  size_t lengthSize;
  if (major == 1 && minor == 0)
    lengthSize = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthSize = 4;
  else
    return "unsupported .npy format version " + std::to_string(major) + "." +
           std::to_string(minor) + ": only 1.0, 2.0 and 3.0 are accepted";
  size_t prefixSize = kMagicLen + 2 + lengthSize;
  if (bytes.size() < prefixSize)
    return "file is truncated: it ends inside the header length";
  uint64_t headerSize = loadLittleEndian(data + kMagicLen + 2, lengthSize);
  if (headerSize > bytes.size() - prefixSize)
    return "file is truncated: expected " + std::to_string(headerSize) +
           " header bytes, found " + std::to_string(bytes.size() - prefixSize);

  // Version 3.0 headers are UTF-8 and older ones Latin-1; both are ASCII in
  // everything we accept, so the parser works on bytes.
  const char *headerBegin = bytes.data() + prefixSize;
  Header header;
  HeaderParser parser(headerBegin, headerBegin + headerSize);
  if (std::string err = parser.parse(header); !err.empty())
    return err;

  size_t elementSize = 0;
  bool integral = false;
  if (std::string err = checkDescr(header.descr, elementSize, integral);
      !err.empty())
    return err;
  if (header.fortranOrder)
    return "Fortran-order arrays are not supported";
  uint64_t count = 0;
  if (!elementCount(header.shape, count))
    return "the element count of shape " + shapeForMessage(header.shape) +
           " overflows";
  if (count > std::numeric_limits<size_t>::max() / elementSize)
    return "the data size of shape " + shapeForMessage(header.shape) +
           " overflows";

  // Sizes are checked before anything is allocated, so a header claiming a
  // huge shape cannot make us reserve memory the file does not back.
  size_t dataStart = prefixSize + static_cast<size_t>(headerSize);
  size_t expected = static_cast<size_t>(count) * elementSize;
  size_t found = bytes.size() - dataStart;
  if (found < expected)
    return "file is truncated: expected " + std::to_string(expected) +
           " data bytes, found " + std::to_string(found);
  if (found > expected)
    return "unexpected trailing bytes: expected " + std::to_string(expected) +
           " data bytes, found " + std::to_string(found);

  Array result;
  result.shape = std::move(header.shape);
  if (integral)
    result.integerDtype = header.descr;
  result.data.resize(static_cast<size_t>(count));
  const unsigned char *p = data + dataStart;
  for (float &value : result.data) {
    uint64_t bits = loadLittleEndian(p, elementSize);
    p += elementSize;
    if (integral && elementSize == 4) {
      int32_t whole;
      uint32_t narrowBits = static_cast<uint32_t>(bits);
      std::memcpy(&whole, &narrowBits, sizeof(whole));
      value = static_cast<float>(whole);
    } else if (integral) {
      int64_t whole;
      std::memcpy(&whole, &bits, sizeof(whole));
      value = static_cast<float>(whole);
    } else if (elementSize == 2) {
      // Exact: every float16 is a float32.
      value = halfBitsToFloat(static_cast<uint16_t>(bits));
    } else if (elementSize == 4) {
      uint32_t narrowBits = static_cast<uint32_t>(bits);
      std::memcpy(&value, &narrowBits, sizeof(value));
    } else {
      double wide;
      std::memcpy(&wide, &bits, sizeof(wide));
      // IEEE conversion rounds to nearest-even and overflows to ±inf, which
      // is exactly numpy's astype(float32).
      value = static_cast<float>(wide);
    }
  }
  out = std::move(result);
  return "";
}

std::string npy::read(const std::string &path, Array &out) {
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return "cannot open '" + path + "': " + errnoMessage(errno);
  std::string bytes;
  struct stat info;
  if (::fstat(fd, &info) == 0 && info.st_size > 0)
    bytes.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int err = errno;
      ::close(fd);
      return "cannot read '" + path + "': " + errnoMessage(err);
    }
    if (got == 0)
      break;
    bytes.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  if (std::string err = parse(bytes, out); !err.empty())
    return "invalid .npy file '" + path + "': " + err;
  return "";
}

std::string npy::serialize(const Array &array) {
  uint64_t count = 0;
  (void)count;
  assert(elementCount(array.shape, count) && count == array.data.size() &&
         "shape and data size disagree");

  // Exactly the text numpy's _write_array_header builds: keys sorted, each
  // followed by ", ", then spare room for the growing (first) axis.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " +
                     shapeRepr(array.shape) + ", }";
  if (!array.shape.empty())
    dict.append(
        kGrowthAxisMaxDigits - std::to_string(array.shape.front()).size(), ' ');

  // Like numpy's _wrap_header: pad with 1 to 64 spaces plus '\n' so that the
  // data is aligned, using version 2.0 only when 1.0's 16-bit length is too
  // small.
  auto paddedSize = [&](size_t prefixSize) {
    size_t withNewline = dict.size() + 1;
    return withNewline +
           (kArrayAlign - (prefixSize + withNewline) % kArrayAlign);
  };
  unsigned major = 1;
  size_t lengthSize = 2;
  size_t headerSize = paddedSize(kMagicLen + 2 + lengthSize);
  if (headerSize > 0xffff) {
    major = 2;
    lengthSize = 4;
    headerSize = paddedSize(kMagicLen + 2 + lengthSize);
  }

  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(major);
  out += '\0';
  storeLittleEndian(out, headerSize, lengthSize);
  out += dict;
  out.append(headerSize - dict.size() - 1, ' ');
  out += '\n';
  out.reserve(out.size() + 4 * array.data.size());
  for (float value : array.data) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    storeLittleEndian(out, bits, 4);
  }
  return out;
}

std::string npy::write(const std::string &path, const Array &array) {
  uint64_t count = 0;
  if (!elementCount(array.shape, count))
    return "cannot write '" + path + "': invalid shape " +
           shapeForMessage(array.shape);
  if (count != array.data.size())
    return "cannot write '" + path + "': shape " +
           shapeForMessage(array.shape) + " holds " + std::to_string(count) +
           " elements but the data has " + std::to_string(array.data.size());
  std::string bytes = serialize(array);

  return writeFilesAtomically({{path, std::move(bytes)}});
}
