//===- Attn.cpp - C API of the attn compiler ------------------------------===//
//
// include/attn-c/Attn.h over the compiler library. Every message is what
// attnc would print (without its "attnc: " prefix naming the tool: "attn:"),
// returned as a malloc'ed string; nothing here aborts.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"

#include "attn/Analysis/CostModel.h"
#include "attn/Compiler/Calibrate.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/Kernel.h"
#include "attn/Frontend/DeviceArrays.h"
#include "attn/Frontend/RunSetup.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/AtomicFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <sys/stat.h>
#include <cstring>
#include <map>

using namespace attn;
using namespace attn::compiler;
using namespace attn::frontend;


struct AttnOptions {
  CompilerOptions compiler;
  SizeBindings sizes;
  /// The compile cache's directory; "" for none.
  std::string cacheDir;
  int64_t heads = 0, headDim = 0;
  /// Calls needing more bytes are refused; 0: what the machine has.
  uint64_t maxMemory = 0;
  /// Calls with a NaN or an infinity in an input are refused.
  bool finiteInputs = false;

  /// The defaults of the header: messages name the tool `attn`, and the
  /// cache is the user's.
  AttnOptions() : cacheDir(userCacheDir()) { compiler.toolName = "attn"; }
};

struct AttnKernel {
  std::unique_ptr<Compiler> compiler;
  std::unique_ptr<Kernel> kernel;
  std::string diagnostics;
  bool fromCache = false;
  uint64_t maxMemory = 0;
  bool finiteInputs = false;
  /// One writer of messages that the kernel owns.
  std::unique_ptr<llvm::raw_string_ostream> stream;
};

static void setError(char **error, const std::string &message) {
  if (!error)
    return;
  *error = static_cast<char *>(std::malloc(message.size() + 1));
  if (*error)
    std::memcpy(*error, message.c_str(), message.size() + 1);
}

/// The text of the spec file \p path, or nothing with *error set.
static std::optional<std::string> readSpecFile(const char *path,
                                               char **error) {
  if (!path)
    return setError(error, "attn: error: NULL spec path"), std::nullopt;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return setError(error, std::string("attn: error: cannot read '") + path +
                               "': " + ec.message()),
           std::nullopt;
  return (*buffer)->getBuffer().str();
}

/// Sets *error to what the compiler wrote, without the last line break.
static void setDiagnosticsError(char **error, std::string message) {
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  setError(error, message.empty() ? "attn: error: compilation failed" : message);
}

/// Makes the GPU runtime's mgpu* functions, which GPU host code calls,
/// visible to the kernel's JIT linker, which resolves symbols in the
/// process's global scope: a program that loaded this library with
/// RTLD_LOCAL (Python's ctypes does) would leave them hidden.
static void exposeGpuRuntime() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&attn_gpu_init), &info) &&
      info.dli_fname)
    (void)llvm::sys::DynamicLibrary::LoadLibraryPermanently(info.dli_fname);
}


