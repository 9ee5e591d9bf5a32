//===- WarpRuntime.cpp - warp instructions on host threads ----------------===//
//
// Each warp has an exchange slot: a lane deposits its operands and sleeps on
// the slot's generation (a futex); the 32nd lane to arrive runs the
// instruction's definition over the whole warp, bumps the generation and
// wakes the others, who collect their results. A lane can deposit
// the operands of its next instruction only after it has collected the
// results of this one, and that instruction runs only when all 32 lanes have
// deposited, so neither array is overwritten while still needed.
//
//===----------------------------------------------------------------------===//

#include "attn/Emulation/WarpRuntime.h"

#include "attn/Emulation/WarpInstructions.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace attn;
using namespace attn::ptx;

namespace {

constexpr int kMaxWarps = 32;

enum class Instruction { Mma16, MmaTf32, Ldmatrix, Shuffle };

const char *nameOf(Instruction instruction) {
  switch (instruction) {
  case Instruction::Mma16:
    return "mma.sync.m16n8k16";
  case Instruction::MmaTf32:
    return "mma.sync.m16n8k8.tf32";
  case Instruction::Ldmatrix:
    return "ldmatrix";
  case Instruction::Shuffle:
    return "shfl.sync";
  }
  return "?";
}

struct WarpSlot {
  /// Lanes that have deposited their operands of the current instruction.
  std::atomic<uint32_t> arrived{0};
  /// Counts the instructions run; the lanes sleep on it (a futex word).
  std::atomic<uint32_t> generation{0};
  /// What each lane asked for; every lane must ask the same.
  Instruction instruction[kWarpSize];
  int32_t laneModifiers[kWarpSize][4];
  /// Lane 0's modifiers, for the instruction's definition.
  int32_t modifiers[4] = {};
  uint32_t a[kWarpSize][4];
  uint32_t b[kWarpSize][2];
  float c[kWarpSize][4];
  float d[kWarpSize][4];
  const uint8_t *rows[kWarpSize];
  uint32_t loaded[kWarpSize][4];
  uint32_t value[kWarpSize], offset[kWarpSize], shuffled[kWarpSize];
  bool valid[kWarpSize];
};

/// Sleeps while *word == expected, at most a second.
void futexWait(std::atomic<uint32_t> &word, uint32_t expected) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
                "a futex word is 32 bits");
  timespec timeout = {1, 0};
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE,
          expected, &timeout, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE,
          INT32_MAX, nullptr, nullptr, 0);
}

WarpSlot slots[kMaxWarps];
std::mutex blockMutex;
int32_t blockThreads = 0;
std::atomic<bool> failed{false};

__attribute__((format(printf, 1, 2))) void fail(const char *format, ...) {
  bool expected = false;
  // Only the first failure of a block is reported: the rest follow from it.
  if (!failed.compare_exchange_strong(expected, true))
    return;
  std::va_list arguments;
  va_start(arguments, format);
  std::fprintf(stderr, "attn-emulate-gpu: ");
  std::vfprintf(stderr, format, arguments);
  std::fprintf(stderr, "\n");
  va_end(arguments);
  // Lanes waiting in other warps give up now rather than at their timeout.
  for (WarpSlot &slot : slots)
    futexWakeAll(slot.generation);
}

