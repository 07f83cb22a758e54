/* fma_chain.c — a loop whose critical path is one FMA dependency chain.
 *
 * Known bottleneck: FMA latency. Every iteration does `acc = a[i] * b[i] + acc` on ONE ymm
 * accumulator (vfmadd231ps ymm, the line marked KEY), so each FMA waits for the previous one:
 * about 4 cycles per iteration on Golden Cove whatever the width of the machine. The loads
 * of a[] and b[] beside it are independent of the chain and of each other (the arrays fit in
 * L1D), so they never bind; neither do the loop counter and branch.
 *
 * usage: fma_chain [REPS] — REPS passes over 2 x 4096 floats (default 4000).
 * The region of interest (SSC marks) is the timed loop; initialisation is outside it. */
#include <immintrin.h>
#include <string.h>

#include "workloads.h"

#define N 4096 /* floats per array: 2 x 16 KiB, resident in L1D */

static float a[N] __attribute__((aligned(32)));
static float b[N] __attribute__((aligned(32)));

/* One pass: the chain through acc is the critical path. noinline keeps it one clear loop. */
static __attribute__((noinline)) __m256 pass(__m256 acc) {
  for (int i = 0; i < N; i += 8) {
    __m256 x = _mm256_load_ps(&a[i]);      /* independent load */
    __m256 y = _mm256_load_ps(&b[i]);      /* independent load (may be folded into the FMA) */
    acc = _mm256_fmadd_ps(x, y, acc);      /* KEY: vfmadd231ps ymm — the loop-carried chain */
  }
  return acc;
}

int main(int argc, char **argv) {
  uint64_t reps = wl_arg(argc, argv, 1, 4000);
  wl_rng r;
  wl_seed(&r, 1);
  /* Values near 1 and a decaying factor keep the sum finite for any number of passes. */
  for (int i = 0; i < N; i++) {
    a[i] = 0.999f + (float)wl_below(&r, 1000) * 1e-6f;
    b[i] = 1e-4f * (float)wl_below(&r, 100);
  }
  __m256 acc = _mm256_setzero_ps();
  WL_ROI_BEGIN();
  for (uint64_t k = 0; k < reps; k++) {
    acc = pass(acc);
    acc = _mm256_mul_ps(acc, _mm256_set1_ps(0.5f)); /* keeps acc bounded; once per pass */
  }
  WL_ROI_END();
  float lanes[8];
  _mm256_storeu_ps(lanes, acc);
  uint64_t sum = 0;
  for (int i = 0; i < 8; i++) {
    uint32_t bits;
    memcpy(&bits, &lanes[i], sizeof bits);
    sum = sum * 31 + bits;
  }
  wl_print("fma_chain", sum);
  return 0;
}
