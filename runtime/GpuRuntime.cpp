//===- GpuRuntime.cpp - attn's GPU runtime over the CUDA driver API -------===//
//
// Implements MLIR's `mgpu*` runtime ABI (what gpu-to-llvm and the gpu.binary
// translation call) and the attn_gpu_* host interface of GpuRuntime.h.
//
// The CUDA driver is dlopen'ed on first use instead of linked, so that the
// library (and everything linking it) builds and runs on machines without an
// NVIDIA driver. For the same reason nothing here may abort: generated code
// has no way to handle errors, so each failure is recorded for the host to
// read with attn_gpu_error() and the call degrades to a no-op returning null.
// The nulls then flow through the generated code (null module -> null
// function -> no launch) without further damage.
//
//===----------------------------------------------------------------------===//

#include "GpuRuntime.h"

#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

//===----------------------------------------------------------------------===//
// MLIR's runtime ABI
//===----------------------------------------------------------------------===//

// The signatures MLIR 22 declares when it lowers the gpu dialect to LLVM
// (GPUToLLVMConversion.cpp, SelectObjectAttr.cpp). Handles are opaque `void *`
// here: the generated code only passes them back.
extern "C" {
ATTN_GPU_EXPORT void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
ATTN_GPU_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel);
ATTN_GPU_EXPORT void mgpuModuleUnload(void *module);
ATTN_GPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);
ATTN_GPU_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                      intptr_t gridY, intptr_t gridZ,
                                      intptr_t blockX, intptr_t blockY,
                                      intptr_t blockZ, int32_t smem,
                                      void *stream, void **params, void **extra,
                                      size_t paramsCount);
ATTN_GPU_EXPORT void *mgpuStreamCreate(void);
ATTN_GPU_EXPORT void mgpuStreamDestroy(void *stream);
ATTN_GPU_EXPORT void mgpuStreamSynchronize(void *stream);
ATTN_GPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event);
ATTN_GPU_EXPORT void *mgpuEventCreate(void);
ATTN_GPU_EXPORT void mgpuEventDestroy(void *event);
ATTN_GPU_EXPORT void mgpuEventSynchronize(void *event);
ATTN_GPU_EXPORT void mgpuEventRecord(void *event, void *stream);
ATTN_GPU_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                   bool isHostShared);
ATTN_GPU_EXPORT void mgpuMemFree(void *ptr, void *stream);
ATTN_GPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                void *stream);
ATTN_GPU_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                  void *stream);
ATTN_GPU_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                  void *stream);
ATTN_GPU_EXPORT void mgpuSetDefaultDevice(int32_t device);
} // extern "C"

namespace {

//===----------------------------------------------------------------------===//
// The slice of cuda.h used here
//===----------------------------------------------------------------------===//

// Declared by hand so that no CUDA toolkit is needed to build. Types, values
// and signatures are those of cuda.h (CUDA 12/13), whose driver ABI is stable.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr CUresult kCudaErrorDeinitialized = 4;
// CUjit_option (an enum, so int-sized).
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitOptimizationLevel = 7;
// CUfunction_attribute.
constexpr int kFuncAttributeMaxDynamicSharedSizeBytes = 8;
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr unsigned kEventDisableTiming = 0x2;
constexpr unsigned kMemAttachGlobal = 0x1;
// Dynamic shared memory a kernel may use without opting in.
constexpr int32_t kDefaultSharedMemoryLimit = 48 * 1024;

/// Entry points resolved from the driver library. Where cuda.h maps a name to
/// a versioned symbol (cuMemAlloc -> cuMemAlloc_v2), the table below loads
/// the versioned one: the unversioned symbols are the legacy 32-bit ABI.
struct Driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int len, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **optionValues);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ,
                             unsigned sharedMemBytes, CUstream stream,
                             void **params, void **extra);
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *ptr, size_t bytes, unsigned flags);
  CUresult (*cuMemFree)(CUdeviceptr ptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                            CUstream stream);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count,
                               CUstream stream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr dst, unsigned short value,
                               size_t count, CUstream stream);
};

