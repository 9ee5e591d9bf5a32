//===- Registry.h - The specs compiled into attn-gpu-runner -----*- C++ -*-===//
//
// The runner is linked with the objects that `attnc --target=nvptx
// --emit=obj` made for a set of specs (bench/gpu/prepare.sh), plus a
// generated registry.cpp that lists them. A registry, not dlsym: the objects
// are linked statically into one executable, and each one's entry point is
// reached through the uniform `attn_NAME_call` wrapper its header defines, so
// the runner needs no per-spec code. The main build links EmptyRegistry.cpp
// instead, so that the runner's error paths are tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPU_RUNNER_REGISTRY_H
#define ATTN_GPU_RUNNER_REGISTRY_H

#include <cstddef>
#include <cstdint>

/// One compiled spec.
struct AttnEntry {
  /// The spec's name, `attention NAME { ... }`.
  const char *specName;
  /// attn_NAME_call from NAME.h: \p arrays are the device pointers of the
  /// inputs in declaration order, then of the output; \p sizes are the dims
  /// the object leaves dynamic, in declaration order. Returns 0 (ok), 1 (bad
  /// size) or 2 (null pointer); GPU failures are in attn_gpu_error().
  int (*call)(void *const *arrays, const int64_t *sizes);
  /// ATTN_NAME_NUM_ARRAYS: the inputs and the output.
  int numArrays;
  /// ATTN_NAME_NUM_SIZES: the dynamic dims.
  int numSizes;
};

/// The first attnNumEntries entries are the compiled specs (the array has
/// at least one element, since C++ has no empty arrays).
extern const AttnEntry attnEntries[];
extern const size_t attnNumEntries;

#endif // ATTN_GPU_RUNNER_REGISTRY_H
