//===- RunInputs.h - The input arrays of one run of a spec ------*- C++ -*-===//
//
// Input binding shared by attnc, attn-gpu-runner and the C API: arrays read
// from DIR/<input>.npy (binding the dynamic sizes they determine), the rest
// generated (RunSetup.h), and the whole set saved again. Plain C++ (no
// LLVM/MLIR): the GPU runner builds it on a machine without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_RUNINPUTS_H
#define ATTN_FRONTEND_RUNINPUTS_H

#include "attn/Frontend/RunSetup.h"

#include <map>
#include <string>

namespace attn {
namespace frontend {

/// The inputs of one run, with the sizes they bind.
class RunInputs {
public:
  explicit RunInputs(const Spec &spec) : spec(spec) {}

  /// Records that the sizes in \p sizes were bound \p origin ("from
  /// --set"), for the messages of load().
  void noteBound(const SizeBindings &sizes, const std::string &origin);

  /// Reads DIR/<name>.npy for every input found there, binding the dynamic
  /// sizes it determines into \p sizes, which holds the sizes bound so far.
  /// Returns "" or the message of the first mismatch or unreadable file.
  std::string load(const std::string &dir, SizeBindings &sizes);

  /// Generates every input not read, as attn-gpu-runner does; "" or why not.
  std::string generate(const SizeBindings &sizes, uint64_t seed);

  /// Writes every input to DIR/<name>.npy (creating DIR); "" or why not.
  std::string save(const std::string &dir) const;

  const npy::Array &get(const std::string &name) const {
    return arrays.at(name);
  }
  const InputArrays &all() const { return arrays; }

  /// Binds the sizes of \p input from an array of \p shape found at
  /// \p where (a file, or an argument's name); "" or the mismatch.
  std::string bindShape(const InputDecl &input, const std::string &where,
                        const std::vector<int64_t> &shape,
                        SizeBindings &sizes);

private:
  const Spec &spec;
  InputArrays arrays;
  /// Where each bound size came from, for messages.
  std::map<std::string, std::string> boundFrom;
};

/// Creates \p path and its parents; "" or why not.
std::string createDirectories(const std::string &path);

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_RUNINPUTS_H