extern "C" {

AttnOptions *attnOptionsCreate(void) {
  return new AttnOptions();
}

void attnOptionsDestroy(AttnOptions *options) { delete options; }

int attnOptionsSet(AttnOptions *options, const char *key, const char *value,
                   char **error) {
  if (!options || !key || !value)
    return setError(error, "attnOptionsSet: NULL argument"), 1;
  std::string k = key, v = value;
  auto integer = [&](int64_t &out, int64_t least) {
    long long number = 0;
    if (llvm::StringRef(v).getAsInteger(10, number) || number < least)
      return setError(error, "option '" + k + "' must be an integer >= " +
                                 std::to_string(least) + ", got '" + v +
                                 "'"),
             false;
    out = number;
    return true;
  };
  CompilerOptions &c = options->compiler;
  if (k == "target") {
    if (v == "cpu" || v == "nvptx") {
      // The cost model's numbers: this machine's calibration, if any.
      c.target = v == "cpu" ? Target::CPU : Target::NVPTX;
      c.costTarget.clear();
      return 0;
    }
    cost::Target description;
    if (std::string why = cost::loadTarget(v, description); !why.empty())
      return setError(error, "option 'target' must be cpu, nvptx or a target "
                             "description file: " +
                                 why),
             1;
    c.target = description.name == "nvptx" ? Target::NVPTX : Target::CPU;
    c.costTarget = v;
    return 0;
  }
  if (k == "chip") {
    if (!llvm::is_contained(supportedChips(), llvm::StringRef(v))) {
      std::string message = "option 'chip' must be one of ";
      for (auto [i, chip] : llvm::enumerate(supportedChips()))
        message += std::string(i ? ", " : "") + chip;
      return setError(error, message + ", got '" + v + "'"), 1;
    }
    c.chip = v;
    return 0;
  }
  if (k == "gpu-precision") {
    if (v != "f32" && v != "tf32")
      return setError(error, "option 'gpu-precision' must be f32 or tf32, "
                             "got '" +
                                 v + "'"),
             1;
    c.gpuPrecision = v == "tf32" ? mlir::attn::GpuPrecision::TF32
                                 : mlir::attn::GpuPrecision::F32;
    return 0;
  }
  if (k == "force-order") {
    if (v == "auto")
      c.force = ForceOrder::Auto;
    else if (v == "qk_first")
      c.force = ForceOrder::QkFirst;
    else if (v == "kv_first")
      c.force = ForceOrder::KvFirst;
    else if (v == "recurrent")
      c.force = ForceOrder::Recurrent;
    else
      return setError(error, "option 'force-order' must be auto, qk_first, "
                             "kv_first or recurrent, got '" +
                                 v + "'"),
             1;
    return 0;
  }
  if (k == "threads") {
    if (!integer(c.threads, 0))
      return 1;
    std::string why;
    if (!checkThreadCount(c.threads, "option 'threads'", why))
      return setError(error, why), 1;
    return 0;
  }
  if (k == "heads")
    return integer(options->heads, 1) ? 0 : 1;
  if (k == "head-dim")
    return integer(options->headDim, 1) ? 0 : 1;
  if (k == "emulate-gpu") {
    if (v != "0" && v != "1")
      return setError(error, "option 'emulate-gpu' must be 0 or 1, got '" +
                                 v + "'"),
             1;
    c.emulateGpu = v == "1";
    return 0;
  }
  if (k == "cpu" || k == "cpu-features") {
    std::string cpu = k == "cpu" ? v : c.cpu;
    std::string features = k == "cpu" ? c.cpuFeatures : v;
    std::string why;
    if (!mlir::attn::resolveCpuTarget(cpu, features, why))
      return setError(error, "option '" + k + "': " + why), 1;
    (k == "cpu" ? c.cpu : c.cpuFeatures) = v;
    return 0;
  }
  if (k == "finite-inputs") {
    if (v != "0" && v != "1")
      return setError(error, "option 'finite-inputs' must be 0 or 1, got '" +
                                 v + "'"),
             1;
    options->finiteInputs = v == "1";
    return 0;
  }
  if (k == "max-memory") {
    uint64_t bytes = 0;
    if (v != "0" && (!parseByteSize(v, bytes) || bytes == 0))
      return setError(error, "option 'max-memory' must be a byte count such "
                             "as 512M or 8G (0: what the machine has), got '" +
                                 v + "'"),
             1;
    options->maxMemory = bytes;
    return 0;
  }
  if (k == "cache-dir") {
    options->cacheDir = v == "off" ? "" : v;
    return 0;
  }
  return setError(error, "unknown option '" + k +
                             "' (target, chip, cpu, cpu-features, "
                             "force-order, threads, emulate-gpu, cache-dir, "
                             "max-memory, finite-inputs, "
                             "heads, head-dim)"),
         1;
}

int attnOptionsSetSize(AttnOptions *options, const char *name, int64_t value,
                       char **error) {
  if (!options || !name || !*name)
    return setError(error, "attnOptionsSetSize: NULL or empty name"), 1;
  if (value < 1)
    return setError(error, "size '" + std::string(name) +
                               "' must be positive, got " +
                               std::to_string(value)),
           1;
  options->sizes[name] = value;
  return 0;
}

} // extern "C"

//===----------------------------------------------------------------------===//
// The compile cache
//===----------------------------------------------------------------------===//

