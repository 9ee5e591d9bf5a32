/* Every error a caller can make through the C API, each one a status or a
 * NULL with a message, never an abort. Prints one line per case. */
#include "attn-c/Attn.h"

#include <stdio.h>
#include <string.h>

static void show(const char *what, char *error) {
  printf("%s: %s\n", what, error ? error : "(no message)");
  attnFreeString(error);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  const char *specPath = argv[1];
  char *error = NULL;
  AttnOptions *options = attnOptionsCreate();

  if (attnOptionsSet(options, "target", "tpu", &error))
    show("bad target", error);
  if (attnOptionsSet(options, "force-order", "sideways", &error))
    show("bad force-order", error);
  if (attnOptionsSet(options, "cpu", "pentium-9", &error))
    show("bad cpu", error);
  if (attnOptionsSet(options, "cpu-features", "+warp-drive", &error))
    show("bad cpu-features", error);
  if (attnOptionsSet(options, "threads", "-1", &error))
    show("bad threads", error);
  if (attnOptionsSet(options, "threads", "100000", &error))
    show("too many threads", error);
  if (attnOptionsSet(options, "colour", "blue", &error))
    show("unknown option", error);
  attnOptionsSet(options, "cache-dir", "off", NULL);

  if (!attnCompile("attention x {\n  dim N\n  input q: [1, 1, N, 4]\n  term { score = bogus }\n}\n",
                   "inline.attn", options, &error))
    show("bad spec", error);
  if (!attnCompileFile("/no/such/spec.attn", options, &error))
    show("missing file", error);
  attnOptionsSetSize(options, "Q", 3, NULL);
  if (!attnCompileFile(specPath, options, &error))
    show("unknown size", error);
  attnOptionsDestroy(options);

  options = attnOptionsCreate();
  attnOptionsSet(options, "cache-dir", "off", NULL);
  AttnKernel *kernel = attnCompileFile(specPath, options, &error);
  attnOptionsDestroy(options);
  if (!kernel) {
    show("compile", error);
    return 1;
  }
  static float q[1 * 8 * 4 * 64], k[1 * 8 * 4 * 64], v[1 * 8 * 4 * 64],
      out[1 * 8 * 4 * 64];
  void *arrays[] = {q, k, v, out};
  void *withNull[] = {q, NULL, v, out};
  int64_t good[] = {4}, zero[] = {0};
  printf("sizes: %zu (%s)\n", attnKernelNumSizes(kernel),
         attnKernelSizeName(kernel, 0));
  printf("status zero size: %d\n", attnKernelRun(kernel, arrays, zero, &error));
  show("zero size", error);
  printf("status null array: %d\n",
         attnKernelRun(kernel, withNull, good, &error));
  show("null array", error);
  printf("status null sizes: %d\n", attnKernelRun(kernel, arrays, NULL, &error));
  show("null sizes", error);
  printf("status device on cpu: %d\n",
         attnKernelRunDevice(kernel, arrays, good, &error));
  show("device on cpu", error);
  printf("status good: %d\n", attnKernelRun(kernel, arrays, good, NULL));
  printf("status reference zero size: %d\n",
         attnKernelReference(kernel, arrays, zero, NULL));
  printf("out of range: '%s' %zu %lld\n", attnKernelInputName(kernel, 9),
         attnKernelInputRank(kernel, 9),
         (long long)attnKernelInputDim(kernel, 0, 9, NULL));
  attnKernelDestroy(kernel);

  char *report = attnReport("attention x {\n}\n", "empty.attn", NULL, &error);
  if (!report)
    show("bad report spec", error);
  return 0;
}