/// Names and descriptions for the codes worth explaining, used when the
/// driver cannot name its own errors: the toolkit's stub library, for one,
/// fails cuGetErrorName too.
struct ErrorInfo {
  CUresult code;
  const char *name;
  const char *description;
};
constexpr ErrorInfo kKnownErrors[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "the loaded libcuda is the CUDA toolkit's link-time stub, not a driver"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "the installed NVIDIA driver is older than this CUDA code requires"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device is busy"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT",
     "the launch timed out and was terminated"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/// A pooled block nobody holds. `stream` is the stream it was freed on and
/// `pending` says work queued on that stream may still use it: it is then
/// only handed out again on the same stream (stream order makes that safe)
/// until a synchronisation settles it.
struct FreeBlock {
  CUdeviceptr ptr;
  CUstream stream;
  bool pending;
};

struct LiveBlock {
  size_t bytes;
  bool managed;
};

struct Runtime {
  // Recursive so that helpers that record errors may be called with the lock
  // held or not.
  std::recursive_mutex mutex;
  // Set (release) once initialisation has run, successfully or not; after
  // that everything below up to `error` is read-only.
  std::atomic<bool> initDone{false};
  bool ready = false;
  bool verbose = false;
  std::string initError;
  int requestedDevice = -1;
  void *library = nullptr;
  Driver cu{};
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string deviceName;

  // The first error since the last clear, "" if none. A fixed buffer rather
  // than a std::string so that the pointer attn_gpu_error() hands out never
  // dangles, whatever is recorded or cleared after it was taken.
  char error[16384] = {0};
  // Free blocks by (size, managed): exact sizes only, since generated code
  // allocates the same temporaries on every call.
  std::map<std::pair<size_t, bool>, std::vector<FreeBlock>> freeBlocks;
  std::unordered_map<CUdeviceptr, LiveBlock> liveBlocks;
};

/// The process-wide state. Deliberately leaked: generated objects unload
/// their modules from global destructors, which may run after this file's
/// statics would have been destroyed.
Runtime &runtime() {
  static Runtime *state = new Runtime;
  return *state;
}

// A plain array, not a std::string: entry points may run from other objects'
// global constructors, before this file's dynamic initialisers.
constexpr char kPrefix[] = "attn GPU runtime: ";

/// Keeps `message` if it is the first error since the last clear. `print`
/// is false when re-recording a known failure, so ATTN_GPU_VERBOSE prints
/// each failure once.
void record(Runtime &r, std::string message, bool print = true) {
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  if (print && r.verbose)
    std::fprintf(stderr, "%s\n", message.c_str());
  if (r.error[0] != '\0')
    return;
  constexpr size_t capacity = sizeof(r.error) - 1;
  if (message.size() > capacity) {
    message.resize(capacity);
    message.replace(capacity - 4, 4, " ...");
  }
  std::memcpy(r.error, message.c_str(), message.size() + 1);
}

/// "CUDA_ERROR_X (n): description", from the driver when it can say.
std::string describe(const Runtime &r, CUresult result) {
  const char *name = nullptr;
  const char *description = nullptr;
  if (r.cu.cuGetErrorName && r.cu.cuGetErrorName(result, &name) != kCudaSuccess)
    name = nullptr;
  if (r.cu.cuGetErrorString &&
      r.cu.cuGetErrorString(result, &description) != kCudaSuccess)
    description = nullptr;
  for (const ErrorInfo &known : kKnownErrors) {
    if (known.code != result)
      continue;
    if (!name)
      name = known.name;
    if (!description)
      description = known.description;
  }
  std::string text = name ? name : "CUDA error";
  text += " (" + std::to_string(result) + ")";
  if (description)
    text += std::string(": ") + description;
  return text;
}

/// Records "`entry`: `call` failed: ..." and returns false if `result` is an
/// error. `detail` follows the call's name; `log`, if any, goes on the lines
/// after the message.
bool check(Runtime &r, CUresult result, const char *entry, const char *call,
           const std::string &detail = "", const std::string &log = "") {
  if (result == kCudaSuccess)
    return true;
  std::string message = kPrefix;
  if (entry && *entry)
    message += std::string(entry) + ": ";
  message += std::string(call) + detail + " failed: " + describe(r, result);
  if (!log.empty())
    message += "\n" + log;
  record(r, std::move(message));
  return false;
}

template <typename Fn> bool loadSymbol(Runtime &r, Fn &slot, const char *name) {
  slot = reinterpret_cast<Fn>(dlsym(r.library, name));
  return slot != nullptr;
}

/// Resolves every required driver entry point; returns the first missing
/// name, or null.
const char *loadDriver(Runtime &r) {
  Driver &cu = r.cu;
  // Optional: only used to name errors.
  loadSymbol(r, cu.cuGetErrorName, "cuGetErrorName");
  loadSymbol(r, cu.cuGetErrorString, "cuGetErrorString");
#define ATTN_LOAD(field, symbol)                                               \
  if (!loadSymbol(r, cu.field, symbol))                                        \
    return symbol;
  ATTN_LOAD(cuInit, "cuInit")
  ATTN_LOAD(cuDeviceGetCount, "cuDeviceGetCount")
  ATTN_LOAD(cuDeviceGet, "cuDeviceGet")
  ATTN_LOAD(cuDeviceGetName, "cuDeviceGetName")
  ATTN_LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  ATTN_LOAD(cuCtxSetCurrent, "cuCtxSetCurrent")
  ATTN_LOAD(cuCtxSynchronize, "cuCtxSynchronize")
  ATTN_LOAD(cuModuleLoadDataEx, "cuModuleLoadDataEx")
  ATTN_LOAD(cuModuleUnload, "cuModuleUnload")
  ATTN_LOAD(cuModuleGetFunction, "cuModuleGetFunction")
  ATTN_LOAD(cuFuncSetAttribute, "cuFuncSetAttribute")
  ATTN_LOAD(cuLaunchKernel, "cuLaunchKernel")
  ATTN_LOAD(cuStreamCreate, "cuStreamCreate")
  ATTN_LOAD(cuStreamDestroy, "cuStreamDestroy_v2")
  ATTN_LOAD(cuStreamSynchronize, "cuStreamSynchronize")
  ATTN_LOAD(cuStreamWaitEvent, "cuStreamWaitEvent")
  ATTN_LOAD(cuEventCreate, "cuEventCreate")
  ATTN_LOAD(cuEventDestroy, "cuEventDestroy_v2")
  ATTN_LOAD(cuEventSynchronize, "cuEventSynchronize")
  ATTN_LOAD(cuEventRecord, "cuEventRecord")
  ATTN_LOAD(cuMemAlloc, "cuMemAlloc_v2")
  ATTN_LOAD(cuMemAllocManaged, "cuMemAllocManaged")
  ATTN_LOAD(cuMemFree, "cuMemFree_v2")
  ATTN_LOAD(cuMemcpyAsync, "cuMemcpyAsync")
  ATTN_LOAD(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
  ATTN_LOAD(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
  ATTN_LOAD(cuMemsetD32Async, "cuMemsetD32Async")
  ATTN_LOAD(cuMemsetD16Async, "cuMemsetD16Async")
#undef ATTN_LOAD
  return nullptr;
}

/// Records `reason` as the reason the runtime is unavailable.
bool failInit(Runtime &r, std::string reason) {
  r.initError = std::string(kPrefix) + reason;
  record(r, r.initError);
  return false;
}

/// Brings the runtime up; called once, with the lock held.
bool initialise(Runtime &r) {
  const char *verbose = std::getenv("ATTN_GPU_VERBOSE");
  r.verbose = verbose && *verbose && std::strcmp(verbose, "0") != 0;

  const char *override = std::getenv("ATTN_LIBCUDA");
  bool overridden = override && *override;
  std::string path = overridden ? override : "libcuda.so.1";
  r.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!r.library) {
    const char *why = dlerror();
    return failInit(r, "cannot load the CUDA driver " + path + " (" +
                           (why ? why : "unknown dlopen error") + "): " +
                           (overridden ? "check ATTN_LIBCUDA"
                                       : "no NVIDIA driver on this machine"));
  }
  // The library stays loaded for the life of the process: modules may be
  // unloaded from global destructors at exit.
  if (const char *missing = loadDriver(r))
    return failInit(r, "the CUDA driver " + path + " has no " + missing +
                           ": the driver is too old or not a CUDA driver");

  if (CUresult result = r.cu.cuInit(0))
    return failInit(r, "cuInit failed: " + describe(r, result));

  if (r.requestedDevice >= 0) {
    r.ordinal = r.requestedDevice;
  } else if (const char *env = std::getenv("ATTN_GPU_DEVICE"); env && *env) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(env, &end, 10);
    if (errno || *end || value < 0 || value > INT_MAX)
      return failInit(r, std::string("ATTN_GPU_DEVICE='") + env +
                             "' is not a device ordinal");
    r.ordinal = static_cast<int>(value);
  }
  int count = 0;
  if (CUresult result = r.cu.cuDeviceGetCount(&count))
    return failInit(r, "cuDeviceGetCount failed: " + describe(r, result));
  if (r.ordinal >= count)
    return failInit(r, "device " + std::to_string(r.ordinal) +
                           " requested but the driver sees " +
                           std::to_string(count) + " CUDA device(s)");
  if (CUresult result = r.cu.cuDeviceGet(&r.device, r.ordinal))
    return failInit(r, "cuDeviceGet failed: " + describe(r, result));
  // The primary context is the one the CUDA runtime API shares, so code
  // using both sees the same allocations.
  if (CUresult result = r.cu.cuDevicePrimaryCtxRetain(&r.context, r.device))
    return failInit(r,
                    "cuDevicePrimaryCtxRetain failed: " + describe(r, result));
  char name[256] = {0};
  if (r.cu.cuDeviceGetName(name, sizeof(name) - 1, r.device) == kCudaSuccess)
    r.deviceName = name;
  r.ready = true;
  return true;
}

/// Initialises on first use and makes the context current on the calling
/// thread (every entry point may be the first on a new thread). Returns null,
/// with the reason recorded, when the runtime is unavailable.
Runtime *acquire(const char *entry) {
  Runtime &r = runtime();
  if (!r.initDone.load(std::memory_order_acquire)) {
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    if (!r.initDone.load(std::memory_order_relaxed)) {
      initialise(r);
      r.initDone.store(true, std::memory_order_release);
    }
  }
  if (!r.ready) {
    // Already recorded (and printed) once; this re-records it after a
    // clear.
    record(r, r.initError, /*print=*/false);
    return nullptr;
  }
  if (!check(r, r.cu.cuCtxSetCurrent(r.context), entry, "cuCtxSetCurrent"))
    return nullptr;
  return &r;
}

CUdeviceptr toDevice(const void *ptr) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
}

