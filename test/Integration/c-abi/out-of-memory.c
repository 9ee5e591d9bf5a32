/* out-of-memory.c: an entry point whose workspace the machine cannot give
 * returns ATTN_OUT_OF_MEMORY (4) instead of crashing, and works again once
 * memory is back.
 *
 * Built by out-of-memory.test with -DATTN_HEADER='"NAME.h"'
 * -DATTN_ENTRY=attn_NAME for a spec with inputs q, k, v [1, H, N, D] and one
 * dynamic size N. The address space is capped (RLIMIT_AS) a little above
 * what the process holds once the inputs of a large call are allocated, so
 * that the code's sequence-sized workspace cannot be.
 *
 *   out-of-memory H D N
 *
 * Prints one line per call: its N and status. Exit status 0 when the first
 * and the last call return ATTN_OK and the capped one ATTN_OUT_OF_MEMORY.
 */
#define _GNU_SOURCE
#include ATTN_HEADER

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

/* attn_NAME_free_workspaces, from -DATTN_ENTRY=attn_NAME. */
#define PASTE(entry, suffix) entry##suffix
#define FREE_WORKSPACES_OF(entry) PASTE(entry, _free_workspaces)
#define FREE_WORKSPACES FREE_WORKSPACES_OF(ATTN_ENTRY)

/* The process's virtual size in bytes (/proc/self/statm, in pages). */
static long long virtualBytes(void) {
  FILE *file = fopen("/proc/self/statm", "r");
  long long pages = -1;
  if (!file || fscanf(file, "%lld", &pages) != 1)
    pages = -1;
  if (file)
    fclose(file);
  return pages * 4096;
}

static int call(long long heads, long long dim, long long n) {
  size_t count = (size_t)(heads * n * dim);
  float *q = calloc(count, sizeof(float)), *k = calloc(count, sizeof(float));
  float *v = calloc(count, sizeof(float)), *o = calloc(count, sizeof(float));
  if (!q || !k || !v || !o) {
    printf("N=%lld: the test could not allocate its arrays\n", n);
    return -1;
  }
  for (size_t i = 0; i < count; ++i) {
    q[i] = (float)(i % 7) * 0.1f;
    k[i] = (float)(i % 5) * 0.1f;
    v[i] = (float)(i % 3);
  }
  int status = ATTN_ENTRY(q, k, v, o, n);
  printf("N=%lld: status %d\n", n, status);
  free(q);
  free(k);
  free(v);
  free(o);
  return status;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  long long heads = atoll(argv[1]), dim = atoll(argv[2]), n = atoll(argv[3]);
  /* Starts the OpenMP threads while memory is plentiful, then gives back
   * the workspaces the object keeps for its next call, which the capped
   * call would otherwise reuse. */
  int first = call(heads, dim, 100);
  FREE_WORKSPACES();

  struct rlimit saved;
  if (getrlimit(RLIMIT_AS, &saved) != 0)
    return 2;
  size_t count = (size_t)(heads * n * dim);
  long long arrays = 4LL * (long long)count * (long long)sizeof(float);
  struct rlimit capped = saved;
  capped.rlim_cur = (rlim_t)(virtualBytes() + arrays + (16LL << 20));
  if (setrlimit(RLIMIT_AS, &capped) != 0)
    return 2;
  int big = call(heads, dim, n);
  if (setrlimit(RLIMIT_AS, &saved) != 0)
    return 2;

  int last = call(heads, dim, 100);
  return first == ATTN_OK && big == ATTN_OUT_OF_MEMORY && last == ATTN_OK
             ? 0
             : 1;
}
