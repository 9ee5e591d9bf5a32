//===- Calibrate.cpp - Fit the cost model to this machine -----------------===//
//
// The microbenchmarks are specs the compiler turns into the same code as a
// user's: what is timed is attn's own kernels, not a BLAS. Each is described
// to the cost model by the same TermShape, so the fitted rates mean exactly
// what computeSeconds charges.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Calibrate.h"

#include "attn/Compiler/Kernel.h"
#include "attn/Support/InputGenerator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace attn;
using namespace attn::compiler;
namespace cost = attn::cost;

//===----------------------------------------------------------------------===//
// The machine and its calibration file
//===----------------------------------------------------------------------===//

static std::string cpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0)
      continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos)
      break;
    std::string name = line.substr(colon + 1);
    size_t begin = name.find_first_not_of(" \t");
    size_t end = name.find_last_not_of(" \t");
    return begin == std::string::npos ? ""
                                      : name.substr(begin, end - begin + 1);
  }
  return "unknown CPU";
}

static std::string hostIsa() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char *name) { return features.lookup(name); };
  if (has("avx512f"))
    return "AVX-512";
  if (has("avx2") && has("fma"))
    return "AVX2+FMA";
  if (has("avx"))
    return "AVX";
  return "SSE";
}

std::string compiler::hostMachine() {
  return cpuModelName() + "; " + llvm::sys::getHostCPUName().str() + "; " +
         hostIsa() + "; " + std::to_string(maxThreads()) + " threads";
}

std::string compiler::userCacheDir() {
  if (const char *dir = std::getenv("ATTN_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/attn";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/attn";
  return "";
}

std::string compiler::calibrationPath() {
  std::string dir = userCacheDir();
  if (dir.empty())
    return "";
  std::string name;
  for (char c : hostMachine()) {
    bool keep = std::isalnum(static_cast<unsigned char>(c));
    if (keep)
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!name.empty() && name.back() != '-')
      name += '-';
  }
  while (!name.empty() && name.back() == '-')
    name.pop_back();
  return dir + "/targets/" + name + ".target";
}

std::string compiler::defaultCostTarget(Target codeTarget,
                                        std::string &warning) {
  const char *builtin = codeTarget == Target::NVPTX ? "nvptx" : "cpu";
  if (const char *chosen = std::getenv("ATTN_CALIBRATION"); chosen && *chosen)
    return std::string(chosen) == "none" ? builtin : chosen;
  if (codeTarget != Target::CPU)
    return builtin;
  std::string path = calibrationPath();
  if (path.empty() || !llvm::sys::fs::exists(path))
    return builtin;
  cost::Target target;
  std::string why = cost::loadTarget(path, target);
  if (why.empty() && target.machine != hostMachine())
    why = "calibration '" + path + "', measured on '" + target.machine +
          "', not on this machine ('" + hostMachine() + "')";
  if (why.empty() && target.name != "cpu")
    why = "calibration '" + path + "' is not for the cpu target";
  if (!why.empty()) {
    warning = "ignoring " + why +
              "; using the built-in cpu numbers (run "
              "`attnc calibrate` to measure this machine again)";
    return builtin;
  }
  return path;
}

//===----------------------------------------------------------------------===//
// Peak and bandwidth probes
//===----------------------------------------------------------------------===//

namespace {
constexpr int kChains = 12;
constexpr long kFmaIterations = 20 * 1000 * 1000;
} // namespace

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static float fmaLoop512() {
  __m512 acc[kChains];
  __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-6f);
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (long i = 0; i < kFmaIterations; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j)
    sum = _mm512_add_ps(sum, acc[j]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) static float fmaLoop256() {
  __m256 acc[kChains];
  __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-6f);
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm256_set1_ps(static_cast<float>(j));
  for (long i = 0; i < kFmaIterations; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j)
    sum = _mm256_add_ps(sum, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0] + lanes[7];
}
#endif

/// FLOP/s of one core running FMAs \p vectorBits wide (a multiply-add is 2),
/// or 0 where no probe exists for the ISA.
static double probeCorePeak(unsigned vectorBits, bool fma) {
#if defined(__x86_64__)
  if (!fma || vectorBits < 256)
    return 0;
  bool wide = vectorBits >= 512 && __builtin_cpu_supports("avx512f");
  if (!wide &&
      !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
    return 0;
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto start = std::chrono::steady_clock::now();
    volatile float sink = wide ? fmaLoop512() : fmaLoop256();
    (void)sink;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    double flops = 2.0 * kChains * kFmaIterations * (wide ? 16 : 8);
    best = std::max(best, flops / seconds);
  }
  return best;
#else
  (void)vectorBits;
  (void)fma;
  return 0;
#endif
}