void *fromDevice(CUdeviceptr ptr) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
}

CUstream toStream(void *stream) { return static_cast<CUstream>(stream); }

/// Marks blocks freed on `stream` (all blocks if `all`) as safe to hand out
/// on any stream, after a synchronisation proved their users finished.
void settle(Runtime &r, CUstream stream, bool all) {
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  for (auto &entry : r.freeBlocks)
    for (FreeBlock &block : entry.second)
      if (all || block.stream == stream)
        block.pending = false;
}

/// Returns every free block to the driver. Waits for the device first: a
/// pending block may still be in use.
void trimPool(Runtime &r, const char *entry) {
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  check(r, r.cu.cuCtxSynchronize(), entry, "cuCtxSynchronize");
  for (auto &sized : r.freeBlocks)
    for (FreeBlock &block : sized.second)
      check(r, r.cu.cuMemFree(block.ptr), entry, "cuMemFree_v2");
  r.freeBlocks.clear();
}

void *poolAlloc(Runtime &r, const char *entry, size_t bytes, CUstream stream,
                bool managed) {
  // cuMemAlloc rejects 0 bytes; a zero-sized buffer is never dereferenced.
  if (bytes == 0)
    return nullptr;
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  auto found = r.freeBlocks.find({bytes, managed});
  if (found != r.freeBlocks.end()) {
    std::vector<FreeBlock> &blocks = found->second;
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].pending && blocks[i].stream != stream)
        continue;
      CUdeviceptr ptr = blocks[i].ptr;
      blocks[i] = blocks.back();
      blocks.pop_back();
      r.liveBlocks[ptr] = {bytes, managed};
      return fromDevice(ptr);
    }
  }
  auto allocate = [&](CUdeviceptr *ptr) {
    return managed ? r.cu.cuMemAllocManaged(ptr, bytes, kMemAttachGlobal)
                   : r.cu.cuMemAlloc(ptr, bytes);
  };
  CUdeviceptr ptr = 0;
  CUresult result = allocate(&ptr);
  if (result == kCudaErrorOutOfMemory && !r.freeBlocks.empty()) {
    // The cache may hold the memory we need.
    trimPool(r, entry);
    result = allocate(&ptr);
  }
  if (!check(r, result, entry, managed ? "cuMemAllocManaged" : "cuMemAlloc_v2",
             " of " + std::to_string(bytes) + " bytes"))
    return nullptr;
  r.liveBlocks[ptr] = {bytes, managed};
  return fromDevice(ptr);
}

