/*===- GpuRuntime.h - attn's GPU runtime: C interface -------------*- C -*-===*/
/*
 * The host library that attn's NVPTX code runs on. It implements the
 * `mgpu*` entry points that MLIR's gpu-to-llvm lowering calls (declared in
 * GpuRuntime.cpp; they are not meant to be called by hand) and the small
 * `attn_gpu_*` interface below for the host program that drives them.
 *
 * The CUDA driver is loaded at run time (dlopen), so the library links and
 * runs on machines without one. No call ever aborts: a failure records a
 * message (the first since the last attn_gpu_clear_error) and the call
 * becomes a no-op returning null / nonzero. Generated code cannot report
 * errors itself, so a host should check attn_gpu_error() after running it.
 *
 * Environment:
 *   ATTN_LIBCUDA     the driver library to load (default "libcuda.so.1")
 *   ATTN_GPU_DEVICE  the device ordinal to use (default 0)
 *   ATTN_GPU_VERBOSE if set and not "0", also print every error to stderr
 */

#ifndef ATTN_RUNTIME_GPURUNTIME_H
#define ATTN_RUNTIME_GPURUNTIME_H

#include <stddef.h>

#if defined(_WIN32)
#define ATTN_GPU_EXPORT __declspec(dllexport)
#else
#define ATTN_GPU_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the driver, calls cuInit(0), picks device ATTN_GPU_DEVICE (or the one
 * given to mgpuSetDefaultDevice before the first call) and retains its
 * primary context. Returns 0 when the runtime is ready, nonzero otherwise
 * (see attn_gpu_error()). Idempotent and thread-safe: only the first call
 * does the work; a failed initialisation is not retried, later calls return
 * nonzero again and re-record the reason if the error was cleared. Every
 * other entry point calls it lazily, so calling it is optional. */
ATTN_GPU_EXPORT int attn_gpu_init(void);

/* The first error recorded since the last attn_gpu_clear_error(), or "" if
 * none; never null. Always the same buffer, so the pointer never dangles, but
 * its text changes once the error is cleared and another one recorded. A
 * module that fails to load carries the driver's log on the lines after the
 * first. Examples:
 *   attn GPU runtime: cannot load the CUDA driver libcuda.so.1 (...): no
 *     NVIDIA driver on this machine
 *   attn GPU runtime: cuInit failed: CUDA_ERROR_STUB_LIBRARY (34): ... */
ATTN_GPU_EXPORT const char *attn_gpu_error(void);

/* Forgets the recorded error, so that the next failure is recorded. */
ATTN_GPU_EXPORT void attn_gpu_clear_error(void);

/* The device's name, e.g. "NVIDIA H200"; "" when the runtime is not ready. */
ATTN_GPU_EXPORT const char *attn_gpu_device_name(void);

/* Allocates device memory from the runtime's caching pool (the pool that
 * mgpuMemAlloc uses). Returns null on error, and for 0 bytes (no error). */
ATTN_GPU_EXPORT void *attn_gpu_alloc(size_t bytes);

/* Returns memory from attn_gpu_alloc to the pool; null is a no-op. Returns 0
 * on success. */
ATTN_GPU_EXPORT int attn_gpu_free(void *device);

/* Synchronous copies; return 0 on success. copy_to_host first waits for all
 * work on the device (every stream), so results of generated code that ran
 * on its own stream are complete, and asynchronous errors are recorded. */
ATTN_GPU_EXPORT int attn_gpu_copy_to_device(void *device, const void *host,
                                            size_t bytes);
ATTN_GPU_EXPORT int attn_gpu_copy_to_host(void *host, const void *device,
                                          size_t bytes);

/* Waits for all work on the device; records (and returns nonzero for) an
 * asynchronous error such as a faulting kernel. Returns 0 on success. */
ATTN_GPU_EXPORT int attn_gpu_synchronize(void);

/* Waits for the device, then returns the pool's free blocks to the driver.
 * Blocks still allocated are untouched. */
ATTN_GPU_EXPORT void attn_gpu_release_cache(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTN_RUNTIME_GPURUNTIME_H */