/// Bytes/s of \p threads threads summing disjoint slices of 256 MiB.
static double probeBandwidth(int64_t threads) {
  const size_t count = size_t(64) << 20;
  std::vector<float> data(count, 1.0f);
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<double> sums(threads);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int64_t t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        size_t begin = count * t / threads, end = count * (t + 1) / threads;
        float lanes[16] = {};
        for (size_t i = begin; i + 16 <= end; i += 16)
          for (int l = 0; l < 16; ++l)
            lanes[l] += data[i + l];
        double sum = 0;
        for (float lane : lanes)
          sum += lane;
        sums[t] = sum;
      });
    for (std::thread &worker : workers)
      worker.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    best = std::max(best, count * sizeof(float) / seconds);
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Microbenchmarks
//===----------------------------------------------------------------------===//

namespace {
/// One microbenchmark: a term at fixed sizes, with its order and chunk.
struct Probe {
  const char *family;
  cost::Score score = cost::Score::Softmax;
  cost::FeatureMap featureMap = cost::FeatureMap::None;
  bool causal = false;
  cost::Order order = cost::Order::QkFirst;
  int64_t chunk = 0; ///< causal kv-first only
  int64_t heads = 8;
  int64_t length = 256;
  int64_t dim = 64;
  int64_t features = 256; ///< FAVOR+'s m
};
} // namespace

static const char *scoreText(const Probe &probe) {
  if (probe.score == cost::Score::Softmax)
    return "softmax";
  switch (probe.featureMap) {
  case cost::FeatureMap::Elu1:
    return "kernel elu1";
  case cost::FeatureMap::Relu:
    return "kernel relu";
  case cost::FeatureMap::FavorPlus:
    return "kernel favor+";
  case cost::FeatureMap::CosFormer:
    return "kernel cosformer";
  case cost::FeatureMap::Rfa:
    return "kernel rfa";
  default:
    return "kernel identity";
  }
}

static std::string probeSpec(const Probe &probe) {
  std::ostringstream os;
  std::string shape = "[1, " + std::to_string(probe.heads) + ", " +
                      std::to_string(probe.length) + ", " +
                      std::to_string(probe.dim) + "]";
  os << "attention calibrate {\n"
     << "  input q: " << shape << "\n  input k: " << shape
     << "\n  input v: " << shape << "\n";
  bool favor = probe.featureMap == cost::FeatureMap::FavorPlus;
  if (favor)
    os << "  input omega: [" << probe.features << ", " << probe.dim << "]\n";
  os << "  term {\n    score = " << scoreText(probe) << "\n";
  if (favor)
    os << "    omega = omega\n";
  if (probe.causal)
    os << "    mask = causal\n";
  if (probe.score == cost::Score::Kernel)
    os << "    order = " << cost::toString(probe.order) << "\n";
  if (probe.chunk > 0)
    os << "    chunk = " << probe.chunk << "\n";
  os << "  }\n}\n";
  return os.str();
}

static cost::TermShape probeShape(const Probe &probe) {
  cost::TermShape shape;
  shape.score = probe.score;
  shape.featureMap = probe.featureMap;
  shape.mask = probe.causal ? cost::MaskKind::Causal : cost::MaskKind::None;
  shape.heads = probe.heads;
  shape.queries = shape.keys = probe.length;
  shape.featureDim = shape.valueDim = probe.dim;
  if (probe.featureMap == cost::FeatureMap::FavorPlus)
    shape.numFeatures = probe.features;
  return shape;
}

static std::string probeLabel(const Probe &probe) {
  std::ostringstream os;
  os << scoreText(probe) << (probe.causal ? " causal " : " ")
     << (probe.order == cost::Order::QkFirst   ? "qk-first"
         : probe.order == cost::Order::KvFirst ? "kv-first"
                                               : "recurrent");
  if (probe.chunk > 0)
    os << " c=" << probe.chunk;
  os << " H=" << probe.heads << " N=" << probe.length << " D=" << probe.dim;
  return os.str();
}