bool poolFree(Runtime &r, const char *entry, void *ptr, CUstream stream) {
  if (!ptr)
    return true;
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  auto found = r.liveBlocks.find(toDevice(ptr));
  if (found == r.liveBlocks.end()) {
    // Not from the pool: let the driver free it (or reject it).
    return check(r, r.cu.cuMemFree(toDevice(ptr)), entry, "cuMemFree_v2");
  }
  LiveBlock block = found->second;
  r.liveBlocks.erase(found);
  r.freeBlocks[{block.bytes, block.managed}].push_back(
      {toDevice(ptr), stream, /*pending=*/true});
  return true;
}

/// Loads a cubin, fatbin or (with `optLevel` >= 0) PTX image, with the
/// driver's error log appended to the message on failure.
void *loadModule(Runtime &r, const char *entry, const void *image,
                 int optLevel) {
  if (!image) {
    record(r, std::string(kPrefix) + entry + ": null image");
    return nullptr;
  }
  char log[8192] = {0};
  int options[3];
  void *values[3];
  unsigned count = 0;
  options[count] = kJitErrorLogBuffer;
  values[count++] = log;
  options[count] = kJitErrorLogBufferSizeBytes;
  values[count++] = reinterpret_cast<void *>(uintptr_t{sizeof(log) - 1});
  if (optLevel >= 0) {
    // Scalar option values travel in the pointer itself.
    options[count] = kJitOptimizationLevel;
    values[count++] = reinterpret_cast<void *>(
        static_cast<uintptr_t>(optLevel > 4 ? 4 : optLevel));
  }
  CUmodule module = nullptr;
  CUresult result =
      r.cu.cuModuleLoadDataEx(&module, image, count, options, values);
  if (result != kCudaSuccess) {
    // The driver's log (ptxas' diagnostics for PTX) goes on the next lines.
    log[sizeof(log) - 1] = 0;
    std::string text = log;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    check(r, result, entry, "cuModuleLoadDataEx", "", text);
    return nullptr;
  }
  return module;
}

