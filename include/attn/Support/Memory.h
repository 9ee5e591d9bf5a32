//===- Memory.h - What a run needs, and what the machine has ----*- C++ -*-===//
//
// Estimates are checked before anything large is allocated, so that a run
// that cannot fit ends with a message instead of the kernel's OOM killer.
// Plain C++ (no LLVM/MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_MEMORY_H
#define ATTN_SUPPORT_MEMORY_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Bytes this process can still allocate, and where the bound comes from:
/// the least of MemAvailable (/proc/meminfo), the cgroup's memory.max less
/// memory.current, and the soft RLIMIT_AS / RLIMIT_DATA less what the
/// process maps now. std::nullopt when none of them can be read.
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string source;
};
std::optional<AvailableMemory> availableMemory();

/// Parses a byte count: digits with an optional K, M, G or T suffix (powers
/// of 1024; `KiB`, `MB`, ... are accepted too). False on anything else.
bool parseByteSize(const std::string &text, uint64_t &bytes);

/// "1.50 GiB", "12.0 MiB", "512 B".
std::string formatBytes(uint64_t bytes);

/// The parts of a run's memory, each with a name ("inputs", "reference
/// workspace", ...); additions saturate at UINT64_MAX.
class MemoryNeed {
public:
  void add(const std::string &what, uint64_t bytes);
  uint64_t total() const { return sum; }
  const std::vector<std::pair<std::string, uint64_t>> &parts() const {
    return items;
  }

private:
  std::vector<std::pair<std::string, uint64_t>> items;
  uint64_t sum = 0;
};

/// The workspace the compiled code allocates in one call, estimated from
/// the bytes of its inputs: at most one copy of them (qk-first's key panels
/// and value tiles, Linformer's projected keys), plus 16 MiB for the tiles of
/// every thread and the OpenMP runtime.
inline uint64_t estimateKernelWorkspace(uint64_t inputBytes) {
  uint64_t tiles = uint64_t(16) << 20;
  return inputBytes > UINT64_MAX - tiles ? UINT64_MAX : inputBytes + tiles;
}

/// "" when \p need fits under \p limit (0: availableMemory(), read again
/// unless a reading younger than a second shows twice the need), else a
/// message: `this run needs about X (parts), more than the Y ...`, which
/// calls a given limit \p limitName.
std::string checkMemory(const MemoryNeed &need, uint64_t limit,
                        const std::string &limitName = "--max-memory");

/// a * b, or UINT64_MAX when it overflows.
inline uint64_t saturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a)
    return UINT64_MAX;
  return a * b;
}

} // namespace attn

#endif // ATTN_SUPPORT_MEMORY_H
