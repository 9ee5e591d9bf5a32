//===- CpuTarget.cpp - What attn's CPU code generation knows of a CPU -----===//

#include "attn/Codegen/CPU/CpuTarget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

using namespace mlir::attn;

RegisterTile CpuTarget::registerTile() const {
  RegisterTile best;
  int64_t bestAccumulators = 0, bestColVectors = 0;
  for (int64_t rows = 1; rows <= 32; rows *= 2) {
    for (int64_t colVectors = 1; colVectors <= 8; colVectors *= 2) {
      int64_t accumulators = rows * colVectors;
      if (accumulators + colVectors + 1 > int64_t(vectorRegisters))
        continue;
      // Most accumulators (they hide the FMA latency); among equals, two
      // right-operand vectors per broadcast: the shape measured fastest on
      // both AVX2 (4x16) and AVX-512 (8x32).
      bool better = accumulators > bestAccumulators ||
                    (accumulators == bestAccumulators &&
                     std::abs(colVectors - 2) < std::abs(bestColVectors - 2));
      if (better) {
        best = {rows, colVectors * lanes()};
        bestAccumulators = accumulators;
        bestColVectors = colVectors;
      }
    }
  }
  return best;
}

int64_t CpuTarget::reductionSteps(const RegisterTile &tile) const {
  int64_t colVectors = std::max<int64_t>(1, tile.cols / lanes());
  int64_t accumulators = tile.rows * colVectors;
  int64_t steps = 4;
  while (steps > 1 &&
         accumulators + colVectors * steps > int64_t(vectorRegisters))
    steps /= 2;
  return steps;
}

/// Size in bytes of the host's data cache at \p level, or std::nullopt.
static std::optional<int64_t> hostCacheBytes(unsigned level) {
  for (unsigned index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    auto read = [&](const char *file) -> std::string {
      auto buffer = llvm::MemoryBuffer::getFile(dir + "/" + file,
                                                /*IsText=*/true);
      if (!buffer)
        return "";
      return (*buffer)->getBuffer().trim().str();
    };
    if (read("level") != std::to_string(level))
      continue;
    std::string type = read("type");
    if (type != "Data" && type != "Unified")
      continue;
    std::string sizeText = read("size");
    llvm::StringRef size = sizeText;
    int64_t scale = 1;
    if (size.consume_back("K"))
      scale = 1024;
    else if (size.consume_back("M"))
      scale = 1024 * 1024;
    int64_t value = 0;
    if (size.getAsInteger(10, value) || value <= 0)
      return std::nullopt;
    return value * scale;
  }
  return std::nullopt;
}

/// What `native` means, read once per process: every pass run and option
/// resolves the CPU, and the host does not change under it.
struct HostCpu {
  std::string cpu;
  /// The host's CPU features as a feature string (`+a,-b,...`).
  std::string features;
  std::optional<int64_t> l1dBytes, l2Bytes;
};

static const HostCpu &hostCpu() {
  static const HostCpu host = [] {
    HostCpu info;
    info.cpu = llvm::sys::getHostCPUName().str();
    llvm::SmallVector<std::string> features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.push_back((feature.second ? "+" : "-") + feature.first().str());
    llvm::sort(features);
    info.features = llvm::join(features, ",");
    info.l1dBytes = hostCacheBytes(1);
    info.l2Bytes = hostCacheBytes(2);
    return info;
  }();
  return host;
}

/// The subtarget of \p cpu with \p features on \p triple, or null.
static std::unique_ptr<llvm::MCSubtargetInfo>
createSubtarget(const std::string &triple, const std::string &cpu,
                const std::string &features, std::string &error) {
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!llvmTarget)
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      llvmTarget->createMCSubtargetInfo(llvm::Triple(triple), cpu, features));
}

std::optional<CpuTarget>
mlir::attn::resolveCpuTarget(const std::string &name,
                             const std::string &features, std::string &error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] { llvm::InitializeNativeTarget(); });

  CpuTarget target;
  target.triple = llvm::sys::getProcessTriple();
  llvm::Triple triple(target.triple);
  // A generic subtarget first: it knows the valid CPU and feature names
  // without warning about an unknown one.
  std::string lookupError;
  std::unique_ptr<llvm::MCSubtargetInfo> generic =
      createSubtarget(target.triple, "", "", lookupError);
  if (!lookupError.empty()) {
    error = "no code generator for the host '" + target.triple +
            "': " + lookupError;
    return std::nullopt;
  }
  bool native = name.empty() || name == "native";
  if (native) {
    target.cpu = hostCpu().cpu;
    target.features = hostCpu().features;
  } else {
    if (!generic || !generic->isCPUStringValid(name)) {
      error = "unknown CPU '" + name + "' for " + target.triple +
              " (expected native, x86-64-v3, x86-64-v4 or a CPU name of "
              "llc -mcpu=help)";
      return std::nullopt;
    }
    target.cpu = name;
  }
  if (!features.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(features).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      llvm::StringRef feature = part.trim();
      if (!feature.consume_front("+") && !feature.consume_front("-")) {
        error =
            "CPU feature '" + part.trim().str() + "' must start with + or -";
        return std::nullopt;
      }
      bool known =
          generic && llvm::any_of(generic->getAllProcessorFeatures(),
                                  [&](const llvm::SubtargetFeatureKV &kv) {
                                    return feature == kv.Key;
                                  });
      if (!known) {
        error = "unknown CPU feature '" + feature.str() + "' for " +
                target.triple + " (see llc -mattr=help)";
        return std::nullopt;
      }
    }
    target.features += (target.features.empty() ? "" : ",") + features;
  }

  std::unique_ptr<llvm::MCSubtargetInfo> subtarget =
      createSubtarget(target.triple, target.cpu, target.features, lookupError);
  auto has = [&](const char *feature) {
    return subtarget && subtarget->checkFeatures(std::string("+") + feature);
  };
  if (triple.isX86()) {
    target.vectorBits = has("avx512f") ? 512 : has("avx") ? 256 : 128;
    target.vectorRegisters = has("avx512f") ? 32 : 16;
    target.fma = has("fma") || has("avx512f");
  } else if (triple.isAArch64()) {
    target.vectorBits = 128;
    target.vectorRegisters = 32;
    target.fma = true;
  }
  target.l2Bytes = target.vectorBits >= 512 ? 1024 * 1024 : 512 * 1024;
  if (native) {
    target.l1dBytes = hostCpu().l1dBytes.value_or(target.l1dBytes);
    target.l2Bytes = hostCpu().l2Bytes.value_or(target.l2Bytes);
  }
  return target;
}

std::string mlir::attn::featuresMissingOnHost(const CpuTarget &target) {
  std::string error;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget =
      createSubtarget(target.triple, target.cpu, target.features, error);
  if (!subtarget)
    return "";
  llvm::SmallVector<std::string> missing;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (!feature.second &&
        subtarget->checkFeatures("+" + feature.first().str()))
      missing.push_back(feature.first().str());
  llvm::sort(missing);
  return llvm::join(missing, ", ");
}