bool validDimension(intptr_t value) {
  return value >= 1 && static_cast<uintmax_t>(value) <= UINT_MAX;
}

} // namespace

//===----------------------------------------------------------------------===//
// mgpu* entry points
//===----------------------------------------------------------------------===//

void *mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  // The driver finds the extent of a cubin/fatbin from its headers.
  Runtime *r = acquire("mgpuModuleLoad");
  return r ? loadModule(*r, "mgpuModuleLoad", data, /*optLevel=*/-1) : nullptr;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  Runtime *r = acquire("mgpuModuleLoadJIT");
  return r ? loadModule(*r, "mgpuModuleLoadJIT", data,
                        optLevel < 0 ? 0 : optLevel)
           : nullptr;
}

void mgpuModuleUnload(void *module) {
  if (!module)
    return;
  Runtime &r = runtime();
  if (!r.initDone.load(std::memory_order_acquire) || !r.ready)
    return;
  // Usually runs from a global destructor at exit, possibly after the
  // driver shut down and unloaded everything itself: not an error then.
  CUresult result = r.cu.cuCtxSetCurrent(r.context);
  if (result == kCudaSuccess)
    result = r.cu.cuModuleUnload(static_cast<CUmodule>(module));
  if (result != kCudaErrorDeinitialized)
    check(r, result, "mgpuModuleUnload", "cuModuleUnload");
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  Runtime *r = acquire("mgpuModuleGetFunction");
  // A null module is an earlier, recorded failure.
  if (!r || !module || !name)
    return nullptr;
  CUfunction function = nullptr;
  if (!check(*r,
             r->cu.cuModuleGetFunction(&function, static_cast<CUmodule>(module),
                                       name),
             "mgpuModuleGetFunction", "cuModuleGetFunction",
             std::string("('") + name + "')"))
    return nullptr;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  Runtime *r = acquire("mgpuLaunchKernel");
  if (!r || !function)
    return;
  if (!validDimension(gridX) || !validDimension(gridY) ||
      !validDimension(gridZ) || !validDimension(blockX) ||
      !validDimension(blockY) || !validDimension(blockZ) || smem < 0) {
    record(*r,
           std::string(kPrefix) + "mgpuLaunchKernel: invalid launch grid (" +
               std::to_string(gridX) + ", " + std::to_string(gridY) + ", " +
               std::to_string(gridZ) + ") block (" + std::to_string(blockX) +
               ", " + std::to_string(blockY) + ", " + std::to_string(blockZ) +
               ") shared memory " + std::to_string(smem));
    return;
  }
  auto *fn = static_cast<CUfunction>(function);
  // Beyond 48 KiB a kernel must opt in to its dynamic shared memory.
  if (smem > kDefaultSharedMemoryLimit &&
      !check(*r,
             r->cu.cuFuncSetAttribute(
                 fn, kFuncAttributeMaxDynamicSharedSizeBytes, smem),
             "mgpuLaunchKernel", "cuFuncSetAttribute",
             "(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(smem) + ")"))
    return;
  check(*r,
        r->cu.cuLaunchKernel(
            fn, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
            static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
            static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
            static_cast<unsigned>(smem), toStream(stream), params, extra),
        "mgpuLaunchKernel", "cuLaunchKernel");
}

void *mgpuStreamCreate(void) {
  Runtime *r = acquire("mgpuStreamCreate");
  if (!r)
    return nullptr;
  CUstream stream = nullptr;
  // Non-blocking, as in MLIR's own wrappers: no implicit ordering with the
  // legacy default stream.
  if (!check(*r, r->cu.cuStreamCreate(&stream, kStreamNonBlocking),
             "mgpuStreamCreate", "cuStreamCreate"))
    return nullptr;
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  Runtime *r = acquire("mgpuStreamDestroy");
  // Never destroy the legacy default stream.
  if (!r || !stream)
    return;
  // Synchronise first so that blocks freed on the stream settle before its
  // handle can be reused by a new stream; generated code synchronises before
  // destroying anyway, so this does not wait in practice.
  check(*r, r->cu.cuStreamSynchronize(toStream(stream)), "mgpuStreamDestroy",
        "cuStreamSynchronize");
  settle(*r, toStream(stream), /*all=*/false);
  check(*r, r->cu.cuStreamDestroy(toStream(stream)), "mgpuStreamDestroy",
        "cuStreamDestroy_v2");
}

void mgpuStreamSynchronize(void *stream) {
  Runtime *r = acquire("mgpuStreamSynchronize");
  if (!r)
    return;
  // Also where errors of earlier asynchronous work (a faulting kernel)
  // surface.
  check(*r, r->cu.cuStreamSynchronize(toStream(stream)),
        "mgpuStreamSynchronize", "cuStreamSynchronize");
  settle(*r, toStream(stream), /*all=*/false);
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  Runtime *r = acquire("mgpuStreamWaitEvent");
  if (!r || !event)
    return;
  check(*r,
        r->cu.cuStreamWaitEvent(toStream(stream), static_cast<CUevent>(event),
                                /*flags=*/0),
        "mgpuStreamWaitEvent", "cuStreamWaitEvent");
}

void *mgpuEventCreate(void) {
  Runtime *r = acquire("mgpuEventCreate");
  if (!r)
    return nullptr;
  CUevent event = nullptr;
  if (!check(*r, r->cu.cuEventCreate(&event, kEventDisableTiming),
             "mgpuEventCreate", "cuEventCreate"))
    return nullptr;
  return event;
}

void mgpuEventDestroy(void *event) {
  Runtime *r = acquire("mgpuEventDestroy");
  if (!r || !event)
    return;
  check(*r, r->cu.cuEventDestroy(static_cast<CUevent>(event)),
        "mgpuEventDestroy", "cuEventDestroy_v2");
}

void mgpuEventSynchronize(void *event) {
  Runtime *r = acquire("mgpuEventSynchronize");
  if (!r || !event)
    return;
  check(*r, r->cu.cuEventSynchronize(static_cast<CUevent>(event)),
        "mgpuEventSynchronize", "cuEventSynchronize");
}

void mgpuEventRecord(void *event, void *stream) {
  Runtime *r = acquire("mgpuEventRecord");
  if (!r || !event)
    return;
  check(*r, r->cu.cuEventRecord(static_cast<CUevent>(event), toStream(stream)),
        "mgpuEventRecord", "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared) {
  Runtime *r = acquire("mgpuMemAlloc");
  if (!r)
    return nullptr;
  return poolAlloc(*r, "mgpuMemAlloc", sizeBytes, toStream(stream),
                   isHostShared);
}

void mgpuMemFree(void *ptr, void *stream) {
  Runtime *r = acquire("mgpuMemFree");
  if (!r)
    return;
  poolFree(*r, "mgpuMemFree", ptr, toStream(stream));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  Runtime *r = acquire("mgpuMemcpy");
  if (!r || sizeBytes == 0)
    return;
  if (!dst || !src) {
    record(*r, std::string(kPrefix) + "mgpuMemcpy: null pointer");
    return;
  }
  // With unified addressing the driver infers the direction.
  check(*r,
        r->cu.cuMemcpyAsync(toDevice(dst), toDevice(src), sizeBytes,
                            toStream(stream)),
        "mgpuMemcpy", "cuMemcpyAsync");
}

void mgpuMemset32(void *dst, unsigned int value, size_t count, void *stream) {
  Runtime *r = acquire("mgpuMemset32");
  if (!r || count == 0)
    return;
  if (!dst) {
    record(*r, std::string(kPrefix) + "mgpuMemset32: null pointer");
    return;
  }
  check(*r,
        r->cu.cuMemsetD32Async(toDevice(dst), value, count, toStream(stream)),
        "mgpuMemset32", "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  Runtime *r = acquire("mgpuMemset16");
  if (!r || count == 0)
    return;
  if (!dst) {
    record(*r, std::string(kPrefix) + "mgpuMemset16: null pointer");
    return;
  }
  check(*r,
        r->cu.cuMemsetD16Async(toDevice(dst), value, count, toStream(stream)),
        "mgpuMemset16", "cuMemsetD16Async");
}

void mgpuSetDefaultDevice(int32_t device) {
  Runtime &r = runtime();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  if (device < 0) {
    record(r, std::string(kPrefix) + "mgpuSetDefaultDevice(" +
                  std::to_string(device) + "): not a device ordinal");
    return;
  }
  if (!r.initDone.load(std::memory_order_relaxed)) {
    r.requestedDevice = device;
    return;
  }
  // One device per process: it cannot change once chosen.
  if (r.ready && device != r.ordinal)
    record(r, std::string(kPrefix) + "mgpuSetDefaultDevice(" +
                  std::to_string(device) +
                  "): ignored, the runtime already uses device " +
                  std::to_string(r.ordinal));
}

//===----------------------------------------------------------------------===//
// attn_gpu_* host interface
//===----------------------------------------------------------------------===//

int attn_gpu_init(void) { return acquire("attn_gpu_init") ? 0 : 1; }

const char *attn_gpu_error(void) {
  // Handing out the buffer needs no lock; reading it while another thread
  // records is the caller's race, as with errno-style interfaces.
  return runtime().error;
}

void attn_gpu_clear_error(void) {
  Runtime &r = runtime();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  r.error[0] = '\0';
}

const char *attn_gpu_device_name(void) {
  Runtime *r = acquire("attn_gpu_device_name");
  return r ? r->deviceName.c_str() : "";
}

void *attn_gpu_alloc(size_t bytes) {
  Runtime *r = acquire("attn_gpu_alloc");
  // The host's buffers live on the legacy default stream.
  return r ? poolAlloc(*r, "attn_gpu_alloc", bytes, /*stream=*/nullptr,
                       /*managed=*/false)
           : nullptr;
}

int attn_gpu_free(void *device) {
  if (!device)
    return 0;
  Runtime *r = acquire("attn_gpu_free");
  return r && poolFree(*r, "attn_gpu_free", device, /*stream=*/nullptr) ? 0 : 1;
}

int attn_gpu_copy_to_device(void *device, const void *host, size_t bytes) {
  Runtime *r = acquire("attn_gpu_copy_to_device");
  if (!r)
    return 1;
  if (bytes == 0)
    return 0;
  if (!device || !host) {
    record(*r, std::string(kPrefix) + "attn_gpu_copy_to_device: null pointer");
    return 1;
  }
  return check(*r, r->cu.cuMemcpyHtoD(toDevice(device), host, bytes),
               "attn_gpu_copy_to_device", "cuMemcpyHtoD_v2")
             ? 0
             : 1;
}

int attn_gpu_copy_to_host(void *host, const void *device, size_t bytes) {
  Runtime *r = acquire("attn_gpu_copy_to_host");
  if (!r)
    return 1;
  if (bytes == 0)
    return 0;
  if (!device || !host) {
    record(*r, std::string(kPrefix) + "attn_gpu_copy_to_host: null pointer");
    return 1;
  }
  // cuMemcpyDtoH only orders after the legacy stream, and generated code
  // runs on non-blocking streams: wait for the whole device.
  if (!check(*r, r->cu.cuCtxSynchronize(), "attn_gpu_copy_to_host",
             "cuCtxSynchronize"))
    return 1;
  settle(*r, nullptr, /*all=*/true);
  return check(*r, r->cu.cuMemcpyDtoH(host, toDevice(device), bytes),
               "attn_gpu_copy_to_host", "cuMemcpyDtoH_v2")
             ? 0
             : 1;
}

int attn_gpu_synchronize(void) {
  Runtime *r = acquire("attn_gpu_synchronize");
  if (!r)
    return 1;
  if (!check(*r, r->cu.cuCtxSynchronize(), "attn_gpu_synchronize",
             "cuCtxSynchronize"))
    return 1;
  settle(*r, nullptr, /*all=*/true);
  return 0;
}

void attn_gpu_release_cache(void) {
  Runtime *r = acquire("attn_gpu_release_cache");
  if (r)
    trimPool(*r, "attn_gpu_release_cache");
}
