//===- Memory.cpp - What a run needs, and what the machine has ------------===//

#include "attn/Support/Memory.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

using namespace attn;

/// The first number of the file at \p path, if it holds one.
static std::optional<uint64_t> readNumber(const char *path) {
  std::ifstream file(path);
  uint64_t value = 0;
  if (file >> value)
    return value;
  return std::nullopt;
}

/// The process's mapped bytes now (VmSize), or 0.
static uint64_t mappedBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  if (!(statm >> pages))
    return 0;
  long pageSize = sysconf(_SC_PAGESIZE);
  return pages * static_cast<uint64_t>(pageSize > 0 ? pageSize : 4096);
}

std::optional<AvailableMemory> attn::availableMemory() {
  std::optional<AvailableMemory> best;
  auto consider = [&](uint64_t bytes, const std::string &source) {
    if (!best || bytes < best->bytes)
      best = AvailableMemory{bytes, source};
  };

  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      consider(kib * 1024, "available memory (MemAvailable)");
      break;
    }
  }

  // cgroup v2: memory.max is "max" when unlimited, which readNumber skips.
  if (std::optional<uint64_t> max = readNumber("/sys/fs/cgroup/memory.max")) {
    uint64_t current =
        readNumber("/sys/fs/cgroup/memory.current").value_or(0);
    consider(*max > current ? *max - current : 0,
             "memory left in the cgroup's memory.max");
  }

  uint64_t mapped = mappedBytes();
  for (auto [resource, name] :
       {std::pair<int, const char *>{RLIMIT_AS, "RLIMIT_AS"},
        std::pair<int, const char *>{RLIMIT_DATA, "RLIMIT_DATA"}}) {
    struct rlimit limit;
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      uint64_t cap = static_cast<uint64_t>(limit.rlim_cur);
      consider(cap > mapped ? cap - mapped : 0,
               std::string("address space left under ") + name +
                   " (ulimit -v / -d)");
    }
  }
  return best;
}

bool attn::parseByteSize(const std::string &text, uint64_t &bytes) {
  size_t i = 0;
  uint64_t value = 0;
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
       ++i) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  std::string suffix = text.substr(i);
  for (char &c : suffix)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = -1;
  const char *units[] = {"", "K", "M", "G", "T"};
  for (int u = 0; u < 5; ++u) {
    std::string unit = units[u];
    if (suffix == unit || (u > 0 && (suffix == unit + "B" ||
                                     suffix == unit + "IB")) ||
        (u == 0 && suffix == "B"))
      shift = 10 * u;
  }
  if (shift < 0)
    return false;
  if (shift > 0 && value > (UINT64_MAX >> shift))
    return false;
  bytes = value << shift;
  return true;
}

std::string attn::formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 6) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof(text), "%llu B",
                  static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof(text), value < 10 ? "%.2f %s" : "%.1f %s",
                  value, units[unit]);
  return text;
}

void MemoryNeed::add(const std::string &what, uint64_t bytes) {
  if (bytes == 0)
    return;
  items.emplace_back(what, bytes);
  sum = sum > UINT64_MAX - bytes ? UINT64_MAX : sum + bytes;
}

/// The last reading of availableMemory() and when it was taken, shared by
/// every thread that checks a run.
namespace {
struct MemoryReading {
  std::mutex lock;
  std::optional<AvailableMemory> available;
  std::chrono::steady_clock::time_point when;
};
} // namespace

/// availableMemory(), re-read unless a reading younger than a second shows
/// at least twice \p needed: reading /proc and /sys takes tens of
/// microseconds, as long as a small kernel's whole call.
static std::optional<AvailableMemory> availableMemoryFor(uint64_t needed) {
  static MemoryReading reading;
  std::lock_guard<std::mutex> guard(reading.lock);
  auto now = std::chrono::steady_clock::now();
  bool fresh = reading.available &&
               now - reading.when < std::chrono::seconds(1) &&
               needed <= reading.available->bytes / 2;
  if (!fresh) {
    reading.available = availableMemory();
    reading.when = now;
  }
  return reading.available;
}

std::string attn::checkMemory(const MemoryNeed &need, uint64_t limit,
                              const std::string &limitName) {
  std::string bound;
  if (limit == 0) {
    std::optional<AvailableMemory> available = availableMemoryFor(need.total());
    if (!available)
      return ""; // Nothing to compare with: let the allocations decide.
    limit = available->bytes;
    bound = "the " + formatBytes(limit) + " of " + available->source;
  } else {
    bound = "the " + formatBytes(limit) + " limit of " + limitName;
  }
  if (need.total() <= limit)
    return "";
  std::ostringstream message;
  message << "this run needs about " << formatBytes(need.total()) << " (";
  for (size_t i = 0; i < need.parts().size(); ++i)
    message << (i ? ", " : "") << need.parts()[i].first << " "
            << formatBytes(need.parts()[i].second);
  message << "), more than " << bound;
  return message.str();
}
