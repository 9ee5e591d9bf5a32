/* examples/c/softmax.c: compile a spec with the attn C API, run it on
 * caller-owned buffers and check it against the reference evaluator.
 *
 *   clang-22 examples/c/softmax.c -Iinclude -Lbuild/lib -lattn_c \
 *       -Wl,-rpath,$PWD/build/lib -o softmax && ./softmax examples/softmax.attn 100
 */
#include "attn-c/Attn.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const char *spec = argc > 1 ? argv[1] : "examples/softmax.attn";
  int64_t n = argc > 2 ? atoll(argv[2]) : 100;
  char *error = NULL;

  AttnOptions *options = attnOptionsCreate();
  if (attnOptionsSet(options, "cache-dir", "off", &error)) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  AttnKernel *kernel = attnCompileFile(spec, options, &error);
  attnOptionsDestroy(options);
  if (!kernel) {
    fprintf(stderr, "%s\n", error);
    attnFreeString(error);
    return 1;
  }

  /* Every dynamic size is N here (softmax.attn has one, N). */
  size_t numSizes = attnKernelNumSizes(kernel);
  int64_t *sizes = calloc(numSizes + 1, sizeof(int64_t));
  for (size_t i = 0; i < numSizes; ++i)
    sizes[i] = n;

  /* One buffer per input, then the output, sized from the kernel's shapes. */
  size_t numInputs = attnKernelNumInputs(kernel);
  void **arrays = calloc(numInputs + 1, sizeof(void *));
  size_t outCount = 1;
  for (size_t i = 0; i <= numInputs; ++i) {
    size_t rank = i < numInputs ? attnKernelInputRank(kernel, i)
                                : attnKernelOutputRank(kernel);
    size_t count = 1;
    for (size_t d = 0; d < rank; ++d) {
      int64_t index = -1;
      int64_t size = i < numInputs ? attnKernelInputDim(kernel, i, d, &index)
                                   : attnKernelOutputDim(kernel, d, &index);
      count *= (size_t)(size >= 0 ? size : sizes[index]);
    }
    float *data = malloc(count * sizeof(float));
    for (size_t e = 0; e < count; ++e)
      data[e] = (float)((e * 2654435761u + i) % 1000) / 500.0f - 1.0f;
    arrays[i] = data;
    if (i == numInputs)
      outCount = count;
  }

  if (attnKernelRun(kernel, arrays, sizes, &error) != ATTN_STATUS_OK) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  float *out = arrays[numInputs];
  float *expected = malloc(outCount * sizeof(float));
  arrays[numInputs] = expected;
  if (attnKernelReference(kernel, arrays, sizes, &error) != ATTN_STATUS_OK) {
    fprintf(stderr, "%s\n", error);
    return 1;
  }
  double maxAbs = 0, maxRel = 0;
  int ok = attnCompare(out, expected, outCount, attnKernelTolerance(kernel),
                       &maxAbs, &maxRel);
  printf("%s: %zu inputs, N = %lld: max rel error %.2e: %s\n",
         attnKernelName(kernel), numInputs, (long long)n, maxRel,
         ok ? "ok" : "FAILED");
  attnKernelDestroy(kernel);
  return ok ? 0 : 1;
}
