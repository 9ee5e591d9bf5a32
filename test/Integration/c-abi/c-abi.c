/* c-abi.c: calls the C entry point of an object made by `attnc --emit=obj`,
 * through its generated header, the way an application would.
 *
 * Built by c-abi.test once per spec, with
 *   -DATTN_HEADER='"NAME.h"' -DATTN_ENTRY=attn_NAME -DATTN_NUM_SIZES=0|1|2
 * for a spec with inputs q, k, v and 0, 1 (N) or 2 (N, M) dynamic sizes.
 *
 *   c-abi DIR [N [M]]  reads DIR/q.npy, DIR/k.npy, DIR/v.npy (as written by
 *                      `attnc run --save`) and DIR/out.npy (the reference
 *                      evaluator's output, `attnc run --reference`), calls
 *                      the entry point twice (on malloc'd arrays, then on
 *                      arrays only 4-byte aligned) and compares each result
 *                      with the reference: max abs error <= 1e-4.
 *   c-abi --errors     prints the status of calls with bad sizes and NULL
 *                      pointers, and checks that they leave out untouched.
 *
 * With -DATTN_BF16 the spec's q, k, v and out are bf16 (docs/language.md
 * §4.1): the arrays are passed as uint16_t bit patterns (the files hold
 * exactly bf16 values, so a pattern is the upper half of the float's bits),
 * the output is widened back, and the reference (rounded to bf16 too) is
 * matched within one bf16 rounding, 2^-8 of max |ref|. --errors and the
 * misaligned call are the f32 build's.
 *
 * Exit status 0 when every comparison and check passes.
 */
#include ATTN_HEADER

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ATTN_NUM_SIZES == 0
#define CALL(q, k, v, o, n, m) ATTN_ENTRY(q, k, v, o)
#elif ATTN_NUM_SIZES == 1
#define CALL(q, k, v, o, n, m) ATTN_ENTRY(q, k, v, o, n)
#else
#define CALL(q, k, v, o, n, m) ATTN_ENTRY(q, k, v, o, n, m)
#endif

typedef struct {
  float *data;
  size_t count;
} Array;

/* Reads a little-endian float32, C-order .npy file (format 1.0 to 3.0). */
static int readNpy(const char *dir, const char *name, Array *array) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "c-abi: cannot open %s\n", path);
    return 0;
  }
  unsigned char prefix[12];
  size_t headerLength, prefixLength;
  if (fread(prefix, 1, 10, file) != 10 ||
      memcmp(prefix, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "c-abi: %s is not a .npy file\n", path);
    fclose(file);
    return 0;
  }
  if (prefix[6] == 1) {
    headerLength = prefix[8] | (size_t)prefix[9] << 8;
    prefixLength = 10;
  } else {
    if (fread(prefix + 10, 1, 2, file) != 2) {
      fclose(file);
      return 0;
    }
    headerLength = prefix[8] | (size_t)prefix[9] << 8 |
                   (size_t)prefix[10] << 16 | (size_t)prefix[11] << 24;
    prefixLength = 12;
  }
  char *header = calloc(headerLength + 1, 1);
  if (fread(header, 1, headerLength, file) != headerLength ||
      !strstr(header, "'descr': '<f4'") ||
      !strstr(header, "'fortran_order': False")) {
    fprintf(stderr, "c-abi: %s is not little-endian float32 in C order\n",
            path);
    free(header);
    fclose(file);
    return 0;
  }
  size_t count = 1;
  const char *shape = strstr(header, "'shape': (");
  for (const char *p = shape ? shape + 10 : ")"; *p != ')';) {
    char *end;
    count *= strtoul(p, &end, 10);
    p = end;
    while (*p == ',' || *p == ' ')
      ++p;
  }
  free(header);
  (void)prefixLength;
  array->count = count;
  array->data = malloc(count * sizeof(float) + 1);
  if (fread(array->data, sizeof(float), count, file) != count) {
    fprintf(stderr, "c-abi: %s is truncated\n", path);
    fclose(file);
    return 0;
  }
  fclose(file);
  return 1;
}

/* DIR/q.npy, k.npy, v.npy and the reference DIR/out.npy. */
static int readArrays(const char *dir, Array *q, Array *k, Array *v,
                      Array *ref) {
  return readNpy(dir, "q", q) && readNpy(dir, "k", k) &&
         readNpy(dir, "v", v) && readNpy(dir, "out", ref);
}

#ifndef ATTN_BF16
/* A copy of `array` at an address that is 4 but not 8-byte aligned. */
static float *misaligned(const float *data, size_t count, void **block) {
  char *base = malloc((count + 2) * sizeof(float) + 16);
  *block = base;
  float *copy = (float *)(base + ((16 - (uintptr_t)base % 16) % 16) + 4);
  if (data)
    memcpy(copy, data, count * sizeof(float));
  return copy;
}

static int compare(const char *what, const float *out, const Array *ref) {
  double maxError = 0.0;
  int finite = 1;
  for (size_t i = 0; i < ref->count; ++i) {
    finite &= isfinite(out[i]) != 0;
    double error = fabs((double)out[i] - (double)ref->data[i]);
    if (error > maxError)
      maxError = error;
  }
  int ok = finite && maxError <= 1e-4;
  printf("%s: %zu values, max abs error %.2e: %s\n", what, ref->count,
         maxError, ok ? "ok" : "FAILED");
  return ok;
}

#endif