/// This library's file, size and modification time: a rebuilt compiler
/// may generate other code, so its cache entries are not reused.
static std::string libraryIdentity() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&attnVersion), &info) ||
      !info.dli_fname)
    return "unknown";
  struct stat st;
  if (stat(info.dli_fname, &st) != 0)
    return info.dli_fname;
  return std::string(info.dli_fname) + " " + std::to_string(st.st_size) +
         " " + std::to_string(st.st_mtime);
}

/// Everything the object depends on, as text: a hit must match it whole.
/// The numbers the cost model decides with, as text: a file's contents, or
/// a built-in target's name.
static std::string costTargetKey(const std::string &name) {
  if (name == "cpu" || name == "nvptx")
    return name;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(name);
  return name + "\n" + (buffer ? (*buffer)->getBuffer().str() : "");
}

static std::string cacheKey(const std::string &specText,
                            const AttnOptions &options,
                            const std::string &costTarget) {
  const CompilerOptions &c = options.compiler;
  std::string key = "attn-kernel-cache 1\nattn " + libraryIdentity() +
                    "\nllvm " LLVM_VERSION_STRING "\ncpu " +
                    llvm::sys::getHostCPUName().str() + "\nfeatures";
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::map<std::string, bool> sorted;
  for (const auto &feature : features)
    sorted[feature.getKey().str()] = feature.getValue();
  for (const auto &[name, on] : sorted)
    if (on)
      key += " " + name;
  key += "\ntarget " +
         std::string(c.target == Target::NVPTX ? "nvptx" : "cpu") + " chip " +
         c.chip + " emulate " + std::to_string(c.emulateGpu) + " precision " +
         (c.gpuPrecision == mlir::attn::GpuPrecision::TF32 ? "tf32" : "f32") +
         " force " + toString(c.force) + "\ncompiled for cpu " + c.cpu +
         " features " + c.cpuFeatures + "\nsizes";
  for (const auto &[name, value] : options.sizes)
    key += " " + name + "=" + std::to_string(value);
  return key + "\ncost target " + costTargetKey(costTarget) + "\nspec\n" +
         specText;
}

static std::string cachePath(const std::string &dir, const std::string &key,
                             const char *extension) {
  return dir + "/" + llvm::utohexstr(llvm::xxh3_64bits(key), true, 16) +
         extension;
}

/// The cached object for \p key, if present and not stale.
static std::optional<std::string> readCache(const std::string &dir,
                                            const std::string &key) {
  auto keyFile = llvm::MemoryBuffer::getFile(cachePath(dir, key, ".key"));
  if (!keyFile || (*keyFile)->getBuffer() != key)
    return std::nullopt;
  auto object = llvm::MemoryBuffer::getFile(cachePath(dir, key, ".o"),
                                            /*IsText=*/false);
  if (!object)
    return std::nullopt;
  return (*object)->getBuffer().str();
}