/// The microbenchmarks, grouped by family (each family a progress line).
static std::vector<Probe> probes() {
  using cost::FeatureMap;
  using cost::Order;
  using cost::Score;
  std::vector<Probe> list;
  auto add = [&](Probe probe) { list.push_back(probe); };
  // Fixed costs per call and per (batch, head): one head and eight, of a
  // few rows, for each kind of strategy.
  for (auto [heads, length] :
       {std::pair<int64_t, int64_t>{1, 16}, {4, 16}, {8, 16}, {8, 32}}) {
    add(Probe{"fixed costs", Score::Kernel, FeatureMap::Elu1, false,
              Order::QkFirst, 0, heads, length});
    add(Probe{"fixed costs", Score::Kernel, FeatureMap::Elu1, true,
              Order::QkFirst, 0, heads, length});
    add(Probe{"fixed costs", Score::Kernel, FeatureMap::Elu1, false,
              Order::KvFirst, 0, heads, length});
    add(Probe{"fixed costs", Score::Kernel, FeatureMap::Elu1, true,
              Order::KvFirst, 16, heads, length});
  }
  // The recurrent order: its fixed costs at a few tokens, its rate at more
  // (one head and eight, D = 64 and 128).
  for (auto [heads, length] : {std::pair<int64_t, int64_t>{1, 16},
                               {8, 16},
                               {8, 32},
                               {8, 256},
                               {8, 1024}})
    add(Probe{"recurrent", Score::Kernel, FeatureMap::Elu1, true,
              Order::Recurrent, 0, heads, length});
  add(Probe{"recurrent", Score::Kernel, FeatureMap::Elu1, true,
            Order::Recurrent, 0, 8, 256, 128});
  for (int64_t n : {128, 512, 1024})
    add(Probe{"qk-first softmax", Score::Softmax, FeatureMap::None, false,
              Order::QkFirst, 0, 8, n});
  for (int64_t n : {256, 1024})
    add(Probe{"qk-first softmax causal", Score::Softmax, FeatureMap::None, true,
              Order::QkFirst, 0, 8, n});
  for (int64_t n : {64, 256, 1024})
    add(Probe{"qk-first kernel", Score::Kernel, FeatureMap::Elu1, false,
              Order::QkFirst, 0, 8, n});
  for (int64_t n : {64, 256, 1024})
    add(Probe{"qk-first kernel causal", Score::Kernel, FeatureMap::Elu1, true,
              Order::QkFirst, 0, 8, n});
  for (int64_t n : {64, 256, 2048})
    add(Probe{"kv-first", Score::Kernel, FeatureMap::Elu1, false,
              Order::KvFirst, 0, 8, n});
  for (int64_t c : {16, 32, 64, 128, 256})
    add(Probe{"kv-first causal chunks", Score::Kernel, FeatureMap::Elu1, true,
              Order::KvFirst, c, 8, 1024});
  add(Probe{"kv-first causal chunks", Score::Kernel, FeatureMap::Elu1, true,
            Order::KvFirst, 32, 8, 128});
  add(Probe{"kv-first causal chunks", Score::Kernel, FeatureMap::Elu1, true,
            Order::KvFirst, 64, 8, 256});
  // Wider heads: the same families at D = 128; qk-first at one and two
  // tiles too, where the per-row work (qk_row_cost) weighs most.
  for (int64_t n : {64, 128, 512})
    add(Probe{"D = 128", Score::Kernel, FeatureMap::Elu1, false, Order::QkFirst,
              0, 8, n, 128});
  add(Probe{"D = 128", Score::Kernel, FeatureMap::Elu1, true, Order::QkFirst, 0,
            8, 512, 128});
  for (int64_t n : {128, 512})
    add(Probe{"D = 128", Score::Kernel, FeatureMap::Elu1, false, Order::KvFirst,
              0, 8, n, 128});
  for (int64_t c : {32, 64})
    add(Probe{"D = 128", Score::Kernel, FeatureMap::Elu1, true, Order::KvFirst,
              c, 8, 1024, 128});
  for (int64_t n : {256, 1024}) {
    Probe favor{"feature maps",
                Score::Kernel,
                FeatureMap::FavorPlus,
                false,
                Order::KvFirst,
                0,
                8,
                n};
    add(favor);
  }
  add(Probe{"feature maps", Score::Kernel, FeatureMap::CosFormer, false,
            Order::KvFirst, 0, 8, 1024});
  // The same maps under qk-first, whose pair loops are as wide as φ.
  for (int64_t n : {128, 512})
    add(Probe{"feature maps", Score::Kernel, FeatureMap::FavorPlus, false,
              Order::QkFirst, 0, 8, n});
  add(Probe{"feature maps", Score::Kernel, FeatureMap::FavorPlus, true,
            Order::QkFirst, 0, 8, 256});
  // A state four times as wide at three chunks: what a chunk costs apart
  // from its state's size (chunk_overhead).
  for (int64_t c : {16, 32, 64})
    add(Probe{"feature maps", Score::Kernel, FeatureMap::FavorPlus, true,
              Order::KvFirst, c, 8, 256});
  add(Probe{"feature maps", Score::Kernel, FeatureMap::CosFormer, false,
            Order::QkFirst, 0, 8, 256});
  add(Probe{"feature maps", Score::Kernel, FeatureMap::CosFormer, true,
            Order::QkFirst, 0, 8, 256});
  return list;
}

