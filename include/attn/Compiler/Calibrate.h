//===- Calibrate.h - Fit the cost model to this machine ---------*- C++ -*-===//
//
// `attnc calibrate`: compiles and times small specs of every kernel family
// the cost model distinguishes (qk-first per score and mask, kv-first state
// and query passes, causal chunks of each size, feature maps, the per-call
// overhead), fits the model's rates to the times by weighted least squares,
// and writes a target description file (docs/CostModel.md, "Calibration").
// The file of this machine is looked up in the user's cache folder and used
// by default wherever a cost model decides (resolveCostTarget).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_CALIBRATE_H
#define ATTN_COMPILER_CALIBRATE_H

#include "attn/Analysis/CostModel.h"
#include "attn/Compiler/Compiler.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace attn {
namespace compiler {

/// This machine as a calibration names it: the CPU model, LLVM's name of
/// the core, the vector ISA and the hardware threads this process may use,
/// e.g. "AMD EPYC; znver3; AVX2+FMA; 2 threads".
std::string hostMachine();

/// Where the calibration of this machine lives:
/// <cache>/targets/<machine, as a file name>.target, with <cache> the user's
/// cache folder ($ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else
/// $HOME/.cache/attn); "" when there is no cache folder.
std::string calibrationPath();

/// The user's cache folder (see calibrationPath), or "".
std::string userCacheDir();

/// The cost target that decides for code that runs on \p codeTarget when
/// the user named none: $ATTN_CALIBRATION when set (a file, or `none` for
/// the built-in numbers), else this machine's calibration when present
/// (CPU only: a GPU calibration is never cached here), else the built-in
/// target ("cpu" or "nvptx"). A calibration that is malformed, of another
/// format version or of another machine is not used: \p warning says why.
/// Returns what the attn-select-order `target` option takes.
std::string defaultCostTarget(Target codeTarget, std::string &warning);

/// One timed microbenchmark.
struct CalibrationSample {
  std::string label; ///< "elu1 causal kv-first c=64 N=1024"
  cost::Work work;   ///< The cost model's count of what it computes.
  double seconds = 0;
  double before = 0; ///< Predicted with the numbers it started from.
  double after = 0;  ///< Predicted with the fitted numbers.
};

/// Device memory and synchronisation for GPU code, from a caller that links
/// the attn GPU runtime (this library does not).
struct CalibrationDevice {
  /// A device copy of \p count floats from \p host (null: uninitialised),
  /// or null when the GPU fails.
  void *(*allocate)(const float *host, size_t count);
  void (*release)(void *pointer);
  /// Waits for the GPU: "" or why it failed.
  std::string (*synchronize)();
};

struct CalibrateOptions {
  Target target = Target::CPU;
  std::string cpu = "native";
  std::string cpuFeatures;
  /// Threads of the timed code (0: every core), as attnc run's default.
  int64_t threads = 0;
  /// Timed calls per microbenchmark (the median is kept).
  int repeats = 7;
  /// Set for Target::NVPTX.
  const CalibrationDevice *device = nullptr;
};

struct CalibrationResult {
  cost::Target target;
  std::vector<CalibrationSample> samples;
  /// The probed FMA peak of one core and the one-thread memory bandwidth.
  double corePeakFlops = 0;
  double bandwidth = 0;
};

/// Runs the microbenchmarks, with a line per family on \p progress, and
/// fits the model. False with \p error set where it cannot run (no GPU for
/// the NVPTX target, a CPU the host cannot run).
bool calibrate(const CalibrateOptions &options, llvm::raw_ostream &progress,
               CalibrationResult &result, std::string &error);

} // namespace compiler
} // namespace attn

#endif // ATTN_COMPILER_CALIBRATE_H
