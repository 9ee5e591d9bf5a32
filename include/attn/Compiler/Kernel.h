//===- Kernel.h - A compiled spec loaded into this process ------*- C++ -*-===//

#ifndef ATTN_COMPILER_KERNEL_H
#define ATTN_COMPILER_KERNEL_H

#include "attn/Target/CHeader/EntryAbi.h"

#include <memory>
#include <string>

namespace llvm {
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace attn {
namespace compiler {

/// The most threads the compiled CPU code may run on: the hardware threads
/// this process may use (its CPU affinity), at least 1.
int64_t maxThreads();

/// Threads per hardware thread that a thread count may ask for.
constexpr int64_t kOversubscription = 4;

/// Whether \p threads (0: one per hardware thread) is a thread count the
/// compiled code can run with, at most kOversubscription * maxThreads();
/// else \p error says why, naming \p option.
bool checkThreadCount(int64_t threads, const std::string &option,
                      std::string &error);

/// The object of Compiler::compileKernelObject, linked into this process
/// (ORC LLJIT) against libomp and, for GPU code, the attn GPU runtime.
class Kernel {
public:
  ~Kernel();

  /// Links \p object (which defines `<entry>_packed`, and `<entry>_init` /
  /// `_fini` when it loads GPU kernels). \p threads > 0 fixes the OpenMP
  /// threads of every call. Returns null with \p error set.
  static std::unique_ptr<Kernel> load(const std::string &object, EntryAbi abi,
                                      int64_t threads, std::string &error);

  const EntryAbi &getAbi() const { return abi; }

  /// Calls the entry point: \p arrays are the inputs then the output (host
  /// pointers for CPU code, device pointers for GPU code), \p sizes the
  /// dynamic sizes. Returns its status (attn::EntryStatus).
  int call(void *const *arrays, const int64_t *sizes);

private:
  Kernel() = default;

  EntryAbi abi;
  int64_t threads = 0;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int (*entry)(void *const *, const int64_t *) = nullptr;
  void (*fini)() = nullptr;
};

} // namespace compiler
} // namespace attn

#endif // ATTN_COMPILER_KERNEL_H