namespace {
/// Inputs, output and the compiled code of one microbenchmark.
struct Timed {
  double seconds = 0;
  std::string error;
};
} // namespace

static Timed timeProbe(const Probe &probe, const CalibrateOptions &options) {
  Timed timed;
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  CompilerOptions compilerOptions;
  compilerOptions.target = options.target;
  compilerOptions.cpu = options.cpu;
  compilerOptions.cpuFeatures = options.cpuFeatures;
  compilerOptions.threads = options.threads;
  // The order and chunk are in the spec; no cost model decides here.
  compilerOptions.costTarget = "cpu";
  compilerOptions.toolName = "attnc calibrate";
  Compiler compiler(compilerOptions, stream);
  auto failed = [&](const std::string &what) {
    timed.error = what + " '" + probeLabel(probe) + "': " + diagnostics;
    return timed;
  };
  if (!compiler.loadSpec(probeSpec(probe), "<calibrate>"))
    return failed("cannot parse");
  std::optional<frontend::SizeBindings> sizes =
      compiler.bindSizes({}, /*allowUnbound=*/false);
  if (!sizes)
    return failed("cannot bind");
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler.generateModule(*sizes);
  if (!module)
    return failed("cannot generate");
  std::optional<CompiledObject> object =
      compiler.compileKernelObject(*module, *sizes);
  if (!object)
    return failed("cannot compile");
  std::unique_ptr<Kernel> kernel = compiler.loadKernel(std::move(*object));
  if (!kernel)
    return failed("cannot load");

  std::vector<std::vector<float>> host;
  uint64_t seed = 1;
  for (const AbiArray &array : kernel->getAbi().arrays) {
    int64_t count = 1;
    for (const Extent &extent : array.shape)
      count *= extent.value;
    host.push_back(array.isOutput ? std::vector<float>(count)
                                  : inputs::gaussian(seed++, count, 0.5));
  }
  std::vector<void *> arrays;
  std::vector<std::unique_ptr<void, void (*)(void *)>> device;
  for (std::vector<float> &values : host)
    arrays.push_back(values.data());
  if (options.device) {
    for (size_t i = 0; i < host.size(); ++i) {
      bool output = i + 1 == host.size();
      void *pointer = options.device->allocate(
          output ? nullptr : host[i].data(), host[i].size());
      if (!pointer)
        return failed("cannot allocate device memory for");
      device.emplace_back(pointer, options.device->release);
      arrays[i] = pointer;
    }
  }
  auto callOnce = [&]() -> std::string {
    int status = kernel->call(arrays.data(), nullptr);
    if (status != kStatusOk)
      return std::string("the entry point returned ") + describeStatus(status);
    return options.device ? options.device->synchronize() : "";
  };
  if (std::string why = callOnce(); !why.empty())
    return failed(why + " running");
  // The fastest of the calls: on a shared machine the other calls measure
  // the neighbours. Kernels are called until 150 ms have passed.
  double best = INFINITY, total = 0;
  for (int run = 0;
       run < std::max(1, options.repeats) || (total < 0.15 && run < 1000);
       ++run) {
    auto start = std::chrono::steady_clock::now();
    if (std::string why = callOnce(); !why.empty())
      return failed(why + " running");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    best = std::min(best, seconds);
    total += seconds;
  }
  timed.seconds = best;
  return timed;
}

//===----------------------------------------------------------------------===//
// calibrate
//===----------------------------------------------------------------------===//

