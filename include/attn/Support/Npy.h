//===- Npy.h - NumPy .npy reading and writing ------------------*- C++ -*-===//
//
// Reads and writes the NumPy .npy format (NEP 1, versions 1.0, 2.0 and 3.0)
// for the dense f32 tensors that the driver and the tests exchange with
// Python. Only the standard library is used and nothing throws, so that the
// file builds with -fno-exceptions and without LLVM.
//
// Reading accepts exactly what a float tensor written by numpy looks like:
// little-endian float16, float32 or float64 (float16 is widened exactly,
// float64 rounded to float32), C order,
// any rank including 0-d. Everything else (other dtypes, big-endian data,
// Fortran order, a malformed header, a size mismatch) is an error with a
// one-line message, never a crash: the header parser is written to survive
// arbitrary bytes.
//
// Writing produces what `np.save` produces for a C-contiguous '<f4' array,
// byte for byte, so files made here and files made by numpy are
// interchangeable and diffable.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_NPY_H
#define ATTN_SUPPORT_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace npy {

/// A dense row-major f32 tensor. `data.size()` is the product of `shape`
/// (1 for a 0-d array, whose `shape` is empty).
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
  /// The file held integers ('<i4' or '<i8'), converted to float32 as
  /// numpy's astype does (exact up to 2^24): only inputs that hold whole
  /// numbers (lengths) take them.
  std::string integerDtype;
};

/// Parses the bytes of a .npy file into `out`.
///
/// Accepts format versions 1.0, 2.0 and 3.0 and the dtypes '<f2', '<f4',
/// '<f8', '<i4' and '<i8' ('=f4' and the bare 'f4' mean native order and are
/// accepted only on a little-endian host); float16 values are widened
/// exactly (the f16 inputs of a spec, docs/language.md §4.1), float64 and
/// integer values are
/// rounded to the nearest float32 (out-of-range values become ±inf, as
/// numpy's astype does) and integers are marked (Array::integerDtype).
/// Rejects any other dtype, big-endian or byte-order-free ('|') floats,
/// `'fortran_order': True`, header dictionaries that are not exactly the
/// three keys numpy writes, negative dimensions, element counts that overflow
/// int64 or size_t, and data shorter or longer than the header declares.
///
/// Returns "" on success, or a one-line message such as
/// "unsupported dtype '<c8': only float16, float32, float64, int32 and int64
/// are accepted". On
/// failure `out` is left unchanged.
std::string parse(const std::string &bytes, Array &out);

/// Reads and parses the file at `path`. Every error message names the path,
/// e.g. "cannot open 'x.npy': No such file or directory". On failure `out`
/// is left unchanged.
std::string read(const std::string &path, Array &out);

/// Serializes `array` as numpy's `np.save` does for a C-order '<f4' array:
/// format 1.0 (2.0 only if the header would not fit in 1.0, as numpy
/// decides), the header padded with spaces and ended by '\n' so that the data
/// starts at a multiple of 64 bytes, and the data in little-endian order on
/// any host.
///
/// Precondition: every dimension is non-negative and `array.data.size()` is
/// their product; write() checks this, serialize() only asserts it.
std::string serialize(const Array &array);

/// Writes `array` to `path` atomically: the bytes go to a fresh temporary
/// file in the same directory, which is then renamed over `path`, so a reader
/// sees either the old file or the complete new one, and a failure leaves no
/// partial file behind (the temporary is removed). Returns "" on success or a
/// message naming the path.
std::string write(const std::string &path, const Array &array);

} // namespace npy
} // namespace attn

#endif // ATTN_SUPPORT_NPY_H
