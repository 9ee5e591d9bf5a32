//===- Kernel.cpp - A compiled spec loaded into this process --------------===//
//
// The kernel's object is linked by ORC's LLJIT, so that a kernel compiled
// now and one read back from the compile cache load the same way. Its
// undefined symbols resolve against this process: libomp (loaded here), the
// C library and, for GPU code, the mgpu* functions of the attn GPU runtime
// that the program links.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Kernel.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Emulation/WarpRuntime.h"

#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>
#include <mutex>
#include <thread>

#include <sched.h>

using namespace attn;
using namespace attn::compiler;

#ifndef ATTN_LLVM_LIBRARY_DIR
#error "ATTN_LLVM_LIBRARY_DIR must name the LLVM library directory"
#endif

/// The OpenMP runtime the generated parallel loops call into.
static constexpr const char *kOpenMPRuntime =
    ATTN_LLVM_LIBRARY_DIR "/libomp.so";

/// omp_set_num_threads of the libomp the kernels call into, once loaded.
static void (*setOpenMPThreads)(int) = nullptr;

int64_t attn::compiler::maxThreads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

bool attn::compiler::checkThreadCount(int64_t threads,
                                      const std::string &option,
                                      std::string &error) {
  // libomp aborts the process when it cannot start a thread, so a count
  // far beyond the machine is refused here rather than attempted. Up to
  // kOversubscription threads per hardware thread are allowed (they only
  // share the cores).
  int64_t most = kOversubscription * maxThreads();
  if (threads >= 0 && threads <= most)
    return true;
  error = option + " must be between 1 and " + std::to_string(most) + " (" +
          std::to_string(kOversubscription) + " per hardware thread this " +
          "process may use), or 0 for one per hardware thread; got " +
          std::to_string(threads);
  return false;
}

/// Loads libomp into the process once; "" or why it failed.
static std::string loadOpenMP(int64_t threads) {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [&] {
    if (threads > 0)
      // libomp reads it when it starts, which is when it is loaded.
      setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
    if (!llvm::sys::fs::exists(kOpenMPRuntime)) {
      failure = std::string(kOpenMPRuntime) +
                " is missing (scripts/install-deps.sh installs it)";
      return;
    }
    std::string why;
    llvm::sys::DynamicLibrary libomp =
        llvm::sys::DynamicLibrary::getPermanentLibrary(kOpenMPRuntime, &why);
    if (!libomp.isValid()) {
      failure = "cannot load " + std::string(kOpenMPRuntime) + ": " + why;
      return;
    }
    // From libomp itself: a process that also holds libgomp (PyTorch's)
    // would otherwise find libgomp's, and libomp would keep its first count.
    setOpenMPThreads = reinterpret_cast<void (*)(int)>(
        libomp.getAddressOfSymbol("omp_set_num_threads"));
  });
  return failure;
}

std::unique_ptr<Kernel> Kernel::load(const std::string &object, EntryAbi abi,
                                     int64_t threads, std::string &error) {
  initializeNativeTarget();
  if (!checkThreadCount(threads, "the thread count", error))
    return nullptr;
  error = loadOpenMP(threads);
  if (!error.empty())
    return nullptr;

  std::unique_ptr<Kernel> kernel(new Kernel());
  kernel->abi = std::move(abi);
  kernel->threads = threads;
  auto fail = [&](llvm::Error err) -> std::unique_ptr<Kernel> {
    error = llvm::toString(std::move(err));
    return nullptr;
  };
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return fail(jit.takeError());
  kernel->jit = std::move(*jit);
  // Link errors come back through lookup(); keep them off stderr.
  kernel->jit->getExecutionSession().setErrorReporter(
      [](llvm::Error err) { llvm::consumeError(std::move(err)); });
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      kernel->jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return fail(process.takeError());
  kernel->jit->getMainJITDylib().addGenerator(std::move(*process));
  // The warp instructions of GPU kernels emulated on the host.
  llvm::orc::SymbolMap warpRuntime;
  for (auto &[name, address] : emulation::warpRuntimeSymbols())
    warpRuntime[kernel->jit->mangleAndIntern(name)] = {
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (llvm::Error err = kernel->jit->getMainJITDylib().define(
          llvm::orc::absoluteSymbols(std::move(warpRuntime))))
    return fail(std::move(err));
  if (llvm::Error err = kernel->jit->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, "attn-kernel.o")))
    return fail(std::move(err));

  const std::string &entryName = kernel->abi.entryName;
  auto entry = kernel->jit->lookup(entryName + "_packed");
  if (!entry)
    return fail(entry.takeError());
  kernel->entry = entry->toPtr<int (*)(void *const *, const int64_t *)>();
  auto init = kernel->jit->lookup(entryName + "_init");
  auto fini = kernel->jit->lookup(entryName + "_fini");
  if (!init)
    return fail(init.takeError());
  if (!fini)
    return fail(fini.takeError());
  // Loads the GPU kernels' module (nothing for CPU code).
  init->toPtr<void (*)()>()();
  kernel->fini = fini->toPtr<void (*)()>();
  return kernel;
}

Kernel::~Kernel() {
  if (fini)
    fini();
}

int Kernel::call(void *const *arrays, const int64_t *sizes) {
  // The thread count of the first kernel reached libomp through
  // OMP_NUM_THREADS; later kernels set theirs per call.
  if (threads > 0 && setOpenMPThreads)
    setOpenMPThreads(static_cast<int>(threads));
  return entry(arrays, sizes);
}