bool compiler::calibrate(const CalibrateOptions &options,
                         llvm::raw_ostream &progress, CalibrationResult &result,
                         std::string &error) {
  if (!checkThreadCount(options.threads, "--threads", error))
    return false;
  int64_t threads = options.threads > 0 ? options.threads : maxThreads();
  cost::Target target =
      options.target == Target::NVPTX ? cost::nvptxTarget() : cost::cpuTarget();
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };

  if (options.target == Target::CPU) {
    std::string diagnostics;
    llvm::raw_string_ostream stream(diagnostics);
    CompilerOptions compilerOptions;
    compilerOptions.cpu = options.cpu;
    compilerOptions.cpuFeatures = options.cpuFeatures;
    compilerOptions.toolName = "attnc";
    Compiler compiler(compilerOptions, stream);
    std::optional<mlir::attn::CpuTarget> cpu = compiler.resolveCpu();
    if (!cpu) {
      error = diagnostics;
      llvm::StringRef prefix = "attnc: error: ";
      if (llvm::StringRef(error).starts_with(prefix))
        error = error.substr(prefix.size());
      while (!error.empty() && error.back() == '\n')
        error.pop_back();
      return false;
    }
    result.corePeakFlops = probeCorePeak(cpu->vectorBits, cpu->fma);
    if (result.corePeakFlops > 0) {
      target.peakFlops = result.corePeakFlops * threads;
      progress << "calibrate: FMA peak "
               << cost::formatNumber(result.corePeakFlops / 1e9)
               << " GFLOP/s per core (" << cpu->vectorBits << "-bit), "
               << threads
               << " threads: " << cost::formatNumber(target.peakFlops / 1e9)
               << " GFLOP/s\n";
    } else {
      progress << "calibrate: no FMA probe for this ISA; keeping the "
                  "built-in peak of "
               << cost::formatNumber(target.peakFlops / 1e9) << " GFLOP/s\n";
    }
    result.bandwidth = probeBandwidth(threads);
    target.memoryBandwidth = result.bandwidth;
    target.cores = threads;
    progress << "calibrate: memory bandwidth "
             << cost::formatNumber(result.bandwidth / 1e9) << " GB/s ("
             << threads << " threads)\n";
    progress.flush();
  }

  cost::Target before = target;
  // The fitted model counts the tiles the code computes (its qk-first
  // loops run whole tiles), which the built-in one does not.
  cost::Target counting = target;
  counting.qkWholeTiles = 1;
  std::vector<Probe> list = probes();
  for (size_t i = 0; i < list.size();) {
    const char *family = list[i].family;
    progress << "calibrate: " << family << ":";
    for (; i < list.size() && list[i].family == family; ++i) {
      Timed timed = timeProbe(list[i], options);
      if (!timed.error.empty()) {
        progress << "\n";
        error = timed.error;
        return false;
      }
      CalibrationSample sample;
      sample.label = probeLabel(list[i]);
      cost::TermShape shape = probeShape(list[i]);
      auto estimate = [&](const cost::Target &model) {
        if (list[i].order == cost::Order::QkFirst)
          return cost::estimateQkFirst(shape, model);
        if (list[i].order == cost::Order::Recurrent)
          return cost::estimateRecurrent(shape, model);
        return cost::estimateKvFirst(shape, model,
                                     list[i].chunk > 0
                                         ? std::optional<int64_t>(list[i].chunk)
                                         : std::nullopt);
      };
      sample.work = estimate(counting).work;
      sample.seconds = std::max(timed.seconds, 1e-9);
      sample.before = estimate(before).seconds;
      progress << " " << sample.label.substr(sample.label.rfind("H=")) << " "
               << cost::formatSeconds(sample.seconds, 3);
      result.samples.push_back(sample);
    }
    progress << "\n";
    progress.flush();
  }
  std::vector<cost::Measurement> measurements;
  for (const CalibrationSample &sample : result.samples)
    measurements.push_back({sample.work, sample.seconds});
  target.qkWholeTiles = 1;
  cost::fitTarget(measurements, target);
  for (CalibrationSample &sample : result.samples)
    sample.after = cost::predictSeconds(sample.work, target);
  target.machine = hostMachine();
  if (options.cpu != "native" || !options.cpuFeatures.empty())
    target.machine +=
        "; code for " + options.cpu +
        (options.cpuFeatures.empty() ? "" : " " + options.cpuFeatures);
  result.target = target;
  progress << "calibrate: fitted in " << cost::formatNumber(elapsed())
           << " s\n";
  return true;
}