#ifdef ATTN_BF16
/* The bf16 bit patterns of DATA, which must hold bf16 values exactly. */
static uint16_t *toBf16(const Array *array) {
  uint16_t *bits = malloc(array->count * sizeof(uint16_t));
  for (size_t i = 0; i < array->count; ++i) {
    uint32_t word;
    memcpy(&word, &array->data[i], sizeof word);
    if (word & 0xffffu) {
      fprintf(stderr, "c-abi: element %zu is not a bf16 value\n", i);
      exit(1);
    }
    bits[i] = (uint16_t)(word >> 16);
  }
  return bits;
}

static int runAndCompare(const char *dir, int64_t n, int64_t m) {
  Array q, k, v, ref;
  if (!readArrays(dir, &q, &k, &v, &ref))
    return 1;
  (void)n;
  (void)m;
  uint16_t *out = malloc(ref.count * sizeof(uint16_t));
  for (size_t i = 0; i < ref.count; ++i)
    out[i] = 0x7fc0; /* NaN until written */
  int status = CALL(toBf16(&q), toBf16(&k), toBf16(&v), out, n, m);
  printf("status %d\n", status);
  double maxError = 0.0, maxRef = 0.0;
  int finite = 1;
  for (size_t i = 0; i < ref.count; ++i) {
    uint32_t word = (uint32_t)out[i] << 16;
    float value;
    memcpy(&value, &word, sizeof value);
    finite &= isfinite(value) != 0;
    maxError = fmax(maxError, fabs((double)value - ref.data[i]));
    maxRef = fmax(maxRef, fabs((double)ref.data[i]));
  }
  int ok = status == ATTN_OK && finite && maxError <= 0x1p-8 * maxRef;
  printf("bf16: %zu values, max abs error %.2e (max |ref| %.2f): %s\n",
         ref.count, maxError, maxRef, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
#else
static int runAndCompare(const char *dir, int64_t n, int64_t m) {
  Array q, k, v, ref;
  if (!readArrays(dir, &q, &k, &v, &ref))
    return 1;
  (void)n;
  (void)m;

  float *out = malloc(ref.count * sizeof(float));
  for (size_t i = 0; i < ref.count; ++i)
    out[i] = NAN;
  int status = CALL(q.data, k.data, v.data, out, n, m);
  printf("status %d\n", status);
  int ok = status == ATTN_OK && compare("aligned", out, &ref);

  void *blocks[4];
  float *q4 = misaligned(q.data, q.count, &blocks[0]);
  float *k4 = misaligned(k.data, k.count, &blocks[1]);
  float *v4 = misaligned(v.data, v.count, &blocks[2]);
  float *out4 = misaligned(NULL, ref.count, &blocks[3]);
  status = CALL(q4, k4, v4, out4, n, m);
  printf("status %d\n", status);
  ok = ok && status == ATTN_OK && compare("misaligned", out4, &ref);
  return ok ? 0 : 1;
}
#endif

/* Room for every array of the specs c-abi.test uses, at N = M = SMALL or
 * with N = 50 fixed ([1, 8, 50, 64]). */
#define SMALL 4
#define CAPACITY (8 * 64 * 64)

#ifdef ATTN_BF16
static int errors(void) { return 2; }
#else
static int errors(void) {
  static float q[CAPACITY], k[CAPACITY], v[CAPACITY], out[CAPACITY];
  int ok = 1;
  for (size_t i = 0; i < CAPACITY; ++i) {
    q[i] = k[i] = v[i] = 0.5f;
    out[i] = 1234.0f;
  }
#define TRY(label, expr)                                                       \
  do {                                                                         \
    int status = expr;                                                         \
    printf("%s: %d\n", label, status);                                         \
    if (status != ATTN_OK)                                                     \
      for (size_t i = 0; i < CAPACITY; ++i)                                    \
        ok &= out[i] == 1234.0f;                                               \
  } while (0)
  TRY("q=NULL", CALL(NULL, k, v, out, SMALL, SMALL));
  TRY("k=NULL", CALL(q, NULL, v, out, SMALL, SMALL));
  TRY("out=NULL", CALL(q, k, v, NULL, SMALL, SMALL));
#if ATTN_NUM_SIZES >= 1
  TRY("N=0", CALL(q, k, v, out, 0, SMALL));
  TRY("N=-1", CALL(q, k, v, out, -1, SMALL));
  TRY("N=0 q=NULL", CALL(NULL, k, v, out, 0, SMALL));
  TRY("N=INT64_MAX", CALL(q, k, v, out, INT64_MAX, SMALL));
  /* [1, 8, 2^31, 64] fits in 2^62 bytes, but the 2^31 x 2^31 scores
   * would not. */
  TRY("N=2^31", CALL(q, k, v, out, (int64_t)1 << 31, (int64_t)1 << 31));
#endif
#if ATTN_NUM_SIZES >= 2
  TRY("M=0", CALL(q, k, v, out, SMALL, 0));
  TRY("N=3 M=4", CALL(q, k, v, out, SMALL - 1, SMALL));
#endif
  printf("out untouched by failed calls: %s\n", ok ? "yes" : "NO");
  TRY("good call", CALL(q, k, v, out, SMALL, SMALL));
  return ok ? 0 : 1;
}
#endif

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--errors") == 0)
    return errors();
  if (argc < 2 || argc != 2 + ATTN_NUM_SIZES) {
    fprintf(stderr, "usage: c-abi DIR%s | c-abi --errors\n",
            ATTN_NUM_SIZES == 0 ? "" : ATTN_NUM_SIZES == 1 ? " N" : " N M");
    return 2;
  }
  int64_t n = argc > 2 ? strtoll(argv[2], NULL, 10) : 0;
  int64_t m = argc > 3 ? strtoll(argv[3], NULL, 10) : 0;
  return runAndCompare(argv[1], n, m);
}
