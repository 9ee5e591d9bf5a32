/*===- attn-c/Attn.h - C API of the attn compiler ----------------*- C -*-===*\
|*                                                                            *|
|* Compile an attention spec to a kernel and run it on caller-owned float32   *|
|* buffers, ask the cost model for its report, and evaluate the reference.   *|
|* In the spirit of mlir-c/: opaque handles, plain C types, no abort.         *|
|*                                                                            *|
|* Errors: every function that can fail takes `char **error`. On failure it   *|
|* returns NULL (or a non-zero status) and, when `error` is not NULL, sets    *|
|* *error to a message allocated with malloc (free it with attnFreeString).   *|
|* A message about the spec starts with its location, `file:line:col: error:`,*|
|* exactly as attnc prints it.                                                *|
|*                                                                            *|
|* Shared library: build/lib/libattn_c.so. Thread safety: handles may be used *|
|* from one thread at a time; distinct handles are independent.               *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_ATTN_H
#define ATTN_C_ATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes of attnKernelRun (0, 1, 2 and 4 are those of the generated C
 * entry point, ATTN_OK / ATTN_BAD_SIZE / ATTN_NULL_POINTER /
 * ATTN_OUT_OF_MEMORY). */
#define ATTN_STATUS_OK 0
#define ATTN_STATUS_BAD_SIZE 1     /* sizes not positive or not as the spec ties them */
#define ATTN_STATUS_NULL_POINTER 2 /* an array pointer is NULL */
#define ATTN_STATUS_ERROR 3        /* anything else; *error says what */
#define ATTN_STATUS_OUT_OF_MEMORY 4 /* the call needs more memory than the machine
                                       has (or option max-memory allows), checked
                                       before it starts, or an allocation of the
                                       compiled code failed */

typedef struct AttnOptions AttnOptions;
typedef struct AttnKernel AttnKernel;

/*--- Options --------------------------------------------------------------*/

/* Default options: target cpu, auto orders, every core, the compile cache in
 * the user's cache folder ($ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else
 * $HOME/.cache/attn). */
AttnOptions *attnOptionsCreate(void);
void attnOptionsDestroy(AttnOptions *options);

/* Sets one option from text. Keys:
 *   target       cpu | nvptx           (report: also a target description file)
 *   chip         sm_80 | sm_86 | sm_87 | sm_89 | sm_90 | sm_90a   (nvptx)
 *   cpu          native (default) | x86-64-v3 | x86-64-v4 | an LLVM CPU name
 *   cpu-features extra features as llc -mattr takes them: +avx2,-avx512f
 *   force-order  auto | qk_first | kv_first | recurrent
 *   threads      0 (every core) or a positive count
 *   emulate-gpu  0 | 1   (nvptx: run the GPU kernels on the host)
 *   gpu-precision  f32 (default) | tf32   (nvptx: f32 inputs multiply in
 *                f32 on the CUDA cores, or on the tensor cores with the
 *                operands rounded to tf32; bf16 and f16 inputs always use
 *                the tensor cores)
 *   cache-dir    a directory, or "off" for no cache
 *   finite-inputs  0 (default) | 1: attnKernelRun refuses (ATTN_STATUS_ERROR)
 *                inputs holding a NaN or an infinity (by default they reach
 *                the rows that see them, as in IEEE arithmetic; masked keys
 *                never do)
 *   max-memory   bytes (suffix K, M, G or T allowed) that one run or reference
 *                call may need; 0 (default): what the machine has available.
 *                A call beyond it returns ATTN_STATUS_OUT_OF_MEMORY.
 *   heads, head-dim   positive integers: the whole-layer view of the report
 * Returns 0, or 1 with *error set for an unknown key or a bad value. */
int attnOptionsSet(AttnOptions *options, const char *key, const char *value,
                   char **error);

/* Binds the spec's dim NAME to VALUE (>= 1) at compile time (like attnc
 * --set); unbound dims stay dynamic and are given to attnKernelRun. The name
 * is checked against the spec when compiling (the message names it as
 * attnc's `--set NAME`). Returns 0, or 1 with *error. */
int attnOptionsSetSize(AttnOptions *options, const char *name, int64_t value,
                       char **error);

/*--- Compiling ------------------------------------------------------------*/

/* Parses, checks and compiles the spec held in SPEC_TEXT; SPEC_PATH names it
 * in messages (NULL: "<string>"). NULL options: the defaults. A kernel
 * compiled before with the same spec text, sizes, target, chip, cpu,
 * cpu-features, emulate-gpu, gpu-precision, force-order, host CPU (name and
 * features), LLVM and build of this library is loaded from the cache instead of
 * being compiled again (threads is not part of the key: it is applied per
 * call). Cache entries are written whole (temporary file, then rename), so
 * processes may share a cache. */
