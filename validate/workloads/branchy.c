/* branchy.c — a filter over random data with a data-dependent branch.
 *
 * Known bottleneck: branch mispredictions. The conditional branch on `v >= THRESHOLD` (the
 * line marked KEY) depends on random bytes, taken 50% of the time with no pattern, so about
 * half of its executions mispredict and flush the pipeline. Same filter as branchless.c,
 * which computes it without a branch; compare the two. The data (64 KiB) stays in L2.
 *
 * usage: branchy [REPS] [N] — REPS passes over N random bytes (defaults 200, 65536).
 * The region of interest (SSC marks) is the filter loop; generating the data is outside it. */
#include "workloads.h"

#define THRESHOLD 128

int main(int argc, char **argv) {
  uint64_t reps = wl_arg(argc, argv, 1, 200);
  uint64_t n = wl_arg(argc, argv, 2, 65536);
  uint8_t *data = malloc(n);
  if (!data) {
    fprintf(stderr, "branchy: out of memory\n");
    return 1;
  }
  wl_rng r;
  wl_seed(&r, 4);
  for (uint64_t i = 0; i < n; i++) data[i] = (uint8_t)(wl_next(&r) >> 56);
  uint64_t sum = 0, cnt = 0;
  WL_ROI_BEGIN();
  for (uint64_t k = 0; k < reps; k++) {
    for (uint64_t i = 0; i < n; i++) {
      uint64_t v = data[i];
      if (v >= THRESHOLD) { /* KEY: unpredictable data-dependent branch */
        /* The empty volatile asm keeps the compiler from turning this into cmov or SIMD. */
        __asm__ __volatile__("");
        sum += v;
        cnt++;
      }
    }
  }
  WL_ROI_END();
  wl_print("filter", sum * 1000003u + cnt);
  free(data);
  return 0;
}
