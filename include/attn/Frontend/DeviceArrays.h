//===- DeviceArrays.h - GPU copies of a run's arrays ------------*- C++ -*-===//
//
// Device buffers for the inputs and the output of one call of NVPTX code,
// over the attn GPU runtime (runtime/GpuRuntime.h), freed when they go.
// Shared by attnc, attn-gpu-runner and the C API. Header-only, plain C++:
// whoever includes it links the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FRONTEND_DEVICEARRAYS_H
#define ATTN_FRONTEND_DEVICEARRAYS_H

#include "GpuRuntime.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace attn {
namespace frontend {

/// Device copies of a call's arrays (the inputs, then the output).
class DeviceArrays {
public:
  DeviceArrays() = default;
  DeviceArrays(const DeviceArrays &) = delete;
  DeviceArrays &operator=(const DeviceArrays &) = delete;
  ~DeviceArrays() {
    for (void *pointer : pointers)
      attn_gpu_free(pointer);
  }

  /// Allocates an array of \p bytes, filled from \p host if given; false
  /// (see attn_gpu_error()) when the GPU fails.
  bool add(const void *host, size_t bytes) {
    void *pointer = attn_gpu_alloc(std::max<size_t>(bytes, 4));
    if (!pointer)
      return false;
    pointers.push_back(pointer);
    return !host || attn_gpu_copy_to_device(pointer, host, bytes) == 0;
  }

  /// Copies the last array (the output, \p bytes) to \p host.
  bool copyOutputBack(void *host, size_t bytes) const {
    return attn_gpu_copy_to_host(host, pointers.back(), bytes) == 0 &&
           !*attn_gpu_error();
  }

  void *const *data() const { return pointers.data(); }
  const std::vector<void *> &all() const { return pointers; }

private:
  std::vector<void *> pointers;
};

/// Waits for the GPU; "" or "the GPU failed: ...".
inline std::string synchronizeDevice() {
  if (attn_gpu_synchronize() != 0 || *attn_gpu_error())
    return std::string("the GPU failed: ") + attn_gpu_error();
  return "";
}

} // namespace frontend
} // namespace attn

#endif // ATTN_FRONTEND_DEVICEARRAYS_H
