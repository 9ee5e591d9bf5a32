//===- CpuTarget.cpp - What attn's CPU code generation knows of a CPU -----===//

#include "attn/Codegen/CPU/CpuTarget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

using namespace mlir::attn;

RegisterTile CpuTarget::registerTile() const {
  // Per reduction step a rows x colVectors tile issues rows·colVectors FMAs
  // (two pipes), loads rows broadcasts and colVectors right-operand vectors
  // (two load ports), and waits for each accumulator's previous FMA (about
  // 4 cycles). Its slack is how far the FMAs outlast the loads and that
  // latency: at 1 (4x16 on AVX2) any delay stalls the pipes, and AVX2's 4x16
  // ran at 83-86% of the FMA peak where 6x16 (slack 1.5) ran at 93-100%;
  // on AVX-512, 8x32 (1.6), 12x32 (1.7) and 14x32 (1.75) were within 5%.
  constexpr double kFmaPipes = 2, kLoadPorts = 2, kFmaLatency = 4;
  constexpr double kEnoughSlack = 1.5;
  struct Candidate {
    int64_t rows = 1, colVectors = 1;
    double efficiency = 0, slack = 0;
  };
  auto rate = [&](int64_t rows, int64_t colVectors) {
    double fmaCycles = double(rows * colVectors) / kFmaPipes;
    double loadCycles = double(rows + colVectors) / kLoadPorts;
    double bound = std::max(loadCycles, kFmaLatency);
    return Candidate{rows, colVectors, fmaCycles / std::max(fmaCycles, bound),
                     fmaCycles / bound};
  };
  // Better: (1) more of the FMA pipes busy; (2) enough slack; (3) rows a
  // power of two, which divide convert-attn-to-linalg's tiles (other rows
  // leave a remainder that attn-tile-and-vectorize peels); (4) two
  // right-operand vectors per broadcast; (5) the fewer accumulators.
  auto better = [&](const Candidate &a, const Candidate &b) {
    if (std::abs(a.efficiency - b.efficiency) > 1e-9)
      return a.efficiency > b.efficiency;
    bool aEnough = a.slack >= kEnoughSlack, bEnough = b.slack >= kEnoughSlack;
    if (aEnough != bEnough)
      return aEnough;
    if (!aEnough && std::abs(a.slack - b.slack) > 1e-9)
      return a.slack > b.slack;
    bool aPow2 = llvm::isPowerOf2_64(a.rows),
         bPow2 = llvm::isPowerOf2_64(b.rows);
    if (aPow2 != bPow2)
      return aPow2;
    int64_t aWidth = std::abs(a.colVectors - 2),
            bWidth = std::abs(b.colVectors - 2);
    if (aWidth != bWidth)
      return aWidth < bWidth;
    return a.rows * a.colVectors < b.rows * b.colVectors;
  };
  std::optional<Candidate> best;
  for (int64_t rows = 1; rows <= 16; ++rows) {
    for (int64_t colVectors = 1; colVectors <= 8; colVectors *= 2) {
      // The accumulators, the right operand's vectors and one broadcast.
      if (rows * colVectors + colVectors + 1 > int64_t(vectorRegisters))
        continue;
      Candidate candidate = rate(rows, colVectors);
      if (!best || better(candidate, *best))
        best = candidate;
    }
  }
  if (!best)
    return {1, lanes()};
  return {best->rows, best->colVectors * lanes()};
}

int64_t CpuTarget::reductionSteps() const { return 4; }

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
