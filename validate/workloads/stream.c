/* stream.c — memory bandwidth: a STREAM-like triad a[i] = b[i] + s * c[i].
 *
 * Known bottleneck: DRAM bandwidth. The triad (the line marked KEY) streams three arrays of
 * doubles far larger than the last-level cache (3 x 32 MiB at the default size): two loads
 * and one store per 4 doubles, every line a miss that the prefetchers can see coming, so the
 * loop runs at the rate DRAM delivers lines, not at the rate the core executes.
 *
 * usage: stream [N] [PASSES] — N doubles per array (default 4194304), PASSES (default 2).
 * The region of interest (SSC marks) is the triad passes; initialisation is outside it. */
#include <immintrin.h>

#include "workloads.h"

/* One pass of the triad, 4 doubles per iteration (n is a multiple of 4). */
static __attribute__((noinline)) void triad(double *a, const double *b, const double *c,
                                            double s, uint64_t n) {
  __m256d vs = _mm256_set1_pd(s);
  for (uint64_t i = 0; i < n; i += 4) {
    __m256d x = _mm256_fmadd_pd(vs, _mm256_load_pd(&c[i]), _mm256_load_pd(&b[i]));
    _mm256_store_pd(&a[i], x); /* KEY: the store and the two loads feeding it stream from DRAM */
  }
}

int main(int argc, char **argv) {
  uint64_t n = wl_arg(argc, argv, 1, 4194304);
  uint64_t passes = wl_arg(argc, argv, 2, 2);
  n = (n + 3) & ~(uint64_t)3;
  double *a = aligned_alloc(64, n * sizeof(double));
  double *b = aligned_alloc(64, n * sizeof(double));
  double *c = aligned_alloc(64, n * sizeof(double));
  if (!a || !b || !c) {
    fprintf(stderr, "stream: out of memory\n");
    return 1;
  }
  for (uint64_t i = 0; i < n; i++) {
    a[i] = 0.0;
    b[i] = (double)(i & 1023);
    c[i] = 1.0 / (double)((i & 255) + 1);
  }
  WL_ROI_BEGIN();
  for (uint64_t k = 0; k < passes; k++) triad(a, b, c, 3.0 + (double)k, n);
  WL_ROI_END();
  /* Checksum of a sample of a[] (exact: the values are sums of small dyadic-friendly terms). */
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i += 61) sum = sum * 1099511628211ULL + (uint64_t)(a[i] * 1024.0);
  wl_print("stream", sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
