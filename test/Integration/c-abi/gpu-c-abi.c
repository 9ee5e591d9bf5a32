/* A host program for an object from `attnc --target=nvptx --emit=obj`
 * (gpu-c-abi.test): without a CUDA driver, every path must end in an error
 * code or a runtime message, never a crash. */
#include ATTN_HEADER
#include "GpuRuntime.h"

#include <stdint.h>
#include <stdio.h>

int main(void) {
  /* The object's constructor already tried to load its kernels. */
  int init = attn_gpu_init();
  printf("init: %s\n", init == 0 ? "ok" : "failed");
  printf("message: %s\n", attn_gpu_error());

  /* Sizes and pointers are checked on the host, before any GPU call. */
  float *fake = (float *)(uintptr_t)4096;
  printf("N=0: %d\n", ATTN_ENTRY(fake, fake, fake, fake, 0));
  printf("N=-3: %d\n", ATTN_ENTRY(fake, fake, fake, fake, -3));
  printf("q=NULL: %d\n", ATTN_ENTRY(NULL, fake, fake, fake, 4));
  printf("out=NULL: %d\n", ATTN_ENTRY(fake, fake, fake, NULL, 4));

  /* A well-formed call cannot reach a GPU: it returns, and the runtime
   * holds the reason. The host never dereferences the (device) pointers. */
  attn_gpu_clear_error();
  void *arrays[4] = {fake, fake, fake, fake};
  int64_t sizes[1] = {100};
  int status = ATTN_CALL(arrays, sizes);
  printf("call: %d, runtime error: %s\n", status,
         *attn_gpu_error() ? "yes" : "no");
  return 0;
}