AttnKernel *attnCompile(const char *specText, const char *specPath,
                        const AttnOptions *options, char **error);
/* The same for the spec file at PATH. */
AttnKernel *attnCompileFile(const char *path, const AttnOptions *options,
                            char **error);
void attnKernelDestroy(AttnKernel *kernel);

/* 1 if the kernel was loaded from the compile cache, else 0. */
int attnKernelFromCache(const AttnKernel *kernel);

/*--- What a kernel takes --------------------------------------------------*/

/* The spec's name. Owned by the kernel. Out-of-range indices below return
 * "" (names) or 0 (ranks and dims). */
const char *attnKernelName(const AttnKernel *kernel);
/* Inputs in declaration order (the spec's `input` lines). */
size_t attnKernelNumInputs(const AttnKernel *kernel);
const char *attnKernelInputName(const AttnKernel *kernel, size_t input);
size_t attnKernelInputRank(const AttnKernel *kernel, size_t input);
/* Dimension DIM of input INPUT: its size if fixed in the kernel (>= 1), or
 * -1 with *dynamicIndex (if not NULL) set to the index of the dynamic size
 * it takes. Out-of-range arguments return 0. */
int64_t attnKernelInputDim(const AttnKernel *kernel, size_t input, size_t dim,
                           int64_t *dynamicIndex);
/* The element type of input INPUT: "f32", "f16" or "bf16" ("" out of range).
 * f16 and bf16 arrays hold the 16-bit patterns of IEEE binary16 / bfloat16
 * values; the kernel widens them exactly and computes in float32. */
const char *attnKernelInputType(const AttnKernel *kernel, size_t input);
/* The element type of the output O (the spec's `output bf16`; default f32). */
const char *attnKernelOutputType(const AttnKernel *kernel);
/* The output O [B, H, N, E], likewise. */
size_t attnKernelOutputRank(const AttnKernel *kernel);
int64_t attnKernelOutputDim(const AttnKernel *kernel, size_t dim,
                            int64_t *dynamicIndex);
/* The dims left dynamic, in declaration order: attnKernelRun's SIZES. */
size_t attnKernelNumSizes(const AttnKernel *kernel);
const char *attnKernelSizeName(const AttnKernel *kernel, size_t index);

/*--- Running --------------------------------------------------------------*/

/* Runs the kernel. ARRAYS: every input in declaration order, then the output,
 * dense row-major in host memory, each of its element type
 * (attnKernelInputType: float32, or the uint16_t bits of f16 / bf16). For
 * target nvptx they are copied to the GPU and the output back, unless
 * emulate-gpu is set; the inputs are only read. SIZES: the dynamic sizes in
 * attnKernelSizeName order. Returns an ATTN_STATUS_* code; *error is set for
 * every non-zero one. */
int attnKernelRun(AttnKernel *kernel, void *const *arrays,
                  const int64_t *sizes, char **error);

/* The same with device pointers (target nvptx without emulate-gpu only). */
int attnKernelRunDevice(AttnKernel *kernel, void *const *arrays,
                        const int64_t *sizes, char **error);

/* The reference evaluator of DESIGN §1 (double accumulation) on the same
 * arguments as attnKernelRun: writes OUT (the last array; an f16 / bf16 OUT
 * gets the result rounded to nearest even). Returns 0, or
 * ATTN_STATUS_BAD_SIZE / ATTN_STATUS_ERROR with *error. */
int attnKernelReference(const AttnKernel *kernel, void *const *arrays,
                        const int64_t *sizes, char **error);

/* The tolerance on max|out - ref| / max|ref| that `attnc run --check`
 * holds this spec to. */
double attnKernelTolerance(const AttnKernel *kernel);

/* Compares COUNT floats of OUT with EXPECTED as `attnc run --check` does:
 * writes the max abs and max relative error (either pointer may be NULL) and
 * returns 1 if OUT and EXPECTED are finite and OUT is within TOLERANCE,
 * else 0. */
int attnCompare(const float *out, const float *expected, size_t count,
                double tolerance, double *maxAbsError, double *maxRelError);

/*--- The cost model -------------------------------------------------------*/

/* The report of `attnc report SPEC --json` as a JSON text (malloc'ed; free
 * with attnFreeString), or NULL with *error. Options used: the sizes, target
 * (cpu, nvptx or a target description file), heads and head-dim. */
char *attnReport(const char *specText, const char *specPath,
                 const AttnOptions *options, char **error);
char *attnReportFile(const char *path, const AttnOptions *options,
                     char **error);

/*--- Misc -----------------------------------------------------------------*/

void attnFreeString(char *string);
/* "attn <version>" and the LLVM version it was built with. */
const char *attnVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_ATTN_H */