/// Runs one warp instruction for lane thread % 32: \p deposit stores this
/// lane's operands into the slot, \p compute runs the instruction over the
/// warp (called once, by the last lane to arrive), \p fetch reads this
/// lane's results. Returns false (results undefined) when the instruction
/// could not run.
template <typename Deposit, typename Compute, typename Fetch>
bool collective(int32_t thread, Instruction instruction,
                std::initializer_list<int32_t> modifiers, Deposit deposit,
                Compute compute, Fetch fetch) {
  if (failed.load())
    return false;
  if (thread < 0 || thread >= blockThreads) {
    fail("thread %d %s outside the block", thread, nameOf(instruction));
    return false;
  }
  WarpSlot &slot = slots[thread / kWarpSize];
  int lane = thread % kWarpSize;
  // No lock: each lane writes only its own entries, and the generation
  // cannot move before this lane has arrived.
  uint32_t generation = slot.generation.load(std::memory_order_acquire);
  slot.instruction[lane] = instruction;
  std::fill(std::begin(slot.laneModifiers[lane]),
            std::end(slot.laneModifiers[lane]), 0);
  std::copy(modifiers.begin(), modifiers.end(), slot.laneModifiers[lane]);
  deposit(slot, lane);
  if (slot.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == kWarpSize) {
    bool agree = true;
    for (int other = 1; other < kWarpSize; ++other)
      agree &= slot.instruction[other] == slot.instruction[0] &&
               std::equal(std::begin(slot.laneModifiers[other]),
                          std::end(slot.laneModifiers[other]),
                          std::begin(slot.laneModifiers[0]));
    if (agree) {
      std::copy(std::begin(slot.laneModifiers[0]),
                std::end(slot.laneModifiers[0]), slot.modifiers);
      compute(slot);
    } else {
      fail("warp %d: lanes reached different warp instructions (%s and "
           "another, or other modifiers): they diverged",
           thread / kWarpSize, nameOf(instruction));
    }
    slot.arrived.store(0, std::memory_order_relaxed);
    slot.generation.store(generation + 1, std::memory_order_release);
    futexWakeAll(slot.generation);
    if (!agree)
      return false;
  } else {
    // The other lanes are usually a few time slices away: yield to them
    // before sleeping (a causal N = 300 bf16 softmax: 6.1 s sleeping at
    // once, 1.7 s after up to 64 yields; more buys nothing).
    for (int turn = 0;
         turn < 64 &&
         slot.generation.load(std::memory_order_acquire) == generation;
         ++turn)
      sched_yield();
    // A lane that never arrives (a divergent kernel) must not hang the
    // process: give up after a minute.
    for (int second = 0;
         slot.generation.load(std::memory_order_acquire) == generation;
         ++second) {
      if (failed.load() || second == 60) {
        fail("warp %d: not every lane reached %s (the lanes diverged)",
             thread / kWarpSize, nameOf(instruction));
        return false;
      }
      futexWait(slot.generation, generation);
    }
    if (failed.load())
      return false;
  }
  fetch(slot, lane);
  return true;
}

/// One mma.sync of either shape: 4 A and 2 B registers, 4 C and D floats
/// per lane; \p compute applies the instruction's definition. D is NaN
/// when the instruction could not run.
template <typename Compute>
void mmaCollective(int32_t thread, Instruction instruction,
                   std::initializer_list<int32_t> modifiers,
                   const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                   const float (&c)[4], float *d, Compute compute) {
  bool ok = collective(
      thread, instruction, modifiers,
      [&](WarpSlot &slot, int lane) {
        std::memcpy(slot.a[lane], a, sizeof a);
        slot.b[lane][0] = b0;
        slot.b[lane][1] = b1;
        std::memcpy(slot.c[lane], c, sizeof c);
      },
      compute,
      [&](WarpSlot &slot, int lane) {
        std::memcpy(d, slot.d[lane], 4 * sizeof(float));
      });
  if (!ok)
    std::fill(d, d + 4, std::numeric_limits<float>::quiet_NaN());
}

} // namespace