/// Stores the object; a failure only costs the next compile.
static void writeCache(const std::string &dir, const std::string &key,
                       const std::string &object) {
  if (llvm::sys::fs::create_directories(dir))
    return;
  // The object first: a reader trusts the object only once its key is in
  // place, and each file is renamed into place whole.
  if (writeFilesAtomically({{cachePath(dir, key, ".o"), object}}).empty())
    (void)writeFilesAtomically({{cachePath(dir, key, ".key"), key}});
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

extern "C" {

AttnKernel *attnCompile(const char *specText, const char *specPath,
                        const AttnOptions *options, char **error) {
  if (!specText)
    return setError(error, "attnCompile: NULL spec text"), nullptr;
  AttnOptions defaults;
  const AttnOptions &opts = options ? *options : defaults;
  if (opts.compiler.emulateGpu && opts.compiler.target != Target::NVPTX)
    return setError(error, "attn: error: option 'emulate-gpu' needs target "
                           "nvptx"),
           nullptr;
  if (opts.compiler.gpuPrecision != mlir::attn::GpuPrecision::F32 &&
      opts.compiler.target != Target::NVPTX)
    return setError(error, "attn: error: option 'gpu-precision' needs target "
                           "nvptx"),
           nullptr;
  if (opts.compiler.target == Target::NVPTX && !opts.compiler.emulateGpu)
    exposeGpuRuntime();

  auto kernel = std::make_unique<AttnKernel>();
  kernel->maxMemory = opts.maxMemory;
  kernel->finiteInputs = opts.finiteInputs;
  kernel->stream = std::make_unique<llvm::raw_string_ostream>(kernel->diagnostics);
  kernel->compiler = std::make_unique<Compiler>(opts.compiler, *kernel->stream);
  Compiler &compiler = *kernel->compiler;
  auto fail = [&]() -> AttnKernel * {
    setDiagnosticsError(error, kernel->diagnostics);
    return nullptr;
  };
  if (!compiler.loadSpec(specText, specPath ? specPath : "<string>"))
    return fail();
  // The C API (and Python) call kernels with one output.
  if (compiler.getSpec().outputState || compiler.getSpec().outputLse)
    return setError(error,
                    std::string("attn: error: 'output ") +
                        (compiler.getSpec().outputLse ? "lse" : "state") +
                        "' (a second output) is available through "
                        "attnc run and --emit=obj only, not yet "
                        "through the C API or Python"),
           nullptr;
  std::optional<SizeBindings> sizes =
      compiler.bindSizes(opts.sizes, /*allowUnbound=*/true);
  if (!sizes)
    return fail();

  std::string key = cacheKey(specText, opts, compiler.resolveCostTarget());
  if (!opts.cacheDir.empty())
    if (std::optional<std::string> object = readCache(opts.cacheDir, key)) {
      std::optional<EntryAbi> abi = compiler.describeKernel(*sizes);
      if (!abi)
        return fail();
      kernel->kernel =
          compiler.loadKernel(CompiledObject{std::move(*abi), *object});
      if (!kernel->kernel)
        return fail();
      kernel->fromCache = true;
      return kernel.release();
    }
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler.generateModule(*sizes);
  if (!module)
    return fail();
  std::optional<CompiledObject> compiled =
      compiler.compileKernelObject(*module, *sizes);
  if (!compiled)
    return fail();
  if (!opts.cacheDir.empty())
    writeCache(opts.cacheDir, key, compiled->object);
  kernel->kernel = compiler.loadKernel(std::move(*compiled));
  if (!kernel->kernel)
    return fail();
  return kernel.release();
}

AttnKernel *attnCompileFile(const char *path, const AttnOptions *options,
                            char **error) {
  std::optional<std::string> text = readSpecFile(path, error);
  return text ? attnCompile(text->c_str(), path, options, error) : nullptr;
}

void attnKernelDestroy(AttnKernel *kernel) { delete kernel; }

int attnKernelFromCache(const AttnKernel *kernel) {
  return kernel && kernel->fromCache;
}

//===----------------------------------------------------------------------===//
// What a kernel takes
//===----------------------------------------------------------------------===//

static const EntryAbi &abiOf(const AttnKernel *kernel) {
  return kernel->kernel->getAbi();
}

const char *attnKernelName(const AttnKernel *kernel) {
  return kernel ? abiOf(kernel).specName.c_str() : "";
}

size_t attnKernelNumInputs(const AttnKernel *kernel) {
  return kernel ? abiOf(kernel).arrays.size() - 1 : 0;
}

const char *attnKernelInputName(const AttnKernel *kernel, size_t input) {
  if (!kernel || input >= attnKernelNumInputs(kernel))
    return "";
  return abiOf(kernel).arrays[input].name.c_str();
}

size_t attnKernelInputRank(const AttnKernel *kernel, size_t input) {
  if (!kernel || input >= attnKernelNumInputs(kernel))
    return 0;
  return abiOf(kernel).arrays[input].shape.size();
}

static int64_t dimOf(const AbiArray &array, size_t dim,
                     int64_t *dynamicIndex) {
  if (dim >= array.shape.size())
    return 0;
  const Extent &extent = array.shape[dim];
  if (!extent.isDynamic())
    return extent.value;
  if (dynamicIndex)
    *dynamicIndex = extent.dynamic;
  return -1;
}

int64_t attnKernelInputDim(const AttnKernel *kernel, size_t input, size_t dim,
                           int64_t *dynamicIndex) {
  if (!kernel || input >= attnKernelNumInputs(kernel))
    return 0;
  return dimOf(abiOf(kernel).arrays[input], dim, dynamicIndex);
}

const char *attnKernelInputType(const AttnKernel *kernel, size_t input) {
  if (!kernel || input >= attnKernelNumInputs(kernel))
    return "";
  return toString(abiOf(kernel).arrays[input].elementType);
}

const char *attnKernelOutputType(const AttnKernel *kernel) {
  return kernel ? toString(abiOf(kernel).arrays.back().elementType) : "";
}

size_t attnKernelOutputRank(const AttnKernel *kernel) {
  return kernel ? abiOf(kernel).arrays.back().shape.size() : 0;
}

int64_t attnKernelOutputDim(const AttnKernel *kernel, size_t dim,
                            int64_t *dynamicIndex) {
  return kernel ? dimOf(abiOf(kernel).arrays.back(), dim, dynamicIndex) : 0;
}

size_t attnKernelNumSizes(const AttnKernel *kernel) {
  return kernel ? abiOf(kernel).dynamicSizes.size() : 0;
}

const char *attnKernelSizeName(const AttnKernel *kernel, size_t index) {
  if (!kernel || index >= attnKernelNumSizes(kernel))
    return "";
  return abiOf(kernel).dynamicSizes[index].c_str();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Element counts of every array under \p sizes (checked by checkSizes).
static std::vector<size_t> elementCounts(const EntryAbi &abi,
                                         const int64_t *sizes) {
  std::vector<size_t> counts;
  for (const AbiArray &array : abi.arrays) {
    size_t count = 1;
    for (const Extent &extent : array.shape)
      count *= static_cast<size_t>(extentValue(extent, sizes));
    counts.push_back(count);
  }
  return counts;
}

static const char *statusName(int status) { return describeStatus(status); }

/// Checks the arguments before any call: a status and its message.
static int checkCall(const AttnKernel *kernel, void *const *arrays,
                     const int64_t *sizes, char **error) {
  if (!kernel)
    return setError(error, "attn: error: NULL kernel"), ATTN_STATUS_ERROR;
  const EntryAbi &abi = abiOf(kernel);
  if (!arrays || (!sizes && !abi.dynamicSizes.empty()))
    return setError(error, "attn: error: '" + abi.specName + "': " +
                               statusName(ATTN_STATUS_NULL_POINTER)),
           ATTN_STATUS_NULL_POINTER;
  for (size_t i = 0; i < abi.arrays.size(); ++i)
    if (!arrays[i])
      return setError(error, "attn: error: '" + abi.specName + "': array '" +
                                 abi.arrays[i].name + "' is NULL"),
             ATTN_STATUS_NULL_POINTER;
  if (checkSizes(abi, sizes) != kStatusOk)
    return setError(error, "attn: error: '" + abi.specName + "': " +
                               statusName(ATTN_STATUS_BAD_SIZE)),
           ATTN_STATUS_BAD_SIZE;
  return ATTN_STATUS_OK;
}

/// Whether the kernel's arrays are device pointers.
static bool runsOnDevice(const AttnKernel *kernel) {
  const CompilerOptions &options = kernel->compiler->getOptions();
  return options.target == Target::NVPTX && !options.emulateGpu;
}

/// The bytes of the inputs of a call (checked by checkSizes).
static uint64_t inputBytes(const EntryAbi &abi, const int64_t *sizes) {
  std::vector<size_t> counts = elementCounts(abi, sizes);
  uint64_t bytes = 0;
  for (size_t i = 0; i + 1 < counts.size(); ++i)
    bytes += saturatingMul(counts[i], byteSize(abi.arrays[i].elementType));
  return bytes;
}

/// ATTN_STATUS_OK when \p need fits the kernel's max-memory (or what the
/// machine has), else ATTN_STATUS_OUT_OF_MEMORY with the message.
static int checkCallMemory(const AttnKernel *kernel, const MemoryNeed &need,
                           char **error) {
  std::string why = checkMemory(need, kernel->maxMemory, "option 'max-memory'");
  if (why.empty())
    return ATTN_STATUS_OK;
  setError(error, "attn: error: cannot run '" + abiOf(kernel).specName +
                      "': " + why);
  return ATTN_STATUS_OUT_OF_MEMORY;
}

static int callKernel(AttnKernel *kernel, void *const *arrays,
                      const int64_t *sizes, char **error) {
  MemoryNeed need;
  need.add("compiled code's workspace (estimate)",
           estimateKernelWorkspace(inputBytes(abiOf(kernel), sizes)));
  if (int status = checkCallMemory(kernel, need, error))
    return status;
  int status = kernel->kernel->call(arrays, sizes);
  if (status != ATTN_STATUS_OK)
    setError(error, "attn: error: '" + abiOf(kernel).specName +
                        "': " + statusName(status));
  return status;
}

/// With option finite-inputs: ATTN_STATUS_ERROR naming the first input
/// element that is a NaN or an infinity.
static int checkFiniteInputs(const AttnKernel *kernel, void *const *arrays,
                             const int64_t *sizes, char **error) {
  if (!kernel->finiteInputs)
    return ATTN_STATUS_OK;
  const EntryAbi &abi = abiOf(kernel);
  std::vector<size_t> counts = elementCounts(abi, sizes);
  for (size_t a = 0; a + 1 < abi.arrays.size(); ++a) {
    ElementType type = abi.arrays[a].elementType;
    const char *bytes = static_cast<const char *>(arrays[a]);
    for (size_t i = 0; i < counts[a]; ++i) {
      float value;
      unpackElements(type, bytes + i * byteSize(type), 1, &value);
      if (!std::isfinite(value))
        return setError(error, "attn: error: '" + abi.specName +
                                   "': option 'finite-inputs': input '" +
                                   abi.arrays[a].name + "' holds " +
                                   (std::isnan(value) ? "NaN" : "an infinity") +
                                   " at flat index " + std::to_string(i)),
               ATTN_STATUS_ERROR;
    }
  }
  return ATTN_STATUS_OK;
}

int attnKernelRun(AttnKernel *kernel, void *const *arrays,
                  const int64_t *sizes, char **error) {
  if (int status = checkCall(kernel, arrays, sizes, error))
    return status;
  if (int status = checkFiniteInputs(kernel, arrays, sizes, error))
    return status;
  if (!runsOnDevice(kernel))
    return callKernel(kernel, arrays, sizes, error);

  const EntryAbi &abi = abiOf(kernel);
  auto gpuError = [&]() {
    setError(error, "attn: error: cannot run '" + abi.specName +
                        "' on the GPU: " + attn_gpu_error());
    return ATTN_STATUS_ERROR;
  };
  if (attn_gpu_init() != 0)
    return gpuError();
  std::vector<size_t> counts = elementCounts(abi, sizes);
  DeviceArrays device;
  auto bytesOf = [&](size_t i) {
    return counts[i] * byteSize(abi.arrays[i].elementType);
  };
  for (size_t i = 0; i + 1 < abi.arrays.size(); ++i)
    if (!device.add(arrays[i], bytesOf(i)))
      return gpuError();
  if (!device.add(nullptr, bytesOf(abi.arrays.size() - 1)))
    return gpuError();
  if (int status = callKernel(kernel, device.data(), sizes, error))
    return status;
  if (!synchronizeDevice().empty() ||
      !device.copyOutputBack(arrays[abi.arrays.size() - 1],
                             bytesOf(abi.arrays.size() - 1)))
    return gpuError();
  return ATTN_STATUS_OK;
}

int attnKernelRunDevice(AttnKernel *kernel, void *const *arrays,
                        const int64_t *sizes, char **error) {
  if (int status = checkCall(kernel, arrays, sizes, error))
    return status;
  if (!runsOnDevice(kernel))
    return setError(error, "attn: error: attnKernelRunDevice needs a kernel "
                           "for target nvptx without emulate-gpu"),
           ATTN_STATUS_ERROR;
  if (int status = callKernel(kernel, arrays, sizes, error))
    return status;
  if (std::string why = synchronizeDevice(); !why.empty())
    return setError(error, "attn: error: " + why), ATTN_STATUS_ERROR;
  return ATTN_STATUS_OK;
}

int attnKernelReference(const AttnKernel *kernel, void *const *arrays,
                        const int64_t *sizes, char **error) {
  if (int status = checkCall(kernel, arrays, sizes, error))
    return status;
  const EntryAbi &abi = abiOf(kernel);
  const Spec &spec = kernel->compiler->getSpec();
  std::vector<size_t> counts = elementCounts(abi, sizes);
  InputArrays inputs;
  {
    // The evaluator's copies of the inputs, and its workspace.
    InputArrays shapes;
    for (size_t i = 0; i + 1 < abi.arrays.size(); ++i) {
      npy::Array array;
      for (const Extent &extent : abi.arrays[i].shape)
        array.shape.push_back(extentValue(extent, sizes));
      shapes[abi.arrays[i].name] = std::move(array);
    }
    MemoryNeed need;
    need.add("copies of the inputs", inputBytes(abi, sizes));
    need.add("reference workspace",
             reference::workspaceBytes(buildProblem(spec, shapes)));
    if (int status = checkCallMemory(kernel, need, error))
      return status;
  }
  for (size_t i = 0; i + 1 < abi.arrays.size(); ++i) {
    npy::Array array;
    for (const Extent &extent : abi.arrays[i].shape)
      array.shape.push_back(extentValue(extent, sizes));
    // f16 / bf16 inputs widen exactly (DESIGN §1.1).
    array.data.resize(counts[i]);
    unpackElements(abi.arrays[i].elementType, arrays[i], counts[i],
                   array.data.data());
    inputs[abi.arrays[i].name] = std::move(array);
  }
  reference::Problem problem = buildProblem(spec, inputs);
  std::string why = reference::validate(problem);
  const AbiArray &outArray = abi.arrays.back();
  if (why.empty() && outArray.elementType == ElementType::F32)
    why = reference::evaluate(problem,
                              static_cast<float *>(arrays[abi.arrays.size() - 1]));
  else if (why.empty()) {
    // A narrow output is the reference's f32 result rounded.
    std::vector<float> out(counts.back());
    why = reference::evaluate(problem, out.data());
    if (why.empty())
      packElements(outArray.elementType, out.data(), out.size(),
                   arrays[abi.arrays.size() - 1]);
  }
  if (!why.empty())
    return setError(error, "attn: error: the reference evaluator rejects the "
                           "problem: " +
                               why),
           ATTN_STATUS_ERROR;
  return ATTN_STATUS_OK;
}

double attnKernelTolerance(const AttnKernel *kernel) {
  if (!kernel)
    return 0.0;
  const CompilerOptions &options = kernel->compiler->getOptions();
  return checkTolerance(kernel->compiler->getSpec(),
                        options.target == Target::NVPTX,
                        options.gpuPrecision == mlir::attn::GpuPrecision::TF32);
}

int attnCompare(const float *out, const float *expected, size_t count,
                double tolerance, double *maxAbsError, double *maxRelError) {
  std::vector<float> a(out, out + (out ? count : 0));
  std::vector<float> b(expected, expected + (expected ? count : 0));
  if (a.size() != b.size())
    return 0;
  Comparison comparison = compareWithReference(a, b, tolerance);
  if (maxAbsError)
    *maxAbsError = comparison.maxAbsError;
  if (maxRelError)
    *maxRelError = comparison.maxRelError;
  return comparison.ok ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// The cost model
//===----------------------------------------------------------------------===//

char *attnReport(const char *specText, const char *specPath,
                 const AttnOptions *options, char **error) {
  if (!specText)
    return setError(error, "attnReport: NULL spec text"), nullptr;
  AttnOptions defaults;
  const AttnOptions &opts = options ? *options : defaults;
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  Compiler compiler(opts.compiler, stream);
  ReportOptions report;
  report.costTarget = opts.compiler.costTarget;
  report.heads = opts.heads;
  report.headDim = opts.headDim;
  std::string text, json;
  if (!compiler.loadSpec(specText, specPath ? specPath : "<string>") ||
      !compiler.report(opts.sizes, report, text, json))
    return setDiagnosticsError(error, diagnostics), nullptr;
  char *result = static_cast<char *>(std::malloc(json.size() + 1));
  if (result)
    std::memcpy(result, json.c_str(), json.size() + 1);
  return result;
}

char *attnReportFile(const char *path, const AttnOptions *options,
                     char **error) {
  std::optional<std::string> text = readSpecFile(path, error);
  return text ? attnReport(text->c_str(), path, options, error) : nullptr;
}

void attnFreeString(char *string) { std::free(string); }

const char *attnVersion(void) {
  return "attn 0.1 (LLVM " LLVM_VERSION_STRING ")";
}

} // extern "C"