extern "C" {

void attn_emu_block_begin(int32_t threads) {
  blockMutex.lock();
  failed.store(false);
  blockThreads = threads;
  if (threads <= 0 || threads % kWarpSize != 0 ||
      threads > kMaxWarps * kWarpSize)
    fail("a block of %d threads: warp instructions need whole warps, at "
         "most 1024 threads",
         threads);
  for (WarpSlot &slot : slots) {
    slot.arrived.store(0);
    slot.generation.store(0);
  }
}

int32_t attn_emu_block_end(void) {
  int32_t status = failed.load() ? 1 : 0;
  blockThreads = 0;
  blockMutex.unlock();
  return status;
}

void attn_emu_mma_m16n8k16(int32_t thread, int32_t bf16, uint32_t a0,
                           uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                           uint32_t b1, float c0, float c1, float c2, float c3,
                           float *d) {
  mmaCollective(thread, Instruction::Mma16, {bf16 != 0}, {a0, a1, a2, a3}, b0,
                b1, {c0, c1, c2, c3}, d, [](WarpSlot &slot) {
                  mmaM16N8K16(slot.modifiers[0] ? MmaInput::BF16
                                                : MmaInput::F16,
                              slot.a, slot.b, slot.c, slot.d);
                });
}

void attn_emu_mma_m16n8k8_tf32(int32_t thread, uint32_t a0, uint32_t a1,
                               uint32_t a2, uint32_t a3, uint32_t b0,
                               uint32_t b1, float c0, float c1, float c2,
                               float c3, float *d) {
  mmaCollective(thread, Instruction::MmaTf32, {}, {a0, a1, a2, a3}, b0, b1,
                {c0, c1, c2, c3}, d, [](WarpSlot &slot) {
                  mmaM16N8K8Tf32(slot.a, slot.b, slot.c, slot.d);
                });
}

uint32_t attn_emu_cvt_rna_tf32(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return cvtRnaTf32(bits);
}

void attn_emu_ldmatrix(int32_t thread, int32_t count, int32_t transpose,
                       const void *row, uint32_t *d) {
  if (count != 1 && count != 2 && count != 4) {
    fail("ldmatrix of %d matrices: expected 1, 2 or 4", count);
    return;
  }
  collective(
      thread, Instruction::Ldmatrix, {count, transpose != 0},
      [&](WarpSlot &slot, int lane) {
        slot.rows[lane] = static_cast<const uint8_t *>(row);
      },
      [&](WarpSlot &slot) {
        // Row addresses relative to the lowest one that the instruction
        // reads (lanes 0 .. 8 count - 1).
        int used = 8 * slot.modifiers[0];
        const uint8_t *base = *std::min_element(slot.rows, slot.rows + used);
        uint32_t offsets[kWarpSize] = {};
        for (int lane = 0; lane < used; ++lane) {
          auto offset = static_cast<uint64_t>(slot.rows[lane] - base);
          if (offset > std::numeric_limits<uint32_t>::max()) {
            fail("ldmatrix: lane %d's row is over 4 GiB away from the others",
                 lane);
            return;
          }
          offsets[lane] = static_cast<uint32_t>(offset);
        }
        std::memset(slot.loaded, 0, sizeof slot.loaded);
        ldmatrix(slot.modifiers[0], slot.modifiers[1] != 0, base, offsets,
                 slot.loaded);
      },
      [&](WarpSlot &slot, int lane) {
        std::memcpy(d, slot.loaded[lane], count * sizeof(uint32_t));
      });
}

uint32_t attn_emu_shfl(int32_t thread, int32_t mode, uint32_t memberMask,
                       uint32_t value, uint32_t offset, uint32_t clampAndMask,
                       int32_t *valid) {
  uint32_t result = 0;
  bool isValid = false;
  if (mode < 0 || mode > 3) {
    fail("shfl.sync mode %d: expected 0 (up), 1 (down), 2 (bfly) or 3 (idx)",
         mode);
  } else {
    collective(
        thread, Instruction::Shuffle,
        {mode, static_cast<int32_t>(memberMask),
         static_cast<int32_t>(clampAndMask)},
        [&](WarpSlot &slot, int lane) {
          slot.value[lane] = value;
          slot.offset[lane] = offset;
          slot.shuffled[lane] = value;
        },
        [&](WarpSlot &slot) {
          shuffle(static_cast<ShuffleMode>(slot.modifiers[0]), slot.value,
                  slot.offset, static_cast<uint32_t>(slot.modifiers[2]),
                  static_cast<uint32_t>(slot.modifiers[1]), slot.shuffled,
                  slot.valid);
        },
        [&](WarpSlot &slot, int lane) {
          result = slot.shuffled[lane];
          isValid = slot.valid[lane];
        });
  }
  if (valid)
    *valid = isValid;
  return result;
}

void attn_emu_cp_async(void *shared, const void *global, int32_t cpSize,
                       int32_t srcSize) {
  if ((cpSize != 4 && cpSize != 8 && cpSize != 16) || srcSize < 0 ||
      srcSize > cpSize) {
    fail("cp.async of %d bytes from %d: expected 4, 8 or 16, and a source "
         "size not above it",
         cpSize, srcSize);
    return;
  }
  cpAsync(static_cast<uint8_t *>(shared), static_cast<const uint8_t *>(global),
          cpSize, srcSize);
}

} // extern "C"

std::vector<std::pair<std::string, void *>>
attn::emulation::warpRuntimeSymbols() {
  return {
      {"attn_emu_block_begin", reinterpret_cast<void *>(&attn_emu_block_begin)},
      {"attn_emu_block_end", reinterpret_cast<void *>(&attn_emu_block_end)},
      {"attn_emu_mma_m16n8k16",
       reinterpret_cast<void *>(&attn_emu_mma_m16n8k16)},
      {"attn_emu_mma_m16n8k8_tf32",
       reinterpret_cast<void *>(&attn_emu_mma_m16n8k8_tf32)},
      {"attn_emu_cvt_rna_tf32",
       reinterpret_cast<void *>(&attn_emu_cvt_rna_tf32)},
      {"attn_emu_ldmatrix", reinterpret_cast<void *>(&attn_emu_ldmatrix)},
      {"attn_emu_shfl", reinterpret_cast<void *>(&attn_emu_shfl)},
      {"attn_emu_cp_async", reinterpret_cast<void *>(&attn_emu_cp_async)},
  };
}
